"""The webhooks of the ``webhooks`` scenario, served in process over HTTPS.

They answer as the fidelity README says the recorded ones did (``/mutate``, ``/validate``,
``/validate-things``, ``/convert``), on an ephemeral port with a CA of our own: the replay
rewrites ``https://127.0.0.1:29443`` and the recorded ``caBundle`` in the requests it sends,
and the answers back (a pairing of fixed strings, :attr:`Volatiles.fixed`).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests._pki import issue, make_ca

__all__ = ["RECORDED_ADDRESS", "answer", "serve_webhooks"]

#: Where the recorded webhooks listened (``clientConfig.url`` of the recorded requests).
RECORDED_ADDRESS = "127.0.0.1:29443"
Obj = dict[str, Any]


def answer(path: str, review: Obj) -> Obj:
    """The AdmissionReview or ConversionReview the recorded webhook answered to ``review``."""
    request = review.get("request") or {}
    route = urlsplit(path).path
    if route == "/convert":
        return {"apiVersion": review.get("apiVersion"), "kind": "ConversionReview",
                "response": {"uid": request.get("uid"),
                             "convertedObjects": [_convert(obj, request["desiredAPIVersion"])
                                                  for obj in request.get("objects") or []],
                             "result": {"status": "Success", "metadata": {}}}}
    response: Obj = {"uid": request.get("uid"), "allowed": True}
    handler = {"/mutate": _mutate, "/validate": _validate,
               "/validate-things": _validate_things}[route]
    handler(request, response)
    return {"apiVersion": review.get("apiVersion"), "kind": "AdmissionReview",
            "response": response}


def _mutate(request: Obj, response: Obj) -> None:
    labels = (request.get("object") or {}).get("metadata", {}).get("labels")
    patch = ([{"op": "add", "path": "/metadata/labels/fidelity-webhook", "value": "mutated"}]
             if labels else
             [{"op": "add", "path": "/metadata/labels", "value": {"fidelity-webhook": "mutated"}}])
    response.update(patchType="JSONPatch",
                    patch=base64.b64encode(json.dumps(patch).encode()).decode(),
                    warnings=[f"mutated by fid-webhook ({request.get('operation')})"])


def _deny(response: Obj, code: int, reason: str, message: str) -> None:
    response.update(allowed=False, status={"code": code, "reason": reason, "message": message})


def _validate(request: Obj, response: Obj) -> None:
    obj, old = request.get("object") or {}, request.get("oldObject") or {}
    data = obj.get("data") or {}
    if obj.get("kind") == "ConfigMap" and "forbidden" in data:
        _deny(response, 403, "Forbidden", "data key 'forbidden' is not allowed")
    elif (request.get("operation") == "UPDATE"
          and (old.get("metadata") or {}).get("labels", {}).get("locked") == "true"
          and old.get("data") != obj.get("data")):
        _deny(response, 422, "Invalid", "locked ConfigMap: data may not change")
    elif "warn" in data:
        response["warnings"] = ["data key 'warn' seen"]


def _validate_things(request: Obj, response: Obj) -> None:
    obj = request.get("object") or {}
    size = (obj.get("spec") or {}).get("size")
    if isinstance(size, int) and size > 10:
        _deny(response, 400, "BadRequest", f"size {size} too big (seen as {obj.get('apiVersion')})")


def _convert(obj: Obj, desired: str) -> Obj:
    """v1 ``spec.color`` <-> v2 ``spec.paint.color``, ``apiVersion`` set to ``desired``."""
    spec = dict(obj.get("spec") or {})
    if desired.endswith("/v2") and "color" in spec:
        spec["paint"] = {"color": spec.pop("color")}
    elif desired.endswith("/v1") and isinstance(spec.get("paint"), dict):
        spec["color"] = spec.pop("paint").get("color")
    return {**obj, "apiVersion": desired, "spec": spec}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        payload = json.dumps(answer(self.path, review)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@contextmanager
def serve_webhooks(directory: Path) -> Iterator[tuple[str, str]]:
    """Serve the webhooks; yields (``127.0.0.1:<port>``, the CA's PEM in base64)."""
    ca = make_ca(directory, "/CN=fidelity-replay-ca")
    cert, key = issue(directory, "webhook", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1\n")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True,
                              name="fidelity-webhooks")
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", base64.b64encode(ca.read_bytes()).decode()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
