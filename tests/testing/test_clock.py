"""Injected clocks: bookmarks, stream timeouts, read timeouts, delays and timestamps."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import orjson

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore
from kgen_runtime.util.clock import FakeClock
from tests.testing._support import eventually

CMS = "/api/v1/namespaces/default/configmaps"


def watch(core: APIServerCore, *query: tuple[str, str], read_timeout: float | None = None
          ) -> tuple[list[bytes], threading.Event]:
    """Collect a watch's lines in a background thread: the live list, and "it ended"."""
    response = core.handle(Request("GET", CMS, (("watch", "true"), *query)),
                           read_timeout=read_timeout)
    lines: list[bytes] = []
    ended = threading.Event()

    def read() -> None:
        try:
            for line in response.iter_lines():
                lines.append(line)
        except TimeoutError:
            lines.append(b"timeout")
        ended.set()

    threading.Thread(target=read, daemon=True).start()
    return lines, ended


def test_bookmarks_and_stream_timeout_follow_the_clock() -> None:
    clock = FakeClock()
    core = APIServerCore(bookmark_interval=60, clock=clock)
    lines, ended = watch(core, ("resourceVersion", "0"), ("allowWatchBookmarks", "true"),
                         ("timeoutSeconds", "100"))
    assert clock.wait_for_sleepers(1)
    clock.step(59)
    assert lines == []
    clock.step(1)
    assert eventually(lambda: len(lines) == 1)
    assert orjson.loads(lines[0])["type"] == "BOOKMARK"
    assert clock.wait_for_sleepers(1)
    clock.step(40)  # the stream's timeoutSeconds is reached: it ends
    assert ended.wait(5)
    assert len(lines) == 1


def test_read_timeout_and_delay_follow_the_clock() -> None:
    clock = FakeClock()
    core = APIServerCore(clock=clock)
    lines, ended = watch(core, ("resourceVersion", "0"), read_timeout=10)
    assert clock.wait_for_sleepers(1)
    clock.step(10)
    assert ended.wait(5)
    assert lines == [b"timeout"]
    core.delay(30)
    statuses: list[int] = []
    caller = threading.Thread(target=lambda: statuses.append(core.handle(
        Request("GET", CMS)).status))
    caller.start()
    assert clock.wait_for_sleepers(1)
    assert statuses == []
    clock.step(30)
    caller.join(5)
    assert statuses == [200]


def test_timestamps_come_from_the_wall_clock() -> None:
    core = APIServerCore(wall_clock=lambda: datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
    body = orjson.dumps({"metadata": {"name": "a", "finalizers": ["x/y"]}})
    created = orjson.loads(core.handle(Request("POST", CMS, (), body)).read())
    assert created["metadata"]["creationTimestamp"] == "2030-01-02T03:04:05Z"
    deleted = orjson.loads(core.handle(Request("DELETE", f"{CMS}/a")).read())
    assert deleted["metadata"]["deletionTimestamp"] == "2030-01-02T03:04:05Z"


def test_a_stalled_watch_outlives_its_timeout_until_dropped() -> None:
    clock = FakeClock()
    core = APIServerCore(clock=clock)
    lines, ended = watch(core, ("resourceVersion", "0"), ("timeoutSeconds", "10"))
    assert clock.wait_for_sleepers(1)
    core.store.stall_watches()
    clock.step(20)
    assert not ended.wait(0.05)  # a real wait: nothing may arrive, so it has to elapse
    core.store.drop_watches()
    assert ended.wait(5)
    assert lines == []
