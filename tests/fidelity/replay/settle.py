"""The waits the recording did outside its proxy (fidelity README, "Not recorded"), so a
replay against a real cluster does not run ahead of it: after a CRD is created, until its
resource answers; after a CRD is deleted or a namespace finalized, until it is gone. On the
test server each condition already holds at the first check."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from kgen_runtime.util.wait import poll_until
from tests.fidelity.replay.transcripts import Exchange
from tests.fidelity.replay.wire import Answer, Endpoint, status_of

__all__ = ["settle"]

_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_BOUND = 30.0


def settle(endpoint: Endpoint, exchange: Exchange, answer: Answer) -> None:
    """Wait until what ``exchange`` started has taken effect on the server."""
    request = exchange.request
    method, path = request["method"], request["path"]
    body, _ = answer.parsed()
    if method == "POST" and path == _CRDS and answer.status == 201 and isinstance(body, dict):
        _until(endpoint, _served_path(body), lambda status: status == 200)
    elif method == "DELETE" and path.startswith(_CRDS + "/") and answer.status == 200:
        _until(endpoint, path, lambda status: status == 404)
    elif method == "PUT" and path.endswith("/finalize") and answer.status == 200:
        _until(endpoint, path.removesuffix("/finalize"), lambda status: status == 404)


def _served_path(crd: dict[str, Any]) -> str:
    spec = crd.get("spec") or {}
    version = next(v["name"] for v in spec.get("versions") or () if v.get("served"))
    return f"/apis/{spec.get('group')}/{version}/{(spec.get('names') or {}).get('plural')}"


def _until(endpoint: Endpoint, path: str, done: Callable[[int], bool]) -> None:
    with contextlib.suppress(TimeoutError):  # then the next exchanges show what is missing
        poll_until(lambda: done(status_of(endpoint, path)), 0.1, _BOUND, immediate=True)
