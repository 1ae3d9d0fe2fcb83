"""The apply configuration of a whole object: apiVersion, kind, metadata and extraction."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from kgen_runtime.apply._configuration import UNSET, ApplyConfiguration, Unset
from kgen_runtime.apply._extract import applied_fields, extract_owned
from kgen_runtime.apply._meta import ObjectMetaApplyConfiguration
from kgen_runtime.meta import KubeObject

__all__ = ["ObjectApplyConfiguration"]


class ObjectApplyConfiguration(ApplyConfiguration):
    """Base of a kind's apply configuration (client-go's ``FooApplyConfiguration``).

    ``apiVersion`` and ``kind`` are sent from the class's ``__kgen_api_version__`` and
    ``__kgen_kind__`` unless set.
    """

    __kgen_api_version__: ClassVar[str] = ""
    __kgen_kind__: ClassVar[str] = ""

    api_version: str | Unset = UNSET
    kind: str | Unset = UNSET
    metadata: ObjectMetaApplyConfiguration | Unset | None = UNSET

    def model_dump(self) -> dict[str, Any]:
        """The wire format, apiVersion and kind first (filled in from the class if unset)."""
        cls = type(self)
        return {
            "apiVersion": cls.__kgen_api_version__,
            "kind": cls.__kgen_kind__,
            **super().model_dump(),
        }

    @classmethod
    def model_extract(
        cls, obj: KubeObject, field_manager: str, subresource: str | None = None
    ) -> Self:
        """The fields of ``obj`` that ``field_manager`` owns through server-side apply (to
        ``subresource``, or the main resource), read from its ``metadata.managedFields``,
        plus its name and namespace: client-go's ``ExtractFoo``. Modify the result and apply
        it again to change exactly those fields. No Apply entry of the manager: only the
        name and namespace."""
        wire = obj.model_dump()
        fields = applied_fields(wire, field_manager, subresource)
        owned = extract_owned(wire, fields, obj) if fields is not None else {}
        config = cls.model_validate(owned)
        metadata = config.metadata
        if not isinstance(metadata, ObjectMetaApplyConfiguration):
            metadata = config.metadata = ObjectMetaApplyConfiguration()
        metadata.name = obj.metadata.name
        if obj.metadata.namespace:
            metadata.namespace = obj.metadata.namespace
        return config
