"""Helpers shared by the controller tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kgen_runtime.controller import Controller, Manager
from kgen_runtime.meta import ObjectMeta, OwnerReference, Unstructured
from kgen_runtime.rest import HTTPTransport, Response
from kgen_runtime.rest import Request as HTTPRequest
from tests.util._support import eventually

__all__ = ["RecordingTransport", "Running", "eventually", "obj", "started"]


class RecordingTransport:
    """Sends through ``inner`` and remembers each request's method and path."""

    def __init__(self, inner: HTTPTransport) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.sent: list[tuple[str, str]] = []

    def send(
        self, request: HTTPRequest, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        with self.lock:
            self.sent.append((request.method, request.path))
        return self.inner.send(request, stream=stream, read_timeout=read_timeout)


class Running:
    """A controller's ``run`` in a background thread; ``stop()`` ends it and joins (bounded)."""

    def __init__(self, controller: Controller[Any], workers: int) -> None:
        self.controller = controller
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(workers,), daemon=True)
        self.thread.start()

    def _run(self, workers: int) -> None:
        try:
            self.controller.run(workers, self.stop_event)
        except BaseException as err:  # reported to the test through .error
            self.error = err

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "controller.run did not return after stop"


def obj(
    name: str,
    namespace: str = "ns",
    *,
    uid: str = "",
    labels: dict[str, str] | None = None,
    owners: list[OwnerReference] | None = None,
    resource_version: str | None = None,
    kind: str = "Pod",
    api_version: str = "v1",
) -> Unstructured:
    """An Unstructured object with the metadata the tests need."""
    return Unstructured(
        api_version=api_version,
        kind=kind,
        metadata=ObjectMeta(
            name=name,
            namespace=namespace or None,
            uid=uid or f"uid-{name}",
            labels=labels,
            owner_references=owners,
            resource_version=resource_version,
        ),
    )


@contextmanager
def started(manager: Manager, timeout: float = 10.0) -> Iterator[Manager]:
    """``manager.start`` in a background thread while inside; stopped and joined (bounded) on
    leaving, re-raising what ``start`` raised."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            manager.start(stop)
        except BaseException as err:  # handed to the test
            errors.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield manager
    finally:
        stop.set()
        thread.join(timeout)
    assert not thread.is_alive(), "manager.start did not return after stop"
    if errors:
        raise errors[0]
