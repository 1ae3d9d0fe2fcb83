"""A watch over real HTTP survives nothing silently (test API server fault injection).

* a stalled stream (half-dead connection) raises ``TimeoutError`` after the read timeout,
  while an idle but healthy one is kept alive by bookmarks;
* a dropped stream ends the iteration cleanly (the caller re-watches);
* a compacted history answers an old resourceVersion with 410 Gone: an ERROR event on a
  watch, ``GoneError`` on a list.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kgen_runtime.meta import Status
from kgen_runtime.rest import ListOptions
from kgen_runtime.rest.errors import GoneError, api_error_from_status, is_resource_expired
from tests.conformance._backends import BOUND, Backend, open_backend
from tests.conformance._foos import foo, next_events

#: The client's read timeout in these tests: several bookmark intervals (0.2 s).
READ_TIMEOUT = 1.0


@pytest.fixture
def served() -> Iterator[Backend]:
    with open_backend("server", None) as backend:
        yield backend


def test_a_stalled_watch_raises_timeout_error_after_the_read_timeout(served: Backend) -> None:
    assert served.server is not None
    start = served.foos.list().metadata.resource_version
    options = ListOptions(resource_version=start, allow_watch_bookmarks=True)
    with served.foos.watch(options, read_timeout=READ_TIMEOUT) as watch:
        events = iter(watch)
        idle = next_events(events, 8)  # 8 bookmark intervals: longer than the read timeout
        served.server.stall_watches()
        served.foos.create(foo("a"))  # never delivered: the stream is silent for good
        stalled_at = time.monotonic()

        with pytest.raises(TimeoutError):
            next(events)
        waited = time.monotonic() - stalled_at

    assert {kind for kind, _ in idle} == {"BOOKMARK"}
    assert READ_TIMEOUT * 0.5 <= waited < BOUND


def test_a_dropped_watch_ends_the_iteration(served: Backend) -> None:
    assert served.server is not None
    start = served.foos.list().metadata.resource_version
    with served.foos.watch(ListOptions(resource_version=start), read_timeout=BOUND) as watch:
        events = iter(watch)
        served.foos.create(foo("a"))
        [(kind, _)] = next_events(events, 1)
        served.server.drop_watches()

        rest = list(events)  # ends, without an exception

    assert kind == "ADDED" and rest == []
    with served.foos.watch(ListOptions(resource_version=start), read_timeout=BOUND) as again:
        assert [k for k, _ in next_events(iter(again), 1)] == ["ADDED"]  # re-watching works


def test_watching_from_a_compacted_version_is_gone(served: Backend) -> None:
    assert served.server is not None
    old = served.foos.create(foo("a")).metadata.resource_version
    served.foos.patch("a", {"spec": {"replicas": 2}})
    served.server.compact()

    with served.foos.watch(ListOptions(resource_version=old), read_timeout=BOUND) as watch:
        events = iter(watch)
        [(kind, status)] = next_events(events, 1)
        rest = list(events)

    assert kind == "ERROR" and rest == []
    assert isinstance(status, Status) and status.code == 410
    error = api_error_from_status(status)
    assert isinstance(error, GoneError) and is_resource_expired(error)


def test_listing_a_compacted_version_or_continue_token_is_gone(served: Backend) -> None:
    assert served.server is not None
    for name in ("a", "b", "c"):
        served.foos.create(foo(name))
    page = served.foos.list(ListOptions(limit=1))
    old = page.metadata.resource_version
    served.foos.patch("a", {"spec": {"replicas": 2}})
    served.server.compact()

    with pytest.raises(GoneError):
        served.foos.list(ListOptions(resource_version=old, resource_version_match="Exact"))
    with pytest.raises(GoneError):
        served.foos.list(ListOptions(limit=1, continue_=page.metadata.continue_))
    assert [f.metadata.name for f in served.foos.list().items] == ["a", "b", "c"]
