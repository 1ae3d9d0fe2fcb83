"""Memory and garbage-collector tricks for bulk decoding and long-lived caches (private).

Used by the codec, the REST client and the informer cache; nothing here changes a value:

* :func:`no_gc` pauses the cyclic collector while a large payload is decoded: decoding
  allocates millions of containers, none of which can form a cycle yet, and the collector
  would walk the growing heap again and again (reference counting still frees everything).
* :func:`promote_to_oldest_generation` moves everything the collector tracks into its
  oldest generation without walking it: after a large decode with the collector paused,
  the young collections that follow would otherwise walk every decoded object once more in
  each younger generation on its way there (an informer's cache, right after its list).
* :func:`shared_fields_set` gives models with the same set fields one read-only fields set
  between them (an informer cache of thousands of objects then keeps one set per field
  combination instead of one per object, ~200-700 bytes each). ``KubeModel`` gives a model
  its own copy before any assignment or deletion; the shared set refuses in-place changes.
* The ``set_*`` slot setters build a pydantic model without ``__init__`` (decoding, copying).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel

__all__ = [
    "SharedFieldsSet",
    "no_gc",
    "promote_to_oldest_generation",
    "set_dict",
    "set_extra",
    "set_fields_set",
    "set_private",
    "shared_fields_set",
]

#: Below this many bytes a decode allocates too little for the collector to run during it,
#: and pausing it would cost more than it saves.
GC_PAUSE_MIN_BYTES = 64 * 1024


@contextmanager
def no_gc(size: int | None = None) -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (see the module docstring).

    Args:
        size: the payload's size in bytes, when known; below ``GC_PAUSE_MIN_BYTES`` the
            collector is left running.
    """
    if (size is not None and size < GC_PAUSE_MIN_BYTES) or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def promote_to_oldest_generation() -> None:
    """Move every tracked object into the collector's oldest generation, walking none.

    ``gc.freeze()`` then ``gc.unfreeze()``, whose documented effect together is exactly
    that (both only splice the generations' lists). Nothing is lost: garbage cycles among
    the promoted objects are collected by the next full collection, as they would be after
    surviving the young ones. Skipped while objects are frozen (``gc.get_freeze_count()``):
    ``unfreeze`` would release what someone froze on purpose.
    """
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()


class SharedFieldsSet(set[str]):
    """A fields set held by many models at once: read-only (an update adding nothing is
    accepted), and copies are plain sets.

    It must stay a ``set`` (pydantic-core's serialiser refuses a ``frozenset`` for
    ``exclude_unset``). ``KubeModel`` replaces it with a private copy before any
    assignment, because pydantic adds to the set through the C API, past these overrides.
    """

    __slots__ = ()

    def _read_only(self, *_: Any) -> Any:
        raise TypeError("a shared fields set is read-only; assign through the model instead")

    add = discard = remove = pop = clear = _read_only
    difference_update = intersection_update = symmetric_difference_update = _read_only
    __ior__ = __iand__ = __isub__ = __ixor__ = _read_only

    def update(self, *others: Iterable[str]) -> None:
        """Accept an update that adds nothing (idempotent marking, as ``KubeObject`` dumps
        do); refuse any real change."""
        for other in others:
            if not self.issuperset(other):
                self._read_only()

    def copy(self) -> set[str]:
        return set(self)

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        return set, (list(self),)


_shared_sets: dict[frozenset[str], SharedFieldsSet] = {}
_SHARED_SETS_LIMIT = 4096


def shared_fields_set(fields: set[str]) -> set[str]:
    """The process-wide shared, read-only equal of ``fields`` (see the module docstring).

    Meant for ``__pydantic_fields_set__`` of models that are kept for long and seldom
    changed (informer caches). Returns ``fields`` itself once ``4096`` distinct combinations
    are shared, so the pool stays bounded. Thread-safe.
    """
    key = frozenset(fields)
    shared = _shared_sets.get(key)
    if shared is None:
        if len(_shared_sets) >= _SHARED_SETS_LIMIT:
            return fields
        shared = _shared_sets.setdefault(key, SharedFieldsSet(key))
    return shared


# The slot descriptors pydantic's BaseModel declares: setting through them directly skips
# the attribute lookup object.__setattr__ repeats along the class hierarchy.
set_dict = BaseModel.__dict__["__dict__"].__set__
set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
set_private = BaseModel.__dict__["__pydantic_private__"].__set__
