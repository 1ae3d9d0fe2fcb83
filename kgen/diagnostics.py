"""Errors as values: every problem the generator finds, with where it was found.

The loader and the IR builder collect diagnostics instead of stopping at the first one, so a
user fixing a bundle sees every problem in one run. Locations read like
``crds/foo.yaml[2]: spec.versions[0].schema.openAPIV3Schema.properties.spec``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Diagnostic", "GenerateError", "Location", "format_path"]

Severity = Literal["error", "warning"]


def format_path(path: Iterable[str | int]) -> str:
    """Render a JSON path: keys joined by dots, list indexes in brackets."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = part
    return out


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the inputs: a file, the document's index in it, and a JSON path."""

    file: str
    document: int | None = None
    path: tuple[str | int, ...] = ()

    def child(self, *parts: str | int) -> Location:
        return Location(self.file, self.document, (*self.path, *parts))

    def __str__(self) -> str:
        where = self.file if self.document is None else f"{self.file}[{self.document}]"
        return f"{where}: {format_path(self.path)}" if self.path else where


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in the inputs."""

    location: Location
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


class GenerateError(Exception):
    """Generation stopped: the inputs have errors. Nothing was written."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
