"""Classes by name: the one registry helper of ``targets`` and ``samplers``.

A class registers under its ``registry_name``; ``names()`` lists them in the
order they were added (the order menus show them), ``cls(name)`` finds one
and says which names there are when it does not exist. It lives here, on the
lowest floor, so that ``samplers`` (which builds on ``targets``) can use it
without a package importing a floor above it.
"""

from __future__ import annotations


class Registry:
    """An ordered name → class table for one kind of thing (``"target"``, ``"sampler"``)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._classes: dict[str, type] = {}

    def add(self, *classes: type) -> None:
        """Register each class under its ``registry_name``."""
        for cls in classes:
            self._classes[cls.registry_name] = cls

    def names(self) -> list[str]:
        """The registered names, in the order they were added."""
        return list(self._classes)

    def cls(self, name: str) -> type:
        """The class registered under ``name``."""
        try:
            return self._classes[name]
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; available: {', '.join(self._classes)}") from None
