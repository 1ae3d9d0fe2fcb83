"""Fixtures shared by the webhook tests: a CA and a serving certificate for 127.0.0.1, a
webhook server using them, admission webhooks that record what they are asked, and a proxy
recording the reviews a server sends (imported by the conftest of each test directory that
needs them)."""

from __future__ import annotations

import base64
import copy
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonpatch  # type: ignore[import-untyped,unused-ignore]
import orjson
import pytest
import urllib3
from prometheus_client import CollectorRegistry

from kgen_runtime.webhook import AdmissionRequest, AdmissionResponse, WebhookServer, allowed
from tests._pki import issue, make_ca

__all__ = ["Certs", "Recorder", "RecordingProxy", "certs", "module_certs", "recorder",
           "registry", "server"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class Certs:
    ca: Path
    directory: Path  # holds tls.crt and tls.key

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def renew(self, subject: str) -> None:
        """Issue a new serving certificate in place, as cert-manager rotates one."""
        cert, key = issue(self.directory.parent, "renewed", subject,
                          "subjectAltName=IP:127.0.0.1\n")
        (self.directory / "tls.key").write_bytes(key.read_bytes())
        (self.directory / "tls.crt").write_bytes(cert.read_bytes())


@pytest.fixture(scope="session")
def module_certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """One CA and serving pair for the whole run (openssl key generation is slow)."""
    root = tmp_path_factory.mktemp("pki")
    ca = make_ca(root)
    cert, key = issue(root, "server", "/CN=webhook", "subjectAltName=IP:127.0.0.1\n")
    serving = root / "serving"
    serving.mkdir()
    cert.rename(serving / "tls.crt")
    key.rename(serving / "tls.key")
    return Certs(ca, serving)


@pytest.fixture
def certs(module_certs: Certs, tmp_path: Path) -> Certs:
    """A per-test copy of the serving pair, which a test may rotate."""
    (tmp_path / "serving").mkdir()
    for name in ("tls.crt", "tls.key"):
        (tmp_path / "serving" / name).write_bytes((module_certs.directory / name).read_bytes())
    for name in ("ca.crt", "ca.key"):
        (tmp_path / name).write_bytes((module_certs.ca.parent / name).read_bytes())
    return Certs(tmp_path / "ca.crt", tmp_path / "serving")


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def server(certs: Certs, registry: CollectorRegistry) -> Iterator[WebhookServer]:
    webhooks = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory, registry=registry)
    yield webhooks
    webhooks.stop()


@dataclass(frozen=True)
class Call:
    """One admission request a recorded webhook got."""

    webhook: str
    request: AdmissionRequest


class Recorder:
    """Admission webhooks on one :class:`WebhookServer` that record every request, in the
    order they arrive, and answer with the JSON patch of an optional change to the object."""

    def __init__(self, server: WebhookServer, certs: Certs) -> None:
        self._server = server
        self._ca = base64.b64encode(certs.ca.read_bytes()).decode()
        self._lock = threading.Lock()
        self._calls: list[Call] = []

    def webhook(self, name: str, rules: list[Obj], change: Callable[[Obj], None] | None = None,
                **extra: Any) -> Obj:
        """Serve a webhook called ``name`` and return its configuration entry (``extra``
        adds fields such as ``reinvocationPolicy``). The entry's name is ``name`` qualified
        as kube-apiserver requires (``<name>.recorder.kgen.test``); calls record ``name``."""
        path = "/" + name
        self._server.register(path, _Handler(self, name, change))
        address = self._server.address
        assert address is not None, "start the server first"
        return {"name": f"{name}.recorder.kgen.test",
                "clientConfig": {"url": f"https://{address[0]}:{address[1]}{path}",
                                 "caBundle": self._ca},
                "rules": rules, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                **extra}

    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def names(self) -> list[str]:
        """The webhooks called, in order."""
        return [call.webhook for call in self.calls()]

    def record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)


@dataclass(frozen=True)
class _Handler:
    recorder: Recorder
    name: str
    change: Callable[[Obj], None] | None

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        self.recorder.record(Call(self.name, request))
        response = allowed(request)
        if self.change is not None and request.object is not None:
            changed = copy.deepcopy(request.object)
            self.change(changed)
            operations = jsonpatch.make_patch(request.object, changed).patch
            if operations:
                response.patch = base64.b64encode(orjson.dumps(operations)).decode()
                response.patch_type = "JSONPatch"
        return response


class RecordingProxy:
    """An HTTPS endpoint that keeps every request body and passes it on to ``target``."""

    def __init__(self, certs: Certs, target: str) -> None:
        self.calls: list[tuple[str, Obj]] = []
        proxy = self
        upstream = urllib3.PoolManager(ssl_context=certs.client_context(), retries=False)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.calls.append((self.path, orjson.loads(body)))
                answer = upstream.request("POST", target + self.path, body=body,
                                          headers={"Content-Type": "application/json"})
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.data)))
                self.end_headers()
                self.wfile.write(answer.data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certs.directory / "tls.crt", certs.directory / "tls.key")
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"https://127.0.0.1:{self._httpd.server_address[1]}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


@pytest.fixture
def recorder(server: WebhookServer, certs: Certs) -> Recorder:
    """A :class:`Recorder` on the started ``server``."""
    server.start()
    return Recorder(server, certs)
