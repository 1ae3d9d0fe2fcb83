"""Checked inputs → the IR: CRDs and OpenAPI v3 documents into group/version modules."""

from kgen.ir_builder._package import build_package

__all__ = ["build_package"]
