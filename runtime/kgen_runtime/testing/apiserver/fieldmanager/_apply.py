"""Server-side apply through the store: the field manager's merge and ownership rules
(:mod:`kgen_runtime.testing.apiserver.fieldmanager._managed_fields`) applied atomically to the
stored object.

An apply merges its configuration into the live object (maps key by key, keyed lists and sets
item by item, other values replaced), owns the configuration's fields, fails with 409
Conflict when it would change a field another manager owns (Update or Apply) unless forced,
and removes the fields it applied before, leaves out now and nobody else owns.

Not modelled: unsetting a field by applying ``null``.
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import FieldManager
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._store import PatchFunction

__all__ = ["apply"]

Obj = dict[str, Any]


def apply(
    patch: PatchFunction,
    field_manager: FieldManager,
    info: ServedResource,
    namespace: str,
    name: str,
    subresource: str,
    config: Obj,
    *,
    force: bool,
    options: WriteOptions,
) -> Obj:
    """Apply ``config`` as ``options.field_manager``; creates the object if it does not exist.

    ``patch`` is the store's :meth:`~ObjectStore.patch` or one with webhooks around it."""
    options.applying = True

    def patcher(live: Obj) -> Obj:
        return field_manager.apply(info, live, config, options.field_manager, subresource,
                                   force=force)

    return patch(info, namespace, name, patcher, subresource, create_if_missing=True,
                       options=options)
