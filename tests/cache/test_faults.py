"""Informers against a misbehaving test API server: drops, stalls, compaction, errors, chaos."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from kgen_runtime.cache import ReflectorOptions, SharedIndexInformer, SharedInformerFactory
from kgen_runtime.rest._request import Request, Response, Transport
from kgen_runtime.rest.errors import ApiError, is_not_found
from tests.cache._fakes import WAIT, Recorder, eventually
from tests.cache._foo import FOO, Foo, foo, foos, served

R = TypeVar("R")

FAST = ReflectorOptions(
    watch_read_timeout=0.4, initial_backoff=0.05, max_backoff=0.2, rng=random.Random(5)
)


class CountingTransport:
    """Passes requests through, counting list and watch requests; can hold new watches back
    (a client cut off from the server), see :meth:`hold_watches`."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.lists = 0
        self.watches = 0
        self._cond = threading.Condition()
        self._holding = False
        self._watches_in_flight = 0  # sent, their stream not yet open at the server

    def hold_watches(self) -> None:
        """Make new watch requests wait until :meth:`release_watches`; return once every
        watch request already sent has been answered, so every stream the informer will see
        before the release is open at the server now."""
        with self._cond:
            self._holding = True
            assert self._cond.wait_for(lambda: self._watches_in_flight == 0, WAIT)

    def release_watches(self) -> None:
        with self._cond:
            self._holding = False
            self._cond.notify_all()

    def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        if request.method == "GET" and request.path.endswith("/foos"):
            if ("watch", "true") in request.query:
                return self._send_watch(request, stream=stream, read_timeout=read_timeout)
            self.lists += 1
        return self._inner.send(request, stream=stream, read_timeout=read_timeout)

    def _send_watch(
        self, request: Request, *, stream: bool, read_timeout: float | None
    ) -> Response:
        with self._cond:
            assert self._cond.wait_for(lambda: not self._holding, WAIT), "watches held"
            self.watches += 1
            self._watches_in_flight += 1
        try:
            # The server opens the stream before it answers: once this returns, it is open.
            return self._inner.send(request, stream=stream, read_timeout=read_timeout)
        finally:
            with self._cond:
                self._watches_in_flight -= 1
                self._cond.notify_all()


@contextmanager
def informer_on(
    transport: Transport, *recorders: Recorder
) -> Iterator[tuple[SharedIndexInformer[Foo], CountingTransport]]:
    counting = CountingTransport(transport)
    factory = SharedInformerFactory(counting, reflector_options=FAST)
    informer = factory.informer_for(FOO)
    informer.set_watch_error_handler(lambda r, e: None)
    for recorder in recorders:
        informer.add_handler(recorder)
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
        yield informer, counting
    finally:
        counting.release_watches()
        factory.shutdown()


def server_state(transport: Transport) -> dict[str, str | None]:
    items = foos(transport).list().items
    return {str(f.metadata.name): f.metadata.resource_version for f in items}


def cache_state(informer: SharedIndexInformer[Foo]) -> dict[str, str | None]:
    return {str(o.metadata.name): o.metadata.resource_version for o in informer.indexer.list()}


def per_object_versions(recorder: Recorder) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = {}
    for _, name, rv in recorder.events:
        seen.setdefault(name, []).append(int(rv or 0))
    return seen


def test_dropped_watches_resume_with_nothing_missed_or_repeated() -> None:
    with served() as (server, transport):
        client = foos(transport)
        for i in range(10):
            client.create(foo(f"f{i}"))
        rec = Recorder()
        with informer_on(transport, rec) as (informer, counting):
            for round_ in range(5):
                for i in range(10):
                    obj = client.get(f"f{i}")
                    obj.spec = {"round": round_}
                    client.update(obj)
                # Drop a watch that has delivered events: one dropped within a second of
                # opening with none is a "very short watch", which client-go (and so the
                # reflector) answers with a relist.
                rec.wait_for_count(10 + 10 * (round_ + 1))
                server.drop_watches()
            client.delete("f0")
            expected = server_state(transport)
            eventually(lambda: rec.state() == expected)
            assert cache_state(informer) == expected
            assert counting.lists == 1  # resumed every time, never relisted
            assert counting.watches >= 2
        assert len(rec.events) == 10 + 50 + 1
        for name, versions in per_object_versions(rec).items():
            assert versions == sorted(set(versions)), name  # in order, no duplicates


def test_stalled_stream_is_detected_by_the_read_timeout() -> None:
    with served() as (server, transport):
        rec = Recorder()
        with informer_on(transport, rec) as (_, counting):
            foos(transport).create(foo("before"))
            rec.wait_for_count(1)
            watches = counting.watches
            server.stall_watches()
            foos(transport).create(foo("during"))  # the stalled stream never delivers it
            rec.wait_for_count(2)  # delivered on the re-opened watch
            assert counting.watches > watches
            assert counting.lists == 1
        assert [n for _, n, _ in rec.events] == ["before", "during"]


def test_stall_cycles_leave_no_watch_behind_on_the_server() -> None:
    """Each stall → detect → re-watch cycle ends the server's side of the stalled stream."""
    with served() as (server, transport):
        rec = Recorder()
        with informer_on(transport, rec) as (_, counting):
            store = server.core.store
            for cycle in range(3):
                watches = counting.watches
                eventually(lambda: len(store._open_watches()) == 1)
                server.stall_watches()
                foos(transport).create(foo(f"f{cycle}"))
                rec.wait_for_count(cycle + 1)  # delivered on the re-opened watch
                assert counting.watches > watches
                eventually(lambda: len(store._open_watches()) == 1)
        eventually(lambda: len(store._open_watches()) == 0)


def test_compaction_while_disconnected_relists_with_exact_tombstones() -> None:
    with served() as (server, transport):
        client = foos(transport)
        for name in ("keep", "change", "gone1", "gone2"):
            client.create(foo(name))
        rec = Recorder()
        with informer_on(transport, rec) as (informer, counting):
            rec.wait_for_count(4)
            # Cut the informer off before writing. Having synced does not mean its watch is
            # open yet: a watch request still on its way would miss the stall and deliver the
            # writes. So wait for the stream at the server, stall it, and hold back the watch
            # the reflector re-opens after its read timeout (0.4 s, shorter than the writes
            # may take on a busy machine) until the history it would resume from is gone.
            eventually(lambda: len(server.core.store._open_watches()) == 1)
            counting.hold_watches()
            server.stall_watches()
            changed = client.get("change")
            changed.spec = {"v": 2}
            changed = client.update(changed)
            client.delete("gone1")
            client.delete("gone2")
            server.compact()
            counting.release_watches()
            eventually(lambda: cache_state(informer) == server_state(transport))
            rec.wait_for_count(7)
            assert counting.lists >= 2
        initial = {name: rv for _, name, rv in rec.events[:4]}
        after = rec.events[4:]
        # Tombstones (carrying the last known state) come first, then the relisted changes.
        assert sorted(after[:2]) == [
            ("tombstone", "gone1", initial["gone1"]),
            ("tombstone", "gone2", initial["gone2"]),
        ]
        assert after[2:] == [("update", "change", changed.metadata.resource_version)]


def retrying(action: Callable[[], R]) -> R | None:
    """Run a write until the server stops injecting failures; None if it turned out moot."""
    for _ in range(50):
        try:
            return action()
        except ApiError as err:
            if is_not_found(err):
                return None
            if err.code < 500:
                raise
    raise AssertionError("the server kept failing")


def test_chaos_cache_and_every_handler_converge_on_the_server() -> None:
    rng = random.Random(20261122)
    with served() as (server, transport):
        client = foos(transport)
        recorders = [Recorder(), Recorder(), Recorder()]
        with informer_on(transport, *recorders[:2]) as (informer, _):
            names = [f"c{i}" for i in range(25)]
            live: set[str] = set()
            for step in range(300):
                name = rng.choice(names)
                roll = rng.random()
                if name not in live:
                    if retrying(lambda n=name: client.create(foo(n))) is not None:  # type: ignore[misc]
                        live.add(name)
                elif roll < 0.25:
                    retrying(lambda n=name: client.delete(n))  # type: ignore[misc]
                    live.discard(name)
                else:

                    def bump(n: str = name, s: int = step) -> Any:
                        obj = client.get(n)
                        obj.spec = {"step": s}
                        return client.update(obj)

                    retrying(bump)
                fault = rng.random()
                if fault < 0.04:
                    server.drop_watches()
                elif fault < 0.06:
                    server.stall_watches()
                elif fault < 0.08:
                    server.fail_next(rng.randint(1, 3))
                elif fault < 0.10:
                    server.compact()
                if step == 150:
                    informer.add_handler(recorders[2])  # a late handler, mid-chaos
            expected = server_state(transport)
            eventually(lambda: cache_state(informer) == expected, timeout=20)
            for recorder in recorders:
                eventually(lambda r=recorder: r.state() == expected, timeout=20)  # type: ignore[misc]
        for recorder in recorders:
            for name, versions in per_object_versions(recorder).items():
                assert versions == sorted(versions), name  # per object, never backwards


def test_server_errors_during_list_back_off_and_recover() -> None:
    with served() as (server, transport):
        foos(transport).create(foo("a"))
        server.fail_next(3)
        rec = Recorder()
        with informer_on(transport, rec) as (informer, counting):
            assert counting.lists == 4
            assert informer.indexer.list_keys() == ["default/a"]


def test_streaming_list_over_http_syncs_without_a_list_request() -> None:
    with served() as (_, transport):
        client = foos(transport)
        for i in range(30):
            client.create(foo(f"s{i}"))
        counting = CountingTransport(transport)
        options = ReflectorOptions(use_watch_list=True, initial_backoff=0.05)
        factory = SharedInformerFactory(counting, reflector_options=options)
        informer = factory.informer_for(FOO)
        rec = Recorder()
        informer.add_handler(rec)
        stop = threading.Event()
        factory.start(stop)
        try:
            assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
            assert len(informer.indexer) == 30
            client.delete("s0")
            rec.wait_for_count(31)
            assert counting.lists == 0
            assert counting.watches == 1
        finally:
            factory.shutdown()
        assert rec.initial_flags == [True] * 30
        assert rec.events[-1][:2] == ("delete", "s0")
