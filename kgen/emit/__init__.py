"""Render the IR into the files of a generated package (one module per artefact kind)."""

from kgen.emit.package import BLACK_STABLE, iter_package_files, render_package

__all__ = ["BLACK_STABLE", "iter_package_files", "render_package"]
