"""Options of list and watch calls (metav1.ListOptions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ListOptions"]


@dataclass(frozen=True, slots=True)
class ListOptions:
    """Query parameters of list and watch; ``None`` leaves a parameter out."""

    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    resource_version_match: Literal["Exact", "NotOlderThan"] | None = None
    limit: int | None = None
    continue_: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool | None = None
    send_initial_events: bool | None = None
    #: KEP-5866's ``shardSelector`` (alpha in v1.36): hash ranges of the objects to return,
    #: e.g. ``kgen_runtime.sharding.format_selector(ranges)``. A server without the
    #: ``ShardedListAndWatch`` gate ignores it (no ``metadata.shardInfo`` in the list).
    shard_selector: str | None = None

    def to_query(self) -> tuple[tuple[str, str], ...]:
        """The wire query parameters, in a fixed order."""
        pairs: list[tuple[str, str]] = []
        for name, value in (
            ("labelSelector", self.label_selector),
            ("fieldSelector", self.field_selector),
            ("resourceVersion", self.resource_version),
            ("resourceVersionMatch", self.resource_version_match),
            ("limit", self.limit),
            ("continue", self.continue_),
            ("timeoutSeconds", self.timeout_seconds),
            ("allowWatchBookmarks", self.allow_watch_bookmarks),
            ("sendInitialEvents", self.send_initial_events),
            ("shardSelector", self.shard_selector),
        ):
            if value is None:
                continue
            pairs.append((name, str(value).lower() if isinstance(value, bool) else str(value)))
        return tuple(pairs)
