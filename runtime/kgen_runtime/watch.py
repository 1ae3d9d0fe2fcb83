"""Watch events and the watch stream contract (apimachinery's watch.Interface)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

__all__ = ["OBJECT_EVENT_TYPES", "EventType", "WatchEvent", "Watcher"]

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]

OBJECT_EVENT_TYPES: frozenset[str] = frozenset({"ADDED", "MODIFIED", "DELETED"})
"""The event types whose object is one of the watched collection (a ``BOOKMARK`` carries
only a resourceVersion, an ``ERROR`` the server's ``Status``)."""

T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[T_co]):
    """One event of a watch. For ``ERROR`` the object is the server's ``Status``."""

    type: EventType
    object: T_co


class Watcher(Protocol[T_co]):
    """An open watch: iterate for events; the iteration ends when the stream ends.

    ``stop()`` may be called from any thread and makes the iteration end promptly.
    """

    def __iter__(self) -> Iterator[WatchEvent[T_co]]: ...

    def stop(self) -> None: ...
