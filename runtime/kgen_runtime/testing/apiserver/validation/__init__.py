"""Validation and defaulting of built-in kinds (webhook configurations among them), CRDs,
metadata and duplicate fields."""
