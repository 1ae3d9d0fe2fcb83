"""Validation and defaulting of built-in kinds, CRDs, metadata and duplicate fields."""
