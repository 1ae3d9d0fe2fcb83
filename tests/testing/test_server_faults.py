"""Fault injection: failures, delays, dropped and stalled watches, stream timeouts, stop."""

from __future__ import annotations

import threading
import time

import pytest
import urllib3

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import Api, eventually, take

CMS = "/api/v1/namespaces/default/configmaps"


def test_fail_next_answers_with_the_given_status(api_server: TestAPIServer, api: Api) -> None:
    api_server.fail_next(2, 503, "ServiceUnavailable", message="storage is (re)initializing",
                         retry_after=1)
    response = api.http.request("GET", api.url + CMS)
    assert response.status == 503
    assert response.headers["Retry-After"] == "1"
    assert api.get(CMS) == (503, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "storage is (re)initializing", "reason": "ServiceUnavailable",
        "details": {"retryAfterSeconds": 1}, "code": 503})
    assert api.get(CMS)[0] == 200


def test_fail_next_applies_to_watches(api_server: TestAPIServer, api: Api) -> None:
    api_server.fail_next(1, 500)
    assert api.get(CMS, watch="true")[0] == 500


def test_delay_holds_requests_until_turned_off(api_server: TestAPIServer, api: Api) -> None:
    api_server.delay(0.2)
    started = time.monotonic()
    assert api.get(CMS)[0] == 200
    assert time.monotonic() - started >= 0.2
    api_server.delay(0)
    assert api.get(CMS)[0] == 200


def test_stop_releases_delayed_requests() -> None:
    server = TestAPIServer().start()
    api = Api(server)
    server.delay(60)
    results: list[int] = []
    caller = threading.Thread(target=lambda: results.append(api.get(CMS)[0]))
    caller.start()
    assert eventually(lambda: server.core.in_flight() == 1)
    server.stop()
    caller.join(5)
    assert results == [200]


def test_drop_watches_ends_open_streams(api_server: TestAPIServer, api: Api) -> None:
    api.post(CMS, {"metadata": {"name": "a"}})
    events = api.watch(CMS)
    assert take(events, 1) == [("ADDED", "a")]
    api_server.drop_watches()
    assert list(events) == []
    fresh = api.watch(CMS)  # new watches work
    assert take(fresh, 1) == [("ADDED", "a")]


def test_drop_connections_cuts_streams_abruptly(api_server: TestAPIServer, api: Api) -> None:
    api.post(CMS, {"metadata": {"name": "a"}})
    events = api.watch(CMS)
    assert take(events, 1) == [("ADDED", "a")]
    api_server.drop_connections()
    with pytest.raises(urllib3.exceptions.ProtocolError):
        next(events)
    assert api.get(f"{CMS}/a")[0] == 200  # new connections are accepted


def test_stalled_watch_stays_open_and_silent(api_server: TestAPIServer, api: Api) -> None:
    events = api.watch(CMS, read_timeout=0.3, resourceVersion="0")
    created = api.post(CMS, {"metadata": {"name": "a"}})[1]
    assert take(events, 1) == [("ADDED", "a")]
    api_server.stall_watches()
    api.post(CMS, {"metadata": {"name": "b"}})
    with pytest.raises((urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ProtocolError)):
        next(events)
    assert take(api.watch(CMS, resourceVersion=created["metadata"]["resourceVersion"]), 1) == [
        ("ADDED", "b")]


def test_timeout_seconds_ends_the_stream(api: Api) -> None:
    started = time.monotonic()
    assert list(api.watch(CMS, timeoutSeconds=1, resourceVersion="0")) == []
    assert 1.0 <= time.monotonic() - started < 5


def test_config_points_at_the_server(api_server: TestAPIServer) -> None:
    config = api_server.config(read_timeout=3.0)
    assert config.host == api_server.url
    assert config.read_timeout == 3.0


def test_stop_closes_kept_alive_connections() -> None:
    server = TestAPIServer().start()
    api = Api(server)
    assert api.get(CMS)[0] == 200  # the pool now holds a kept-alive connection
    server.stop()
    with pytest.raises(urllib3.exceptions.HTTPError):
        api.get(CMS)


def test_lifecycle_errors() -> None:
    server = TestAPIServer()
    with pytest.raises(RuntimeError):
        _ = server.url
    with server, pytest.raises(RuntimeError):
        server.start()
    server.stop()  # idempotent
    with pytest.raises(RuntimeError):
        server.start()  # a stopped server stays stopped
