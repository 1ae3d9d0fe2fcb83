"""``main.py --webhook-cert-dir``: both controllers serve the Foo's webhooks over TLS beside
their work, answer the API server's reviews, and shut down cleanly on SIGTERM."""

from __future__ import annotations

import base64
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3
from foo_controller import main

from kgen_runtime.testing import TestAPIServer
from tests._webhooks import Certs

MAIN = Path(__file__).resolve().parents[1] / "main.py"
BOUND = 20.0
_SERVING = re.compile(r"serving webhooks on \('127\.0\.0\.1', (\d+)\): (.*)$")


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as api_server:
        yield api_server


def _lines(stream: Any) -> tuple[queue.Queue[str], threading.Thread]:
    """The lines of ``stream`` as they come, read by a thread (a pipe read would block),
    which closes the stream at its end."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        with stream:
            for line in stream:
                lines.put(line)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return lines, thread


def _post(pool: urllib3.PoolManager, port: int, path: str, review: dict[str, Any]) -> Any:
    response = pool.request("POST", f"https://127.0.0.1:{port}{path}?timeout=10s",
                            body=orjson.dumps(review),
                            headers={"Content-Type": "application/json"})
    assert response.status == 200, response.data
    return orjson.loads(response.data)["response"]


@pytest.mark.parametrize("flags", [[], ["--builder"], ["--async"]],
                         ids=["sample-controller", "builder", "async"])
def test_the_controller_serves_the_webhooks_until_sigterm(
    server: TestAPIServer, tmp_path: Path, module_certs: Certs, flags: list[str]
) -> None:
    # --master alone, with no kubeconfig to find: the bare address of the test server.
    environment = {**os.environ, "KUBECONFIG": str(tmp_path / "absent")}
    environment.pop("KUBERNETES_SERVICE_HOST", None)
    process = subprocess.Popen(
        [sys.executable, str(MAIN), "--master", server.url, "--resync", "0",
         "--webhook-cert-dir", str(module_certs.directory), "--webhook-host", "127.0.0.1",
         "--webhook-port", "0", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment)
    assert process.stderr is not None
    stderr, reader = _lines(process.stderr)
    seen: list[str] = []
    try:
        while (match := _SERVING.search(seen[-1] if seen else "")) is None:
            seen.append(stderr.get(timeout=BOUND).rstrip("\n"))
        port = int(match.group(1))
        assert match.group(2).split(", ") == [
            "/convert", "/mutate-samplecontroller-k8s-io-v1alpha1-foo",
            "/mutate-samplecontroller-k8s-io-v1beta1-foo",
            "/validate-samplecontroller-k8s-io-v1alpha1-foo",
            "/validate-samplecontroller-k8s-io-v1beta1-foo"]
        with urllib3.PoolManager(ssl_context=module_certs.client_context()) as pool:
            defaulted = _post(pool, port, "/mutate-samplecontroller-k8s-io-v1beta1-foo", {
                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": "u-1", "operation": "CREATE", "name": "web",
                            "namespace": "ns",
                            "kind": {"group": "samplecontroller.k8s.io",
                                     "version": "v1beta1", "kind": "Foo"},
                            "resource": {"group": "samplecontroller.k8s.io",
                                         "version": "v1beta1", "resource": "foos"},
                            "userInfo": {"username": "test"},
                            "object": {"apiVersion": "samplecontroller.k8s.io/v1beta1",
                                       "kind": "Foo", "metadata": {"name": "web"}}}})
            assert (defaulted["uid"], defaulted["allowed"], defaulted["patchType"]) == (
                "u-1", True, "JSONPatch")
            assert orjson.loads(base64.b64decode(defaulted["patch"])) == [
                {"op": "add", "path": "/spec",
                 "value": {"deployment": {"name": "web"}, "replicas": 1}}]
            converted = _post(pool, port, "/convert", {
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "request": {"uid": "u-2", "desiredAPIVersion": "samplecontroller.k8s.io/v1beta1",
                            "objects": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1",
                                         "kind": "Foo", "metadata": {"name": "web"},
                                         "spec": {"deploymentName": "web"}}]}})
            assert converted == {
                "uid": "u-2",
                "result": {"apiVersion": "v1", "kind": "Status", "metadata": {},
                           "status": "Success"},
                "convertedObjects": [{"apiVersion": "samplecontroller.k8s.io/v1beta1",
                                      "kind": "Foo", "metadata": {"name": "web"},
                                      "spec": {"deployment": {"name": "web"}}}]}
        process.send_signal(signal.SIGTERM)
        assert process.wait(BOUND) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(BOUND)
    rest = []
    while not stderr.empty():
        rest.append(stderr.get_nowait())
    log = "\n".join(seen) + "".join(rest)
    assert "foo_controller: shut down cleanly" in log
    assert "ERROR" not in log


def test_a_port_out_of_range_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--webhook-port", "65536"])
    assert exited.value.code == 2
    assert "must be a port number (0-65535), got 65536" in capsys.readouterr().err


def test_a_missing_certificate_exits_1_before_anything_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n")
    assert main(["--kubeconfig", str(kubeconfig), "--webhook-cert-dir", str(tmp_path)]) == 1
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        "error loading the webhook serving certificate: [Errno 2] No such file or directory: "
        f"'{tmp_path / 'tls.crt'}'"]
