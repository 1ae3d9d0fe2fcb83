"""Stand-ins for Kubernetes objects and a scripted ListerWatcher for the cache tests."""

from __future__ import annotations

import asyncio
import copy
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgen_runtime.cache import AsyncListWatch, DeletedFinalStateUnknown
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.watch import EventType, WatchEvent

WAIT = 10.0
"""Real-time bound for every wait in the tests."""

CHANGES: tuple[EventType, ...] = ("ADDED", "MODIFIED", "DELETED")


@dataclass
class Meta:
    name: str
    namespace: str | None = None
    resource_version: str | None = None
    labels: dict[str, str] | None = None
    managed_fields: list[Any] | None = None
    annotations: dict[str, str] | None = None


@dataclass
class Obj:
    """A KubeObject-like value: ``.metadata`` plus a payload, with ``deepcopy()``."""

    metadata: Meta
    spec: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def deepcopy(self) -> Obj:
        return copy.deepcopy(self)


def obj(
    name: str,
    namespace: str | None = "ns",
    rv: str | None = "1",
    spec: str = "",
    labels: dict[str, str] | None = None,
) -> Obj:
    return Obj(Meta(name, namespace, rv, labels), spec)


@dataclass
class ListMeta:
    resource_version: str | None = None
    continue_: str | None = None


@dataclass
class Page:
    items: Sequence[Obj]
    metadata: ListMeta | None


def page(rv: str, *items: Obj, cont: str | None = None) -> Page:
    return Page(list(items), ListMeta(rv, cont))


def bookmark(rv: str, initial_events_end: bool = False) -> WatchEvent[Obj]:
    annotations = {"k8s.io/initial-events-end": "true"} if initial_events_end else None
    return WatchEvent("BOOKMARK", Obj(Meta("", None, rv, annotations=annotations)))


def event(kind: EventType, o: Any) -> WatchEvent[Any]:
    return WatchEvent(kind, o)


class FakeWatcher:
    """An open watch fed by the test: ``push`` events, ``end`` to close it from the server."""

    def __init__(self, options: ListOptions) -> None:
        self.options = options
        self._cond = threading.Condition()
        self._events: deque[WatchEvent[Any]] = deque()
        self._ended = False
        self._error: BaseException | None = None
        self.stopped = threading.Event()

    def push(self, *events: WatchEvent[Any]) -> None:
        with self._cond:
            self._events.extend(events)
            self._cond.notify_all()

    def end(self) -> None:
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        """Break the stream: iteration raises ``error`` after the queued events."""
        with self._cond:
            self._error = error
            self._ended = True
            self._cond.notify_all()

    def stop(self) -> None:
        self.stopped.set()
        self.end()

    def __iter__(self) -> Iterator[WatchEvent[Any]]:
        while True:
            with self._cond:
                while not self._events and not self._ended:
                    self._cond.wait()
                if self.stopped.is_set():
                    return
                if not self._events:
                    if self._error is not None:
                        raise self._error
                    return
                ev = self._events.popleft()
            yield ev


ListResult = Page | BaseException
WatchResult = BaseException | None


class FakeListWatch:
    """Answers ``list`` from a script of pages/errors and opens :class:`FakeWatcher` s.

    ``lists`` is consumed in order (each item a page or an exception to raise); a list call
    past the end repeats ``default_list``. ``watch_errors`` is consumed by watch calls before
    they open watchers. Every call's options are recorded.
    """

    def __init__(
        self,
        lists: Sequence[ListResult] = (),
        default_list: Page | None = None,
        on_list: Callable[[ListOptions], None] | None = None,
    ) -> None:
        self._cond = threading.Condition()
        self._lists: deque[ListResult] = deque(lists)
        self.default_list = default_list or page("1")
        self.watch_errors: deque[BaseException] = deque()
        self.list_calls: list[ListOptions] = []
        self.watch_calls: list[ListOptions] = []
        self.watchers: list[FakeWatcher] = []
        self._on_list = on_list

    def script_lists(self, *results: ListResult) -> None:
        with self._cond:
            self._lists.extend(results)

    def list(self, options: ListOptions) -> Page:
        with self._cond:
            self.list_calls.append(options)
            result = self._lists.popleft() if self._lists else self.default_list
            self._cond.notify_all()
        if self._on_list is not None:
            self._on_list(options)
        if isinstance(result, BaseException):
            raise result
        return result

    def watch(self, options: ListOptions) -> FakeWatcher:
        with self._cond:
            self.watch_calls.append(options)
            if self.watch_errors:
                err = self.watch_errors.popleft()
                self._cond.notify_all()
                raise err
            watcher = FakeWatcher(options)
            self.watchers.append(watcher)
            self._cond.notify_all()
            return watcher

    def wait_for(self, predicate: Callable[[], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(predicate, WAIT), "condition not reached in time"

    def wait_for_watchers(self, count: int) -> FakeWatcher:
        self.wait_for(lambda: len(self.watchers) >= count)
        return self.watchers[count - 1]

    def wait_for_lists(self, count: int) -> None:
        self.wait_for(lambda: len(self.list_calls) >= count)


class AsyncFakeWatcher:
    """A :class:`FakeWatcher` read by a coroutine: each event is awaited from a thread, so a
    watch waiting for the test's next push never blocks the event loop."""

    def __init__(self, watcher: FakeWatcher) -> None:
        self.watcher = watcher

    def stop(self) -> None:
        self.watcher.stop()

    async def __aiter__(self) -> AsyncIterator[WatchEvent[Any]]:
        events = iter(self.watcher)
        while (ev := await asyncio.to_thread(next, events, None)) is not None:
            yield ev


def as_async(lw: FakeListWatch) -> AsyncListWatch[Any]:
    """``lw`` behind the async lister-watcher protocol (same script, same recorded calls)."""

    async def list_page(options: ListOptions) -> Page:
        return lw.list(options)

    async def watch(options: ListOptions) -> AsyncFakeWatcher:
        return AsyncFakeWatcher(lw.watch(options))

    return AsyncListWatch(list_page, watch)


def eventually(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    """Wait (bounded) for a condition nobody signals, re-checking it every millisecond."""
    pause = threading.Event()
    for _ in range(int(timeout / 0.001)):
        if predicate():
            return
        pause.wait(0.001)
    raise AssertionError("condition not reached in time")


class Recorder:
    """A handler that records what it receives, as (kind, name, resourceVersion) triples."""

    def __init__(self, block: threading.Event | None = None) -> None:
        self.events: list[tuple[str, str, str | None]] = []
        self.initial_flags: list[bool] = []
        self._cond = threading.Condition()
        self._block = block

    def _record(self, kind: str, o: Any) -> None:
        if self._block is not None:
            assert self._block.wait(WAIT)
        if isinstance(o, DeletedFinalStateUnknown):
            kind, o = "tombstone", o.obj
        with self._cond:
            self.events.append((kind, o.metadata.name, o.metadata.resource_version))
            self._cond.notify_all()

    def on_add(self, o: Any, is_in_initial_list: bool) -> None:
        self.initial_flags.append(is_in_initial_list)
        self._record("add", o)

    def on_update(self, old: Any, new: Any) -> None:
        self._record("update", new)

    def on_delete(self, o: Any) -> None:
        self._record("delete", o)

    def wait_for_count(self, count: int) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.events) >= count, WAIT), self.events

    def state(self) -> dict[str, str | None]:
        """Replay the events into name -> resourceVersion."""
        out: dict[str, str | None] = {}
        with self._cond:
            for kind, name, rv in self.events:
                if kind in ("delete", "tombstone"):
                    out.pop(name, None)
                else:
                    out[name] = rv
        return out
