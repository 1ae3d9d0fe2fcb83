"""Server-side sharded list and watch (KEP-5866) as kube-apiserver v1.36.2 serves it.

With the ``ShardedListAndWatch`` feature gate on, a list or watch with a ``shardSelector``
returns only the objects whose 64-bit FNV-1a hash of ``metadata.uid`` (or
``metadata.namespace``) lies in one of the selector's ranges, and a list's ``metadata``
carries ``shardInfo: {selector: <the selector as sent>}``; a malformed selector is a 500 whose
message is the parser's (``invalid shard selector: ...``). With the gate off the parameter
is ignored: the whole collection, no ``shardInfo`` (all from ../shared/REAL-CLUSTER.md,
"Server-side sharded list and watch").

The 500 is apiserver's ``ErrorToAPIStatus`` of a plain Go error (the conversion's
``fmt.Errorf``): code 500 with the message as it is and no ``reason`` (``StatusReasonUnknown``
is omitted), which is what REAL-CLUSTER.md records — not ``NewInternalError``'s
"Internal error occurred: ..." with reason ``InternalError``.

Since both hashed fields are immutable, an object never moves between shards by an update:
the server's watch filter (the same one labels use, see ``_watch.Subscription.offer``) only
ever delivers ADDED, MODIFIED and DELETED events of objects inside the ranges.

Every list and watch of a collection is logged (:class:`ShardRequest`), so tests can see what
each client asked for and whether the server applied it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kgen_runtime.shardranges import HashRange, ShardField, ShardSelectorError, fnv1a64
from kgen_runtime.shardranges import parse_selector as parse_shard_selector
from kgen_runtime.testing._status import StatusError

__all__ = ["ShardFilter", "ShardRequest", "ShardedListAndWatch"]


@dataclass(frozen=True, slots=True)
class ShardRequest:
    """One list or watch of a collection, as the server saw it.

    Attributes:
        verb: ``"list"`` or ``"watch"``.
        group: The resource's API group (``""`` for the core group).
        resource: The resource's plural.
        namespace: The namespace of the request (``""``: all).
        selector: The ``shardSelector`` sent, ``None`` without one.
        applied: Whether the server filtered by it (the gate is on and it parsed).
    """

    verb: str
    group: str
    resource: str
    namespace: str
    selector: str | None
    applied: bool


@dataclass(frozen=True, slots=True)
class ShardFilter:
    """A parsed ``shardSelector``: matches objects whose hash lies in one of ``ranges``."""

    selector: str
    field: ShardField
    ranges: tuple[HashRange, ...]

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        key = "uid" if self.field is ShardField.UID else "namespace"
        digest = fnv1a64(str(meta.get(key) or ""))
        return any(digest in hash_range for hash_range in self.ranges)


class ShardedListAndWatch:
    """The ``ShardedListAndWatch`` gate of one server, and its request log (thread-safe)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._requests: list[ShardRequest] = []

    def requested(
        self, verb: str, group: str, resource: str, namespace: str, query: dict[str, str]
    ) -> ShardFilter | None:
        """Log a list or watch; the filter to apply, ``None`` if none (gate off, no selector).

        Raises:
            StatusError: 500, the selector is malformed (gate on only).
        """
        text = query.get("shardSelector", "")
        shard: ShardFilter | None = None
        error: ShardSelectorError | None = None
        if self.enabled and text:  # "" is Go's unset string: no selector
            try:
                field, ranges = parse_shard_selector(text)
                shard = ShardFilter(text, field, tuple(ranges))
            except ShardSelectorError as err:
                error = err
        with self._lock:
            self._requests.append(ShardRequest(verb, group, resource, namespace, text or None,
                                               shard is not None))
        if error is not None:
            raise StatusError(500, "", str(error)) from None
        return shard

    def requests(self) -> list[ShardRequest]:
        """Every list and watch of a collection so far, oldest first."""
        with self._lock:
            return list(self._requests)
