"""Unstructured objects: any kind, typed only as far as apiVersion, kind and metadata.

apimachinery's ``unstructured.Unstructured`` keeps the whole object as a map; here the common
part is typed (``obj.metadata.name`` works for every kind) and everything else lives in the
model's extras, exactly as decoded, so an unknown kind round-trips losslessly, explicit nulls
included (keys come back as apiVersion, kind, metadata, then the rest in decoded order).
Item access reads and writes the top-level keys by their wire names::

    obj = Unstructured.model_validate(manifest)     # from a dict (any keys)
    obj["spec"]["replicas"] = 3
    obj.model_dump()    # the whole object as a JSON-ready dict (a copy)

(The constructor also accepts any keyword, but type checkers only know the typed fields.)
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import model_validator

from kgen_runtime.meta._object import KubeList, KubeObject
from kgen_runtime.meta._types import ObjectMeta

__all__ = ["Unstructured", "UnstructuredList"]

_TYPED_KEYS = {"apiVersion": "api_version", "kind": "kind", "metadata": "metadata"}


class Unstructured(KubeObject):
    """An object of any kind; see the module docstring.

    ``obj[key]`` maps ``"apiVersion"``, ``"kind"`` and ``"metadata"`` to the typed attributes
    (``metadata`` is an :class:`ObjectMeta`; assigning a dict converts it) and every other key
    to the raw JSON value, which is returned without copying: mutating it mutates the object.
    """

    def __getitem__(self, key: str) -> Any:
        attr = _TYPED_KEYS.get(key)
        if attr is not None:
            return getattr(self, attr)
        extra = self.__pydantic_extra__
        if extra is None or key not in extra:
            raise KeyError(key)
        return extra[key]

    def __setitem__(self, key: str, value: Any) -> None:
        attr = _TYPED_KEYS.get(key)
        if attr == "metadata" and not isinstance(value, ObjectMeta):
            value = ObjectMeta.model_validate(value)
        if attr is not None:
            setattr(self, attr, value)
            return
        if self.__pydantic_extra__ is None:
            self.__pydantic_extra__ = {}
        self.__pydantic_extra__[key] = value

    def __delitem__(self, key: str) -> None:
        if key in _TYPED_KEYS:
            raise KeyError(f"{key} is always present on an Unstructured object")
        extra = self.__pydantic_extra__
        if extra is None or key not in extra:
            raise KeyError(key)
        del extra[key]

    def __contains__(self, key: object) -> bool:
        extra = self.__pydantic_extra__
        return key in _TYPED_KEYS or (extra is not None and key in extra)


class UnstructuredList(KubeList[Unstructured]):
    """A list of any kind; list-level unknown fields are kept like an object's.

    Items that came without ``kind`` and ``apiVersion`` (kube-apiserver writes a built-in
    list's items so) get the list's, as apimachinery's ``UnstructuredJSONScheme`` decodes a
    list (unstructured.go ``decodeToList``: the list's kind without its ``List`` suffix)."""

    @model_validator(mode="after")
    def _items_know_their_kind(self) -> Self:
        kind = (self.kind or "").removesuffix("List")
        for item in self.items:
            if not item.kind and not item.api_version:
                item.kind, item.api_version = kind, self.api_version
        return self
