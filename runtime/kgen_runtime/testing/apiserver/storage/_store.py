"""The object store behind the test API server and the fake clientset (etcd + registry).

Objects are JSON-shaped dicts keyed by group/resource, namespace and name. Every write takes
the next value of one global ``resourceVersion`` counter and is recorded in a bounded history
that watches replay from and that reconstructs past states for ``Exact`` lists and paging.
Versions of one group/resource share storage, like a CRD with conversion strategy ``None``:
an object read through another version differs only in ``apiVersion`` (real conversion is
done outside the store, on storage-version objects:
:mod:`~kgen_runtime.testing.apiserver.admission._conversion`).

Contract:

* Thread-safe: one lock serialises all operations; a write and the watch events it causes are
  atomic, so a watch never misses or reorders an event.
* Objects handed in are owned by the store from then on (request bodies); objects handed out
  are the stored ones and must be treated as read-only (the HTTP and fake layers serialise
  them). :class:`~kgen_runtime.testing.ObjectTracker` copies at its public boundary.
* Errors are :class:`StatusError` with the apiserver's code, reason and message.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.encoding._go_strconv import go_parse_int
from kgen_runtime.testing.apiserver.openapi._zero_values import as_go_serialises
from kgen_runtime.testing.apiserver.storage._continue import decode_continue, encode_continue
from kgen_runtime.testing.apiserver.storage._deletion import gc_finalizers
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.testing.apiserver.storage._strategy import (
    deletes_gracefully,
    deletion_blocked,
    has_generation,
    is_builtin,
    mark_deleting,
    mark_graceful,
    next_generation,
    prepare_for_create,
    prepare_identity,
    prepare_update,
)
from kgen_runtime.testing.apiserver.storage._watch import StoreEvent, Subscription
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = [
    "ListResult", "ObjectStore", "PatchFunction", "WriteHook", "generated_name", "utc_now",
]

Obj = dict[str, Any]
_GroupResource = tuple[str, str]
_Key = tuple[str, str]

#: ``(resource, old, new, subresource, options)``; see ObjectStore's ``on_write``.
WriteHook = Callable[[ServedResource, Obj | None, Obj, str, WriteOptions], None]



class PatchFunction(Protocol):
    """:meth:`ObjectStore.patch`'s signature, for callers that may route a patch elsewhere."""

    def __call__(
        self, info: ServedResource, namespace: str, name: str, patcher: Callable[[Obj], Obj],
        subresource: str = "", *, create_if_missing: bool = False,
        options: WriteOptions | None = None,
    ) -> Obj:
        ...


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_NAME_RETRIES = 7


def utc_now() -> datetime:
    """The default wall clock: now, in UTC."""
    return datetime.now(UTC)


class ListResult:
    """One page of a list: the items, the list's resourceVersion and the paging fields."""

    __slots__ = ("continue_token", "items", "remaining", "resource_version")

    def __init__(
        self, items: list[Obj], resource_version: int, continue_token: str, remaining: int | None
    ) -> None:
        self.items = items
        self.resource_version = resource_version
        self.continue_token = continue_token
        self.remaining = remaining


class ObjectStore:
    """Objects with API-server semantics (see the module docstring).

    Args:
        history_size: How many write events are retained for watches and past reads; a
            request for an older resourceVersion gets 410 Expired.
        bookmark_interval: Seconds of silence after which a watch that allows bookmarks gets
            a BOOKMARK event.
        wall_clock: Source of ``creationTimestamp``/``deletionTimestamp``.
        clock: Time of watch bookmarks, read timeouts and ``timeoutSeconds``.
        on_write: Called with ``(resource, old, new, subresource, options)`` for each create
            (``old`` None) and update of a request, just before it is committed, to amend
            ``new`` (the field manager records managedFields there).
    """

    def __init__(
        self,
        *,
        history_size: int = 10_000,
        bookmark_interval: float = 1.0,
        wall_clock: Callable[[], datetime] = utc_now,
        clock: Clock = REAL_CLOCK,
        on_write: WriteHook | None = None,
    ) -> None:
        self._clock = clock
        self._on_write = on_write
        self._cond = threading.Condition(threading.RLock())
        self._objects: dict[_GroupResource, dict[_Key, Obj]] = {}
        self._rv = 0
        self._compacted = 0
        self._cache_start: dict[_GroupResource, int] = {}
        self._history: deque[StoreEvent] = deque()
        self._history_size = history_size
        self._watches: set[Subscription] = set()
        self._bookmark_interval = bookmark_interval
        self._wall_clock = wall_clock

    # -- reads --------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self._cond:
            return self._rv

    def stored(self, group: str, plural: str) -> list[Obj]:
        """Every stored object of one group/resource, read-only (the webhook configurations
        the admission chain matches)."""
        with self._cond:
            bucket = self._objects.get((group, plural))
            return list(bucket.values()) if bucket else []

    def get(self, info: ServedResource, namespace: str, name: str) -> Obj:
        with self._cond:
            return info.present(self._existing(info, namespace, name))

    def list_objects(
        self,
        info: ServedResource,
        namespace: str,
        where: WatchFilter,
        *,
        resource_version: str = "",
        match: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> ListResult:
        """List with the apiserver's resourceVersion semantics.

        No version (or ``"0"``) reads the latest state; a version with ``NotOlderThan`` (the
        default) reads the latest state if it is at least that new, else 504; ``Exact`` and
        continue tokens read the state as of that version, or 410 Expired once it is
        compacted, with etcd3 ``store.go`` ``interpretListError``'s messages (a token's 410
        hands back one to go on at the latest version). Items come in storage-key order.
        """
        with self._cond:
            start = ""
            if continue_token:
                read_rv, start = decode_continue(continue_token)
                if read_rv < 0:  # "continue at the latest resourceVersion"
                    read_rv = self._rv
                elif read_rv < self._compacted:
                    if not limit:
                        raise StatusError.gone(_EXPIRED)
                    raise StatusError.gone(_INCONSISTENT_CONTINUE, encode_continue(-1, start))
            elif match and not resource_version:
                raise _list_options_invalid(
                    "resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden "
                    "unless resourceVersion is provided")
            elif match not in ("", "Exact", "NotOlderThan"):
                raise _list_options_invalid(
                    "resourceVersionMatch", f'Unsupported value: "{match}": supported values: '
                    '"Exact", "NotOlderThan"')
            elif match == "Exact" and resource_version == "0":
                raise _list_options_invalid(
                    "resourceVersionMatch", 'Forbidden: resourceVersionMatch "exact" is '
                    'forbidden for resourceVersion "0"')
            elif match == "Exact":
                read_rv = self._requested_version(resource_version)
                if read_rv < self._compacted:
                    raise StatusError.gone(_EXPIRED)
            else:
                if resource_version not in ("", "0"):
                    self._requested_version(resource_version)
                read_rv = self._rv
            state = self._state_at((info.group, info.plural), read_rv)
            after = start.removeprefix("/")  # etcd3's tokens may keep the prefix's slash
            keyed = sorted((relative, key) for key in state
                           if (not namespace or key[0] == namespace)
                           and (relative := _relative_key(key, namespace)) >= after)
            items = [obj for _, key in keyed if where.matches(obj := state[key])]
            token, remaining = "", None
            if limit and len(items) > limit:
                last = items[limit - 1]["metadata"]
                token = encode_continue(read_rv, _relative_key(
                    (last.get("namespace", ""), last["name"]), namespace) + "\x00")
                remaining = len(items) - limit if where.is_everything() else None
                items = items[:limit]
            return ListResult([info.present(obj) for obj in items], read_rv, token, remaining)

    # -- writes -------------------------------------------------------------------------------

    def create(
        self,
        info: ServedResource,
        namespace: str,
        obj: Obj,
        *,
        seed: bool = False,
        options: WriteOptions | None = None,
    ) -> Obj:
        """Store a new object: 409 AlreadyExists, 500 if it carries a resourceVersion.

        ``seed`` (fixtures of a fake clientset) keeps the given status and replaces any
        resourceVersion instead of refusing it.
        """
        meta = prepare_identity(info, namespace, obj)
        if _set_resource_version(meta) and not seed:
            # storage.ErrResourceVersionSetOnCreate, a plain error: a 500 Status without
            # a reason (apiserver endpoints/handlers/responsewriters ErrorToAPIStatus).
            raise StatusError(500, "", "resourceVersion should not be set on objects to be "
                              "created")
        meta.pop("resourceVersion", None)
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise StatusError.invalid(info.group, info.kind, "", [Cause(
                    "FieldValueRequired", "Required value: name or generateName is required",
                    "metadata.name")])
            meta["name"] = generated_name(meta["generateName"])
        if info.status_subresource and not seed:
            obj.pop("status", None)
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(field, None)
        info.admit(obj, options, seed=seed)
        with self._cond:
            return self._create_locked(info, obj, options, seed=seed)

    def update(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        obj: Obj,
        subresource: str = "",
        *,
        options: WriteOptions | None = None,
    ) -> Obj:
        """Replace an object (``subresource="status"``: only its status).

        An empty resourceVersion updates unconditionally, except for a custom resource (422,
        like the apiserver's custom resource strategy); a stale one is 409 Conflict.
        """
        meta = prepare_identity(info, namespace, obj)
        with self._cond:
            old = self._existing(info, namespace, name)
            if info.custom and not meta.get("resourceVersion"):
                raise StatusError.invalid(info.group, info.plural, name, [Cause(
                    "FieldValueInvalid", "Invalid value: 0: must be specified for an update",
                    "metadata.resourceVersion")])
            return self._update_locked(info, old, obj, subresource, options)

    def patch(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        patcher: Callable[[Obj], Obj],
        subresource: str = "",
        *,
        create_if_missing: bool = False,
        options: WriteOptions | None = None,
    ) -> Obj:
        """Read, patch and write back atomically; ``patcher`` gets a private copy.

        With ``create_if_missing`` (server-side apply) an absent object is created from
        ``patcher({})``.
        """
        with self._cond:
            old = self._objects.get((info.group, info.plural), {}).get((namespace, name))
            if old is None:
                if not create_if_missing:
                    raise StatusError.not_found(info.group, info.plural, name)
                created = patcher({})
                meta = prepare_identity(info, namespace, created)
                meta.pop("resourceVersion", None)
                if meta.setdefault("name", name) != name:
                    raise StatusError.bad_request(
                        f"the name of the object ({meta['name']}) does not match the name on "
                        f"the URL ({name})")
                if info.status_subresource:
                    created.pop("status", None)
                info.admit(created, options)
                return self._create_locked(info, created, options)
            patched = patcher(copy_json(old))
            prepare_identity(info, namespace, patched)
            return self._update_locked(info, old, patched, subresource, options)

    def delete(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        options: WriteOptions | None = None,
    ) -> Obj:
        """Delete, or with finalizers mark deleted (``deletionTimestamp``) and keep the object.

        ``uid``/``resource_version`` are DeleteOptions preconditions (409 when not met).
        Returns the deleted object, or the marked one.
        """
        with self._cond:
            old = self._existing(info, namespace, name)
            meta = old["metadata"]
            # rest.BeforeDelete checks the preconditions first, naming the kind where a
            # resource would be (its GroupResource is built from the kind)
            if uid and uid != meta.get("uid"):
                raise StatusError.conflict(
                    info.group, info.kind, name,
                    f"the UID in the precondition ({uid}) does not match the UID in record "
                    f"({meta.get('uid')}). The object might have been deleted and then "
                    f"recreated")
            if resource_version and resource_version != meta.get("resourceVersion"):
                raise StatusError.conflict(
                    info.group, info.kind, name,
                    f"the ResourceVersion in the precondition ({resource_version}) does not "
                    f"match the ResourceVersion in record ({meta.get('resourceVersion')}). "
                    f"The object might have been modified")
            if options is not None and deletes_gracefully(info) and not meta.get(
                    "deletionTimestamp"):  # store.go Delete: the graceful update, then delete
                graceful = copy_json(old)
                mark_graceful(graceful, self.timestamp())
                if not options.dry_run:
                    self._write_locked(info, "MODIFIED", old, graceful, options)
                old, meta = graceful, graceful["metadata"]
            marked = copy_json(old)
            if options is not None:  # a request's DELETE, not the tracker's
                wanted = gc_finalizers(info, old, options.requested)
                if wanted is not None:
                    marked["metadata"]["finalizers"] = wanted
                    if not wanted:
                        del marked["metadata"]["finalizers"]
            if deletion_blocked(info, marked):  # store.go updateForGracefulDeletionAndFinalizers
                mark_deleting(info, marked, self.timestamp())
                if marked == old:
                    return info.present(old)
                return self._write_locked(info, "MODIFIED", old, marked, options)
            return self._write_locked(info, "DELETED", old, copy_json(old), options)

    def delete_collection(
        self,
        info: ServedResource,
        namespace: str,
        where: WatchFilter,
        *,
        options: WriteOptions | None = None,
    ) -> list[Obj]:
        """Delete every matching object (finalizers respected); returns what was deleted."""
        with self._cond:
            keys = sorted(key for key, obj in self._objects.get((info.group, info.plural),
                                                                {}).items()
                          if (not namespace or key[0] == namespace) and where.matches(obj))
            return [self.delete(info, ns, name, options=options) for ns, name in keys]

    def finalize(
        self, info: ServedResource, namespace: str, name: str, change: Callable[[Obj], None],
        *, resource_version: str = "", options: WriteOptions | None = None,
    ) -> Obj:
        """A write that bypasses the update strategy (a Namespace's ``/finalize``): ``change``
        edits a copy; a marked object nothing blocks any more is deleted. Returns the written
        object (a deleted one with the resourceVersion it had, like an update that removes
        the last finalizer). ``resource_version``, if given, must be the stored one (409)."""
        with self._cond:
            old = self._existing(info, namespace, name)
            if resource_version and resource_version != old["metadata"]["resourceVersion"]:
                raise StatusError.modified(info.group, info.plural, name)
            new = copy_json(old)
            change(new)
            if new == old:
                return info.present(old)
            if new["metadata"].get("deletionTimestamp") and not deletion_blocked(info, new):
                return _as_read(self._write_locked(info, "DELETED", old, new, options), old)
            return self._write_locked(info, "MODIFIED", old, new, options)

    def namespace_is_empty(self, namespace: str) -> bool:
        """Whether no namespaced object of any kind is left in ``namespace``."""
        with self._cond:
            return not any(key[0] == namespace for bucket in self._objects.values()
                           for key in bucket)

    # -- watches and history ------------------------------------------------------------------

    def watch(
        self,
        info: ServedResource,
        where: WatchFilter,
        *,
        resource_version: str = "",
        send_initial_events: bool = False,
        allow_bookmarks: bool = False,
        timeout: float | None = None,
    ) -> Subscription:
        """Open a watch; events are queued on the returned subscription from now on.

        Without a resourceVersion (or with ``"0"``, or with ``send_initial_events``) the
        current objects come first as ADDED events — then, with ``send_initial_events``, a
        BOOKMARK annotated ``k8s.io/initial-events-end``. From a version, the retained
        events after it are replayed; a version older than the history window yields one
        ERROR event (410 Expired) and the end of the stream; from a version not reached yet,
        events start once the store passes it — except for a streaming list
        (``send_initial_events``), which gets an ERROR event (504, ``ResourceVersionTooLarge``)
        as the real watch cache gives after waiting in vain. ``timeout`` (seconds) ends the
        stream, like ``timeoutSeconds``.
        """
        with self._cond:
            subscription = Subscription(
                self._cond, info, where, self._current_rv,
                bookmark_interval=self._bookmark_interval if allow_bookmarks else None,
                timeout=timeout,
                clock=self._clock,
            )
            if send_initial_events and resource_version not in ("", "0"):
                requested = self._requested_version(resource_version, limit=False)
                if requested > self._rv:  # the watch cache would wait, then give up
                    subscription.fail(StatusError.too_large_resource_version(requested,
                                                                             self._rv))
                    return subscription
            if send_initial_events or resource_version in ("", "0"):
                state = self._objects.get((info.group, info.plural), {})
                for key in sorted(state):
                    subscription.add_initial(state[key])
                if send_initial_events:
                    subscription.add_initial_events_end(self._rv)
            else:
                since = self._requested_version(resource_version, limit=False)
                oldest = max(self._compacted,
                             self._cache_start.get((info.group, info.plural), 0))
                if since < oldest:  # cacher/watch_cache.go getAllEventsSinceLocked
                    subscription.fail(StatusError.gone(
                        f"too old resource version: {since} ({oldest})"))
                    return subscription
                subscription.start_after(since)
                for event in self._history:
                    subscription.offer(event)
            self._watches.add(subscription)
            subscription.on_close(self._forget_watch)
            return subscription

    def start_watch_cache(self, group: str, plural: str) -> None:
        """Start the watch cache of a resource now, as kube-apiserver's cacher does when a
        resource gets storage (a custom resource's, when its CRD is served or its spec
        changes): its history begins at the current resourceVersion, and a watch from an
        older one gets 410 Expired."""
        with self._cond:
            self._cache_start[(group, plural)] = self._rv

    def compact(self) -> None:
        """Forget all history: every older resourceVersion now gets 410 Expired."""
        with self._cond:
            self._history.clear()
            self._compacted = self._rv

    def drop_watches(self) -> None:
        """End every open watch stream (the server closes the connections)."""
        for subscription in self._open_watches():
            subscription.close()

    def stall_watches(self) -> None:
        """Make every open watch silent for good while keeping its connection open."""
        for subscription in self._open_watches():
            subscription.stall()

    def _open_watches(self) -> list[Subscription]:
        with self._cond:
            return list(self._watches)

    def _forget_watch(self, subscription: Subscription) -> None:
        with self._cond:
            self._watches.discard(subscription)

    def _current_rv(self) -> int:
        return self._rv

    # -- machinery (call with the lock held) --------------------------------------------------

    def _existing(self, info: ServedResource, namespace: str, name: str) -> Obj:
        obj = self._objects.get((info.group, info.plural), {}).get((namespace, name))
        if obj is None:
            raise StatusError.not_found(info.group, info.plural, name)
        return obj

    def _create_locked(
        self, info: ServedResource, obj: Obj, options: WriteOptions | None, *,
        seed: bool = False,
    ) -> Obj:
        meta = obj["metadata"]
        existing = self._objects.get((info.group, info.plural), {})
        namespace = meta.get("namespace", "")
        retries = _GENERATE_NAME_RETRIES if meta.get("generateName") else 0
        while (namespace, meta["name"]) in existing and retries:  # RetryGenerateName
            meta["name"] = generated_name(meta["generateName"])
            retries -= 1
        if (namespace, meta["name"]) in existing:
            raise StatusError.already_exists(info.group, info.plural, meta["name"])
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self.timestamp()
        if has_generation(info):  # the kind's PrepareForCreate
            meta["generation"] = 1
        _as_stored(info, obj)  # the field manager sees the decoded Go struct
        if self._on_write is not None and options is not None:
            self._on_write(info, None, obj, "", options)
        if not seed:  # a seed keeps the status it was given
            prepare_for_create(info, obj)
        return self._write_locked(info, "ADDED", None, obj, options)

    def _update_locked(
        self,
        info: ServedResource,
        old: Obj,
        obj: Obj,
        subresource: str,
        options: WriteOptions | None,
    ) -> Obj:
        meta, old_meta = obj["metadata"], old["metadata"]
        name = old_meta["name"]
        if meta.get("name") != name:
            raise StatusError.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the "
                f"URL ({name})")
        if meta.get("resourceVersion") and meta["resourceVersion"] != old_meta[
                "resourceVersion"]:
            raise StatusError.modified(info.group, info.plural, name)
        if meta.get("uid") and meta["uid"] != old_meta["uid"]:
            raise StatusError.conflict(
                info.group, info.plural, name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
                f"{old_meta['uid']}")
        new = prepare_update(info, old, obj, subresource)
        added = set(new["metadata"].get("finalizers") or ()) - set(
            old_meta.get("finalizers") or ())
        if old_meta.get("deletionTimestamp") and added:
            raise StatusError.invalid(info.group, info.kind, name, [Cause(
                "FieldValueForbidden", f"Forbidden: no new finalizers can be added if the "
                f"object is being deleted, found new finalizers {sorted(added)}",
                "metadata.finalizers")])
        info.admit(new, options, old)
        generation = next_generation(info, old, new)
        if generation is not None:
            new["metadata"]["generation"] = generation
        new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        _as_stored(info, new)  # the field manager sees the decoded Go struct
        if self._on_write is not None and options is not None:
            self._on_write(info, old, new, subresource, options)
        if _same_but_for_managed_times(new, old):
            return info.present(old)
        if new["metadata"].get("deletionTimestamp") and not deletion_blocked(info, new):
            return _as_read(self._write_locked(info, "DELETED", old, new, options), old)
        return self._write_locked(info, "MODIFIED", old, new, options)

    def _write_locked(
        self,
        info: ServedResource,
        kind: str,
        old: Obj | None,
        new: Obj,
        options: WriteOptions | None = None,
    ) -> Obj:
        """Commit one write and fan its event out; a dry run only returns the result."""
        _as_stored(info, new)
        if options is not None and options.dry_run:
            if old is None:
                new["metadata"].pop("resourceVersion", None)
            return info.present(new)
        self._rv += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        meta = new["metadata"]
        bucket = self._objects.setdefault((info.group, info.plural), {})
        key = (meta.get("namespace", ""), meta["name"])
        if kind == "DELETED":
            del bucket[key]
        else:
            bucket[key] = new
        event = StoreEvent(self._rv, (info.group, info.plural), kind, new, old)
        self._history.append(event)
        while len(self._history) > self._history_size:
            self._compacted = self._history.popleft().rv
        for subscription in self._watches:
            subscription.offer(event)
        self._cond.notify_all()
        return info.present(new)

    def _state_at(self, group_resource: _GroupResource, rv: int) -> dict[_Key, Obj]:
        """The objects of one group/resource as of ``rv`` (undoing later retained events)."""
        state = dict(self._objects.get(group_resource, {}))
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.group_resource != group_resource:
                continue
            meta = event.object["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if event.previous is None:
                state.pop(key, None)
            else:
                state[key] = event.previous
        return state

    def _requested_version(self, text: str, *, limit: bool = True) -> int:
        try:
            requested = go_parse_int(text, "ParseUint")
        except StatusError as error:
            # storage/api_object_versioner.go ParseResourceVersion: a field.Invalid, in the
            # cacher's "invalid resource version: %v"
            raise StatusError.bad_request(
                f'invalid resource version: resourceVersion: Invalid value: "{text}": '
                f"{error.message}") from None
        if limit and requested > self._rv:
            raise StatusError.too_large_resource_version(requested, self._rv)
        return requested

    def timestamp(self) -> str:
        """The wall clock now, as an RFC 3339 timestamp in UTC."""
        return self._wall_clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_read(deleted: Obj, old: Obj) -> Obj:
    """The answer to an update that deleted the object by removing its last finalizer:
    ``store.go`` ``deleteWithoutFinalizers`` returns the updated object as it was read ("clients
    are expecting an updated object if a PUT succeeded"), so with the stored
    resourceVersion, not the deletion's."""
    return {**deleted, "metadata": {**deleted["metadata"],
                                    "resourceVersion": old["metadata"]["resourceVersion"]}}


def _as_stored(info: ServedResource, obj: Obj) -> None:
    """An object as kube-apiserver stores and serialises it: a built-in one is a Go struct,
    whose JSON shows its zero-valued fields and leaves out empty optional maps and lists; a
    custom resource's metadata is an ObjectMeta
    (:mod:`kgen_runtime.testing.apiserver.openapi._zero_values`)."""
    as_go_serialises(info.group, info.version, info.kind, obj, custom=not is_builtin(info))


def _same_but_for_managed_times(new: Obj, old: Obj) -> bool:
    """Whether an update changes nothing, its managedFields ``time`` values aside: such a
    write is a no-op (no new resourceVersion, no event): k8s.io/apiserver
    pkg/registry/rest/update.go ``IgnoreManagedFieldsTimestampsTransformer`` reverts the
    timestamps "if the non-managed parts of the object are equivalent"."""
    if new == old:
        return True
    new_meta, old_meta = new.get("metadata") or {}, old.get("metadata") or {}
    if {**new, "metadata": None} != {**old, "metadata": None} or {
            **new_meta, "managedFields": None} != {**old_meta, "managedFields": None}:
        return False
    return bool(_untimed(new_meta.get("managedFields")) == _untimed(old_meta.get("managedFields")))


def _untimed(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    return [{k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict)
            else entry for entry in entries]


def _set_resource_version(meta: Obj) -> bool:
    """Whether a create carries a resourceVersion the storage refuses: etcd3 ``store.Create``
    refuses one that ``APIObjectVersioner.ObjectResourceVersion`` parses (``strconv.ParseUint``)
    to non-zero, then ``PrepareObjectForStorage`` clears whatever is left ("", "0", "abc")."""
    text = meta.get("resourceVersion")
    return isinstance(text, str) and text.isascii() and text.isdigit() and int(text) != 0


def generated_name(prefix: str) -> str:
    """``prefix``, cut to 58 characters, plus five random ones: apiserver
    pkg/storage/names/generate.go (``MaxGeneratedNameLength`` = 63 - 5)."""
    return prefix[:_MAX_GENERATED_PREFIX] + "".join(random.choices(_NAME_ALPHABET, k=5))


_MAX_GENERATED_PREFIX = 58


def _list_options_invalid(field: str, message: str) -> StatusError:
    reason = "FieldValueForbidden" if message.startswith("Forbidden") else (
        "FieldValueNotSupported")
    return StatusError.invalid("meta.k8s.io", "ListOptions", "", [Cause(reason, message, field)])


def _relative_key(key: _Key, namespace: str) -> str:
    """An object's storage key below the listed prefix: ``name`` within a namespace (or for
    a cluster-scoped kind), ``namespace/name`` across namespaces."""
    return key[1] if namespace or not key[0] else f"{key[0]}/{key[1]}"


#: etcd3 ``store.go``'s answers for a list below the compacted revision.
_EXPIRED = "The resourceVersion for the provided list is too old."
_INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list.")
