"""User text in the page, shown as it is: never read as Markdown or HTML.

Messages quote what users supply — configuration keys and values, file
names, the contents of a link — so whoever sends a link or a file controls
that text. ``plain(text)`` is the one way such text reaches a pane: HTML
with every ``<``, ``>`` and ``&`` escaped, for an HTML pane (``pn.pane.HTML``),
where ``![i](http://…)``, ``[click](http://…)``, backticks and asterisks
stay characters. (A Markdown pane would make them an image the browser
fetches, a link, code or emphasis, whatever was escaped.)
"""

from __future__ import annotations

import html


def plain(text: object) -> str:
    """``text`` as HTML that a browser shows character for character (for an HTML pane, never a Markdown one)."""
    return html.escape(str(text), quote=False)
