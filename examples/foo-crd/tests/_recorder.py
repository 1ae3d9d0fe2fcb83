"""An event recorder for the Foo controller tests (client-go's ``record.FakeRecorder``)."""

from __future__ import annotations

import threading

from kgen_runtime.meta import KubeObject

__all__ = ["FakeRecorder"]


class FakeRecorder:
    """client-go's ``record.FakeRecorder``: events as ``"<type> <reason> <message>"``, in the
    order they were recorded; thread-safe (the controllers record from their workers)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()

    def event(self, obj: KubeObject, event_type: str, reason: str, message: str) -> None:
        with self._lock:
            self.events.append(f"{event_type} {reason} {message}")
