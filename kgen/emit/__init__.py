"""Render the IR into the files of a generated package (one module per artefact kind)."""

from kgen.emit.package import render_package

__all__ = ["render_package"]
