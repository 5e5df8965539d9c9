"""A file input that refuses oversize files in the browser, before a byte is sent.

Panel's ``FileInput`` sends the whole file in one websocket message; a file
over the server's message limit closes the session ("1009 message too big").
``LimitedFileInput`` reads the file's size in the browser first: a file over
``max_bytes`` is refused there (``refused`` says so, with the size and the
limit), and only a file under it is read and sent, as base64, in ``upload``
(``{"name", "data", "serial"}``; the serial makes the same file chosen twice
a new upload).
"""

from __future__ import annotations

import param
from panel.custom import JSComponent


class LimitedFileInput(JSComponent):
    """``<input type=file>`` with a size limit checked in the browser."""

    accept = param.String("", doc="File types offered by the browser's dialog, e.g. '.uai,.csv'.")
    max_bytes = param.Integer(10_000_000, doc="Largest file the browser sends (bytes).")
    upload = param.Dict(default={}, doc="The last file sent: name, data (base64) and a serial number.")
    refused = param.Dict(default={}, doc="The last file refused in the browser: name, size and a serial number.")

    _esm = """
    export function render({ model, el }) {
      const input = document.createElement("input")
      input.type = "file"
      input.accept = model.accept
      let serial = 0
      input.addEventListener("change", () => {
        const file = input.files[0]
        if (!file) { return }
        serial += 1
        if (file.size > model.max_bytes) {
          model.refused = {name: file.name, size: file.size, serial: serial}
          input.value = ""
          return
        }
        const reader = new FileReader()
        reader.onload = () => {
          const data = String(reader.result)
          model.upload = {name: file.name, data: data.slice(data.indexOf(",") + 1), serial: serial}
          input.value = ""
        }
        reader.readAsDataURL(file)
      })
      model.on("accept", () => { input.accept = model.accept })
      el.appendChild(input)
    }
    """
