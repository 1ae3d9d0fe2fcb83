"""``metadata.managedFields``: who set which fields, recorded on every write as the API server's
field manager does (k8s.io/apiserver ``managedfields``, on structured-merge-diff).

Every write is an ``Update`` by its manager — the ``fieldManager`` parameter, else the
User-Agent up to its first ``/`` — or an ``Apply`` (server-side apply). An entry is kept per
manager, operation, apiVersion (not for appliers) and subresource:

* an update takes the fields it adds or changes from everyone (an update never conflicts)
  and adds them to its entry; the fields it removes leave every entry; the entry's ``time``
  moves only when the write set something;
* an apply owns exactly the fields of its configuration; it conflicts (409) with every other
  manager owning a field whose value it changes, unless forced, which takes those fields
  over; fields it applied before, dropped now and nobody else owns are removed;
* an entry left with no fields is dropped; beyond 10 Update entries the oldest are merged
  into ``ancient-changes``; the server-owned metadata (name, namespace, uid,
  resourceVersion, generation, creationTimestamp, managedFields) is never recorded.

A write whose body carries ``managedFields`` replaces them (``[]`` or ``[{}]`` clears them);
one without keeps the stored ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.fieldmanager._fieldsets import (
    FieldSet,
    compare,
    describe,
    field_set,
    from_fields_v1,
    merge,
    remove,
    to_fields_v1,
)
from kgen_runtime.testing.apiserver.openapi._field_types import (
    FieldType,
    deduced_types,
    schema_types,
)
from kgen_runtime.testing.apiserver.openapi._openapi import builtin_field_types
from kgen_runtime.testing.apiserver.openapi._zero_values import empty_object
from kgen_runtime.testing.apiserver.storage._resources import ServedResource
from kgen_runtime.testing.apiserver.storage._strategy import is_builtin

__all__ = ["FieldManager", "manager_from_user_agent"]

Obj = dict[str, Any]

#: What the field manager never records (``stripMetaManager``).
_SERVER_OWNED: frozenset[tuple[str, ...]] = frozenset({
    ("f:apiVersion",), ("f:kind",), ("f:metadata",),
    *(("f:metadata", f"f:{name}") for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion")),
})
_MAX_MANAGER_LENGTH = 128
_MAX_UPDATE_MANAGERS = 10
_ANCIENT_CHANGES = "ancient-changes"


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of a write without ``fieldManager``: the User-Agent before its first ``/``
    (printable characters, at most 128 bytes), as kube-apiserver's ``prefixFromUserAgent``."""
    prefix = "".join(ch for ch in user_agent.split("/", 1)[0] if ch.isprintable())
    while len(prefix.encode()) > _MAX_MANAGER_LENGTH:
        prefix = prefix[:-1]
    return prefix


@dataclass(frozen=True, slots=True, order=True)
class _Key:
    """What distinguishes two entries (``BuildManagerIdentifier``): appliers share one entry
    whatever the apiVersion."""

    manager: str
    operation: str
    api_version: str
    subresource: str


@dataclass(frozen=True, slots=True)
class _Entry:
    fields: FieldSet
    api_version: str
    time: str | None


_Managed = dict[_Key, _Entry]


class FieldManager:
    """Records and enforces field ownership. Stateless: ownership lives in the objects.

    Args:
        now: The wall clock as an RFC 3339 timestamp (seconds), for entries' ``time``.
        types_for: The shape of a resource's objects (list types, map keys): by default a
            CRD's schema, a built-in kind's schema in the bundled OpenAPI documents, else
            (a resource served without any schema) granular maps and atomic lists.
    """

    def __init__(
        self, now: Callable[[], str],
        types_for: Callable[[ServedResource], FieldType] | None = None,
    ) -> None:
        self._now = now
        self._types = types_for or self._cached_default_types
        #: Root types by ``id`` of their schema (kept, so that the id is not reused).
        self._roots: dict[int, tuple[Mapping[str, Any], FieldType]] = {}

    def _cached_default_types(self, info: ServedResource) -> FieldType:
        """The default ``types_for``, one root per schema: node types are built once."""
        if info.schema is None:
            return builtin_field_types(info.group, info.version, info.kind) or deduced_types()
        cached = self._roots.get(id(info.schema))
        if cached is None or cached[0] is not info.schema:
            cached = self._roots[id(info.schema)] = (info.schema, schema_types(info.schema))
        return cached[1]

    def update(
        self, info: ServedResource, old: Obj | None, new: Obj, manager: str, subresource: str,
        *, api_version: str = "", admitted: tuple[Obj, Obj] | None = None,
        convert: Callable[[Obj, str], tuple[Obj, ServedResource]] | None = None,
    ) -> None:
        """Record in ``new``'s metadata a create (``old`` None) or update by ``manager``.

        ``api_version`` is the version the request used (default ``info``'s): the entry is
        recorded under it, as the handler's field manager works in the request's version.
        With ``convert`` (an object to another version of the resource, and that version),
        ``old`` and ``new``
        are in that version and every other manager loses what changed as seen in its own
        entry's version (structured-merge-diff ``Updater.update`` compares the live and new
        objects converted to each manager's version); without, all versions are taken to
        differ only in ``apiVersion``.

        ``admitted`` is the object the request carried and what the mutating webhooks made of
        it: the fields they added are nobody's, since kube-apiserver's create and update
        handlers run the field manager on the request before admission
        (endpoints/handlers/create.go ``UpdateNoErrors`` before ``admit``; update.go's
        transformers, the field manager before the mutating admission)."""
        api_version = api_version or info.api_version
        managed = _live_or_new(old, new, subresource)
        types = self._types(info)
        # a create is compared with the kind's new empty object (handlers/create.go:
        # ``liveObj := scope.Creater.New(scope.Kind)`` for ``FieldManager.UpdateNoErrors``), whose
        # zero-valued structs (a Namespace's ``spec: {}``) nobody sets
        base = old if old is not None else {
            **empty_object(info.group, info.version, info.kind, custom=not is_builtin(info)),
            "apiVersion": new.get("apiVersion"), "kind": new.get("kind")}
        change = compare(_without_managed(base), _without_managed(new), types)
        changed = change.changed()
        versions: dict[str, FieldSet] = {api_version: changed | change.removed}
        for key, entry in list(managed.items()):
            if entry.api_version not in versions:
                versions[entry.api_version] = (
                    versions[api_version] if convert is None or old is None
                    else self._changed_in(old, new, convert, entry.api_version))
            managed[key] = replace(entry, fields=entry.fields - versions[entry.api_version])
        taken = frozenset(path for path in (changed - change.removed) - _SERVER_OWNED
                          if _owned_by_write(info, subresource, path))
        if admitted is not None:
            request, mutated = (_without_managed(obj) for obj in admitted)
            taken -= frozenset(compare(request, mutated, types).added)
        if taken:
            key = _Key(manager, "Update", api_version, subresource)
            previous = managed.get(key)
            # a /scale write's entry is rebuilt by the ScaleHandler (handlers/fieldmanager
            # scalehandler.go ToParent), which carries no time over
            managed[key] = _Entry(taken | (previous.fields if previous else frozenset()),
                                  api_version, None if subresource == "scale" else self._now())
        _store(new, _cap_update_managers(managed))

    def _changed_in(self, old: Obj, new: Obj,
                    convert: Callable[[Obj, str], tuple[Obj, ServedResource]],
                    api_version: str) -> FieldSet:
        """The fields an update changed or removed, as seen in ``api_version``."""
        (old_there, info), (new_there, _) = convert(old, api_version), convert(new, api_version)
        change = compare(_without_managed(old_there), _without_managed(new_there),
                         self._types(info))
        return change.changed() | change.removed

    def apply(
        self,
        info: ServedResource,
        live: Obj,
        config: Obj,
        manager: str,
        subresource: str,
        *,
        force: bool,
    ) -> Obj:
        """``config`` applied by ``manager`` to ``live`` (``{}`` when creating): the merged
        object with its managedFields. Raises 409 Conflict or 400 for a bad configuration."""
        _check_config(info, config)
        types = self._types(info)
        managed = _decode((live.get("metadata") or {}).get("managedFields"))
        key = _Key(manager, "Apply", "", subresource)
        last = managed.get(key)
        plain_live = _without_managed(live)
        applied = frozenset(path for path in field_set(config, types) - _SERVER_OWNED
                            if _owned_by_write(info, subresource, path))
        merged: Obj = merge(plain_live, config, types)
        managed[key] = _Entry(applied, info.api_version, last.time if last else None)
        if last is not None:
            owned = frozenset().union(*(entry.fields for entry in managed.values()))
            merged = remove(merged, [path for path in last.fields - applied
                                     if not _holds(path, owned)], types)
        change = compare(plain_live, merged, types)
        changed = change.changed()
        conflicts = sorted(
            (other, path) for other, entry in managed.items() if other != key
            for path in entry.fields & changed)
        if conflicts and not force:
            raise _conflict_error(conflicts)
        for other, entry in list(managed.items()):
            if other != key:
                managed[other] = replace(entry, fields=entry.fields - changed - change.removed)
        # managedFieldsUpdater.Apply stamps the time only when the object changed: an apply
        # of what is already there gets (or keeps) an entry without a new time
        if merged != plain_live:
            managed[key] = replace(managed[key], time=self._now())
        _store(merged, managed)
        return merged


def _cap_update_managers(managed: _Managed) -> _Managed:
    """Merge the oldest Update entries into one ``ancient-changes`` entry per apiVersion until
    at most 10 are left (``capManagersManager``)."""
    updaters = sorted((key for key, entry in managed.items()
                       if key.operation == "Update" and entry.fields),
                      key=lambda key: (managed[key].time or "", key.manager))
    excess = len(updaters) - _MAX_UPDATE_MANAGERS
    for key in updaters:
        if excess <= 0:
            break
        entry = managed[key]
        bucket = _Key(_ANCIENT_CHANGES, "Update", entry.api_version, "")
        if key == bucket:
            continue
        previous = managed.pop(bucket, None)
        del managed[key]
        if previous is not None:
            entry = replace(entry, fields=entry.fields | previous.fields)
            excess -= 1
        managed[bucket] = entry
    return managed


def _owned_by_write(info: ServedResource, subresource: str, path: tuple[str, ...]) -> bool:
    """Whether a write (apply or update) owns ``path``: not status through the main resource
    of a kind with a status subresource, only status and metadata through ``/status`` — the
    strategies' ``GetResetFields``, which the handler's ``resetFieldsFilter`` drops from the
    manager's set (a Namespace's defaulted ``status.phase`` is nobody's)."""
    if subresource == "status":
        return path[0] in ("f:status", "f:metadata")
    return not (info.status_subresource and path[0] == "f:status")


def _holds(path: tuple[str, ...], owned: FieldSet) -> bool:
    """Whether ``path`` or something below it is owned."""
    return any(field[:len(path)] == path for field in owned)


def _check_config(info: ServedResource, config: Obj) -> None:
    group_version = str(config.get("apiVersion") or "")
    group, _, version = group_version.rpartition("/")
    kind = str(config.get("kind") or "")
    if (group, version, kind) != (info.group, info.version, info.kind):
        raise StatusError.bad_request(f"invalid object type: {group}/{version}, Kind={kind}")
    if (config.get("metadata") or {}).get("managedFields") is not None:
        raise StatusError.bad_request("metadata.managedFields must be nil")


def _live_or_new(old: Obj | None, new: Obj, subresource: str) -> _Managed:
    """The managed fields a write starts from (``decodeLiveOrNew``)."""
    live = (old or {}).get("metadata") or {}
    sent = (new.get("metadata") or {}).get("managedFields")
    if subresource or sent is None:
        return _decode(live.get("managedFields"))
    if sent == [] or sent == [{}]:
        return {}
    return _decode(sent) or _decode(live.get("managedFields"))


def _without_managed(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _decode(entries: Any) -> _Managed:
    managed: _Managed = {}
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        operation = str(entry.get("operation", ""))
        api_version = str(entry.get("apiVersion", ""))
        key = _Key(str(entry.get("manager", "")), operation,
                   "" if operation == "Apply" else api_version,
                   str(entry.get("subresource", "")))
        managed[key] = _Entry(from_fields_v1(entry.get("fieldsV1")), api_version,
                              entry.get("time"))
    return managed


def _store(obj: Obj, managed: _Managed) -> None:
    """Encode ``managed`` into ``obj``'s metadata, sorted as the server sorts the entries."""
    entries = [(key, entry) for key, entry in managed.items() if entry.fields]
    entries.sort(key=lambda item: (item[0].operation, item[1].time or "", item[0].manager,
                                   item[1].api_version, item[0].subresource))
    meta = obj.setdefault("metadata", {})
    if not entries:
        meta.pop("managedFields", None)
        return
    meta["managedFields"] = [
        {"manager": key.manager, "operation": key.operation, "apiVersion": entry.api_version,
         **({"time": entry.time} if entry.time else {}), "fieldsType": "FieldsV1",
         "fieldsV1": to_fields_v1(entry.fields),
         **({"subresource": key.subresource} if key.subresource else {})}
        for key, entry in entries
    ]


def _conflict_error(conflicts: list[tuple[_Key, tuple[str, ...]]]) -> StatusError:
    """409 as ``NewConflictError``: one cause per field, the message grouped by manager."""
    causes = [Cause("FieldManagerConflict", f"conflict with {_print(key)}", describe(path))
              for key, path in conflicts]
    if len(causes) == 1:
        message = f"Apply failed with 1 conflict: {causes[0].message}: {causes[0].field}"
    else:
        lines: list[str] = []
        for printed in sorted({_print(key) for key, _ in conflicts}):
            lines.append(f"conflicts with {printed}:")
            lines += [f"- {describe(path)}" for key, path in conflicts if _print(key) == printed]
        message = f"Apply failed with {len(causes)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": [c.as_json() for c in causes]})


def _print(key: _Key) -> str:
    """A manager as conflict messages name it (``printManager``)."""
    printed = json.dumps(key.manager)
    if key.subresource:
        printed += f" with subresource {json.dumps(key.subresource)}"
    if key.operation == "Update":
        printed += f" using {key.api_version}"
    return printed
