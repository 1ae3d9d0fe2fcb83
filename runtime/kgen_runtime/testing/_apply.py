"""Server-side apply with field ownership among appliers (a test-sized structured-merge-diff).

Each applier (``fieldManager``) owns the leaf fields of its last applied configuration; maps
are recursed, lists and scalars are leaves. An apply:

* fails with 409 Conflict (one ``FieldManagerConflict`` cause per field) when it would change
  a field another applier owns, unless ``force=true``, which takes the field over;
* merges the configuration into the live object (maps key by key, other values replace);
* removes the fields this applier applied before, left out now, and no one else owns.

Not modelled: ownership taken by non-apply writes (update, patch), ``managedFields`` in the
object, merging ``listType=map``/``set`` lists by key, and unsetting through ``null``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from kgen_runtime.testing._patch import apply_merge, field_at
from kgen_runtime.testing._resources import ServedResource, WriteOptions
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing._store import ObjectStore

__all__ = ["FieldManagers"]

Obj = dict[str, Any]
Path = tuple[str, ...]

_IDENTITY: frozenset[Path] = frozenset({
    ("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace"),
})


class FieldManagers:
    """Who applied which fields of each object, and applies that respect it. Thread-safe."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, frozenset[Path]]] = {}

    def apply(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        subresource: str,
        config: Obj,
        manager: str,
        *,
        force: bool,
        options: WriteOptions,
    ) -> Obj:
        """Apply ``config`` as ``manager``; creates the object if it does not exist."""
        fields = frozenset(_leaves(config)) - _IDENTITY
        decided: dict[str, frozenset[Path]] = {}

        def patcher(live: Obj) -> Obj:
            uid = str((live.get("metadata") or {}).get("uid", ""))
            owners = dict(self._owners.get(uid, {}))
            conflicts = sorted(
                (path, other)
                for other, owned in owners.items() if other != manager
                for path in fields & owned if field_at(live, path) != field_at(config, path)
            )
            if conflicts and not force:
                raise _conflict(info, name, conflicts)
            for _, other in conflicts:
                owners[other] = owners[other] - fields
            others = frozenset().union(*(o for m, o in owners.items() if m != manager))
            result: Obj = apply_merge(live, config)
            for path in owners.get(manager, frozenset()) - fields - others:
                if not _holds_any(path, fields):
                    _remove(result, path)
            owners[manager] = fields
            decided.update({m: owned for m, owned in owners.items() if owned})
            return result

        with self._lock:
            obj = self._store.patch(info, namespace, name, patcher, subresource,
                                    create_if_missing=True, options=options)
            if not options.dry_run:
                self._owners[str(obj["metadata"]["uid"])] = decided
        return obj


def _conflict(info: ServedResource, name: str, conflicts: list[tuple[Path, str]]) -> StatusError:
    causes = [Cause("FieldManagerConflict", f'conflict with "{manager}"', _render(path))
              for path, manager in conflicts]
    plural = "conflict" if len(causes) == 1 else "conflicts"
    listing = "\n".join(f"- {c.message}: {c.field}" for c in causes)
    details: Obj = {"name": name, **({"group": info.group} if info.group else {}),
                    "kind": info.plural, "causes": [c.as_json() for c in causes]}
    return StatusError(409, "Conflict", f"Apply failed with {len(causes)} {plural}:\n{listing}",
                       details)


def _leaves(value: Any, path: Path = ()) -> Iterator[Path]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif path:
        yield path


def _holds_any(path: Path, fields: frozenset[Path]) -> bool:
    """Whether ``path`` leads to one of ``fields`` (a map applied empty before, filled now)."""
    return any(field[:len(path)] == path for field in fields)


def _remove(obj: Obj, path: Path) -> None:
    """Delete ``path`` and any map it leaves empty."""
    parents: list[Obj] = []
    current: Any = obj
    for key in path[:-1]:
        if not isinstance(current, dict) or not isinstance(current.get(key), dict):
            return
        parents.append(current)
        current = current[key]
    current.pop(path[-1], None)
    for parent, key in zip(reversed(parents), reversed(path[:-1]), strict=True):
        if parent[key]:
            break
        del parent[key]


def _render(path: Path) -> str:
    return "".join(f".{key}" for key in path)
