"""TestAPIServerProcess: a TestAPIServer in a child process, reached through ``config()``;
its options and CRDs reach the child, its calls run there, and the child is gone after
``stop`` whatever state it was left in."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading

import orjson
import pytest
import urllib3

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import ListOptions
from kgen_runtime.sharding import HashRange, fnv1a64
from kgen_runtime.testing import ShardRequest, TestAPIServerProcess
from kgen_runtime.testing._process import _serve
from tests.testing._support import FOO_CRD


def gone(pid: int) -> bool:
    """The process ``pid`` no longer exists (it exited and was reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_serves_a_sharded_server_with_crds_and_stops_its_child() -> None:
    with TestAPIServerProcess(sharded_list_and_watch=True, crds=[FOO_CRD]) as server:
        pid = server.pid
        assert pid != os.getpid()
        assert server.url.startswith("http://127.0.0.1:")
        with Clientset.for_config(server.config()) as clients:
            configmaps = clients.core_v1.configmaps("default")
            made = [configmaps.create(ConfigMap(metadata=ObjectMeta(name=name)))
                    for name in ("a", "b")]
            assert made[0].metadata is not None and made[0].metadata.uid
            digest = fnv1a64(made[0].metadata.uid)
            only_a = HashRange(digest, digest + 1).selector()
            listed = configmaps.list(ListOptions(shard_selector=only_a))
            assert [cm.metadata for cm in listed.items] == [made[0].metadata]
            assert listed.metadata.shard_info is not None  # the gate is on in the child
            assert listed.metadata.shard_info.selector == only_a
        crds = orjson.loads(urllib3.request(
            "GET", server.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions").data)
        assert [crd["metadata"]["name"] for crd in crds["items"]] == [
            "foos.samplecontroller.k8s.io"]
        assert server.call("sharding_requests") == [ShardRequest(
            verb="list", group="", resource="configmaps", namespace="default",
            selector=only_a, applied=True), ShardRequest(
            verb="list", group="apiextensions.k8s.io", resource="customresourcedefinitions",
            namespace="", selector=None, applied=False)]
    assert gone(pid)
    server.stop()  # idempotent


def test_a_call_raises_the_servers_exception_and_the_server_goes_on() -> None:
    with TestAPIServerProcess() as server:
        with pytest.raises(AttributeError, match="no_such_method"):
            server.call("no_such_method")
        assert server.call("sharding_requests") == []


def test_bad_options_fail_the_start_and_leave_no_child() -> None:
    server = TestAPIServerProcess(no_such_option=True)
    with pytest.raises(TypeError, match="no_such_option"):
        server.start()
    assert gone(server.pid)


def test_a_killed_child_fails_calls_and_stop_still_returns() -> None:
    server = TestAPIServerProcess().start()
    try:
        os.kill(server.pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match="exited"):
            server.call("sharding_requests")
    finally:
        server.stop()
    assert gone(server.pid)


def test_a_stopped_child_is_killed_after_the_stop_timeout() -> None:
    server = TestAPIServerProcess(stop_timeout=0.5).start()
    os.kill(server.pid, signal.SIGSTOP)  # cannot answer "stop", nor act on SIGTERM
    server.stop()
    assert gone(server.pid)


def test_the_child_stops_serving_when_the_parents_end_of_the_pipe_closes() -> None:
    """A parent that dies closes its end: the child's server stops and ``_serve`` returns."""
    parent, child = multiprocessing.Pipe()
    parent_url: list[str] = []

    def close_after_ready() -> None:
        _, url = parent.recv()
        parent_url.append(url)
        parent.close()

    reader = threading.Thread(target=close_after_ready)
    reader.start()
    _serve(child, {}, [])  # returns: EOF on the pipe
    reader.join(10)
    assert parent_url and parent_url[0].startswith("http://127.0.0.1:")
