"""Base classes of top-level API objects: single objects (KubeObject) and lists (KubeList).

The apimachinery counterparts are ``runtime.Object`` with an embedded ``TypeMeta`` and
``ObjectMeta``/``ListMeta``. What the bases add to :class:`KubeModel`:

* ``apiVersion``, ``kind`` and ``metadata`` (and ``items`` for lists) are always serialised
  by ``model_dump``/``model_dump_json``, even when the object was constructed or decoded
  without them: ``Foo()`` dumps its kind and the ``metadata`` mapping the caller filled in
  afterwards. Every other field keeps the "unset is omitted" rule.
* ``metadata`` always exists (default factory), so ``obj.metadata.name = "x"`` needs no check.

Generated kinds subclass these and override the ``api_version``/``kind`` defaults::

    class Foo(KubeObject):
        api_version: str = Field(default="samplecontroller.k8s.io/v1alpha1", ...)
        kind: str = "Foo"

    class FooList(KubeList[Foo]): ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Generic, Self, TypeAlias, TypeVar

import orjson
from pydantic import BeforeValidator, Field

from kgen_runtime.meta import _wire
from kgen_runtime.meta._memory import no_gc
from kgen_runtime.meta._model import KubeModel
from kgen_runtime.meta._types import ListMeta, ObjectMeta
from kgen_runtime.meta._wire import null_as_empty

__all__ = ["APIObject", "KubeList", "KubeObject", "TypeMeta", "WireEventFilter", "WireFilter"]


WireFilter: TypeAlias = Callable[[dict[str, Any]], bool]
"""Which items of a list to build (``keep=`` of :meth:`KubeList.model_from_wire_json` and
of the clients' and list-watches' ``list``): called with each item's wire document, the
``dict`` ``orjson`` decoded (camelCase keys, nothing validated), once per item as the list
page is decoded and before any model of it is built; ``False`` leaves the item out."""

WireEventFilter: TypeAlias = Callable[[str, dict[str, Any]], bool]
"""Which objects of a watch to build (``keep=`` of the clients' and list-watches' ``watch``):
called with the event's type (``ADDED``, ``MODIFIED`` or ``DELETED``) and its object's wire
document, as :data:`WireFilter` is with a list's items; ``False`` skips the event."""


class TypeMeta(KubeModel):
    """metav1.TypeMeta: just ``apiVersion`` and ``kind``, e.g. to peek at a document's type."""

    api_version: str | None = None
    kind: str | None = None


class APIObject(KubeModel):
    """Anything that travels as a top-level document: it carries ``apiVersion`` and ``kind``.

    The common base of :class:`KubeObject`, :class:`KubeList` and ``Status`` (apimachinery's
    ``runtime.Object``). An empty ``api_version``/``kind`` means "not known yet"; the codec
    fills them in from the scheme when encoding.
    """

    #: Fields serialised even when never set (names of Python attributes).
    __kgen_always__: ClassVar[frozenset[str]] = frozenset({"api_version", "kind"})

    api_version: str = ""
    kind: str = ""

    def __init__(self, /, **data: Any) -> None:
        """Construct from keyword arguments (Python or wire names) and check the schema rules."""
        super().__init__(**data)
        self._kgen_mark_always()

    # As in KubeModel: decoding does not run this __init__ (see _kgen_mark_always).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def _kgen_mark_always(self) -> None:
        """Count the ``__kgen_always__`` fields as set, so that dumps include them.

        Done on construction and again on every ``model_dump``/``model_dump_json`` rather
        than while decoding: decoded documents nearly always carry these fields already, and
        a per-object hook would cost about 1 µs (~20 % of a small object's decode). The
        marking is idempotent, so dumping a shared object from several threads is safe.
        """
        self.__pydantic_fields_set__.update(type(self).__kgen_always__)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """Serialise to the wire format (see :class:`KubeModel`), type fields always included."""
        self._kgen_mark_always()
        return super().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        """Serialise to wire-format JSON (see :class:`KubeModel`), type fields always included."""
        self._kgen_mark_always()
        return super().model_dump_json(**kwargs)

    def model_dump_wire_json(self) -> bytes:
        """Wire-format JSON bytes (see :class:`KubeModel`), type fields always included."""
        self._kgen_mark_always()
        return super().model_dump_wire_json()


class KubeObject(APIObject):
    """Base of every top-level kind: ``apiVersion``, ``kind`` and ``metadata: ObjectMeta``.

    Objects are mutable and not thread-safe; objects shared through a cache must be copied
    with ``deepcopy()`` before they are changed.
    """

    __kgen_always__: ClassVar[frozenset[str]] = frozenset({"api_version", "kind", "metadata"})

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)


ItemT = TypeVar("ItemT", bound=KubeObject)


class KubeList(APIObject, Generic[ItemT]):
    """Base of list kinds (``FooList``): ``metadata: ListMeta`` and ``items: list[ItemT]``.

    ``items`` keeps the server's order.
    """

    __kgen_always__: ClassVar[frozenset[str]] = frozenset(
        {"api_version", "kind", "metadata", "items"}
    )

    metadata: ListMeta = Field(default_factory=ListMeta)
    items: Annotated[list[ItemT], BeforeValidator(null_as_empty)] = Field(default_factory=list)

    def _kgen_mark_always(self) -> None:
        super()._kgen_mark_always()
        for item in self.items:
            item._kgen_mark_always()

    @classmethod
    def model_from_wire_json(
        cls,
        json_data: str | bytes | bytearray | memoryview,
        *,
        keep: WireFilter | None = None,
    ) -> Self:
        """:meth:`KubeModel.model_from_wire_json`; with ``keep``, only the items it accepts.

        ``keep`` is asked with each item's wire document (the ``dict`` from ``orjson``)
        before anything of the item is built: the items it rejects are left out of
        ``items`` and cost only their share of ``orjson.loads``, so a client-side filter
        (:class:`~kgen_runtime.sharding.OwnerShardedListWatch`) builds only what it keeps.
        An item that is not a JSON object is not asked about: it fails the build as before.
        """
        if keep is None:
            return super().model_from_wire_json(json_data)
        with no_gc(len(json_data)):
            document = orjson.loads(json_data)
            items = document.get("items") if type(document) is dict else None
            if type(items) is list:
                document["items"] = [
                    item for item in items if item.__class__ is not dict or keep(item)]
            return _wire.built(cls, document)
