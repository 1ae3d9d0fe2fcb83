"""Kubernetes API machinery types: the model base classes and the meta/v1 types."""

from kgen_runtime.meta._model import FieldRules, KubeModel, copy_json, no_gc

__all__ = ["FieldRules", "KubeModel", "copy_json", "no_gc"]
