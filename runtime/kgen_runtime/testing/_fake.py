"""The fake clientset's transport: a reactor chain and an action log in front of the core.

``FakeTransport`` is client-go's ``testing.Fake`` behind the :class:`Transport` protocol:
every resource request is recorded as an :class:`Action`, offered to the reactors in order,
and — if no reactor handles it — answered by the same :class:`APIServerCore` the test API
server runs, without sockets. Typed clients cannot tell it from a cluster.

Reactors (client-go ``ReactionFunc``) take the action and return ``(handled, object)``; to
answer with an error they raise :class:`StatusError`. Watch reactors return
``(handled, watch)`` with a :class:`FakeWatch` (or any ``Response``) to stream from.
A reactor ported from Go may return client-go's ``(handled, object, err)`` instead: a
handled action's ``err`` (when not ``None``) is raised as if the reactor had raised it, and
an unhandled action's is ignored, as client-go's ``Fake.Invokes`` ignores it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeModel
from kgen_runtime.rest import Request, Response
from kgen_runtime.rest.config import DEFAULT_USER_AGENT
from kgen_runtime.testing._core import APIServerCore, Target
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing._tracker import wire_copy
from kgen_runtime.testing.apiserver.endpoints._query import query_flag
from kgen_runtime.testing.apiserver.endpoints._responses import json_response

__all__ = ["Action", "FakeTransport", "FakeWatch", "Reactor", "WatchReactor"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Action:
    """One recorded request (client-go ``testing.Action``).

    ``verb`` is one of get, list, watch, create, update, patch, delete, delete-collection.
    ``object`` is the decoded body of create/update; ``patch`` the raw body of a patch, with
    ``patch_type`` its content type; ``query`` the request's query parameters.
    """

    verb: str
    resource: GroupVersionResource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    object: Any = None
    patch: bytes | None = None
    patch_type: str = ""
    query: tuple[tuple[str, str], ...] = ()

    def matches(self, verb: str, resource: str) -> bool:
        """client-go's matching, case-insensitive, ``"*"`` a wildcard: ``"foos"`` matches
        actions on foos and on their subresources, ``"foos/status"`` only the latter."""
        if verb != "*" and verb.lower() != self.verb:
            return False
        if resource == "*":
            return True
        top, _, subresource = resource.lower().partition("/")
        if top != self.resource.resource.lower():
            return False
        return not subresource or subresource == self.subresource.lower()


#: ``(action) -> (handled, object)``; raise StatusError to answer with an error. A handled
#: action with no object is answered with a ``Status`` of ``Success`` (as deletes are).
#: client-go's ``(handled, object, err)`` is accepted too (module docstring).
Reactor = Callable[[Action], tuple[bool, Any] | tuple[bool, Any, BaseException | None]]
#: ``(action) -> (handled, watch)``; the watch is a FakeWatch or any streaming Response.
#: client-go's ``(handled, watch, err)`` is accepted too.
WatchReactor = Callable[
    [Action],
    tuple[bool, Response | None] | tuple[bool, Response | None, BaseException | None],
]


def _reaction(result: tuple[bool, T] | tuple[bool, T, BaseException | None]) -> tuple[bool, T]:
    """``(handled, value)`` of a reactor's answer; raises the ``err`` of a handled
    client-go-style ``(handled, value, err)`` (client-go testing/fake.go ``Invokes``)."""
    if len(result) == 3:
        handled, value, error = result
        if handled and error is not None:
            raise error
        return handled, value
    return result


_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


class FakeTransport:
    """An in-process ``Transport`` with reactors and an action log. Thread-safe."""

    def __init__(self, core: APIServerCore) -> None:
        self.core = core
        self._lock = threading.Lock()
        self._actions: list[Action] = []
        self._reactors: list[tuple[str, str, Reactor]] = []
        self._watch_reactors: list[tuple[str, WatchReactor]] = []

    # -- the reactor chain --------------------------------------------------------------------

    def prepend_reactor(self, verb: str, resource: str, reactor: Reactor) -> None:
        """Run ``reactor`` before all others for matching actions (``"*"`` matches all)."""
        with self._lock:
            self._reactors.insert(0, (verb, resource, reactor))

    def append_reactor(self, verb: str, resource: str, reactor: Reactor) -> None:
        """Run ``reactor`` after the others (still before the object tracker)."""
        with self._lock:
            self._reactors.append((verb, resource, reactor))

    def prepend_watch_reactor(self, resource: str, reactor: WatchReactor) -> None:
        """Run ``reactor`` first for watches of ``resource``; watches go through this chain
        only (``prepend_reactor`` never sees them), then to the object tracker."""
        with self._lock:
            self._watch_reactors.insert(0, (resource, reactor))

    def actions(self) -> list[Action]:
        """The recorded actions, oldest first (a copy)."""
        with self._lock:
            return list(self._actions)

    def clear_actions(self) -> None:
        with self._lock:
            self._actions.clear()

    # -- Transport ----------------------------------------------------------------------------

    def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        """Record, react, or fall through to the core. ``stream`` needs no special handling:
        in-process bodies are never read ahead."""
        if request.header("User-Agent") is None:  # as the real transport would send
            request = dataclasses.replace(
                request, headers=(*request.headers, ("User-Agent", DEFAULT_USER_AGENT)))
        parts = [p for p in request.path.split("?", 1)[0].split("/") if p]
        try:
            target = self.core.resolve(parts)
        except StatusError:  # discovery, or a resource nobody serves: straight to the core
            return self.core.handle(request, read_timeout=read_timeout)
        action = _action(request, target)
        with self._lock:
            self._actions.append(action)
            reactors = list(self._reactors)
            watch_reactors = list(self._watch_reactors)
        try:
            if action.verb == "watch":  # watches have their own chain, as in client-go
                for resource, watch_reactor in watch_reactors:
                    if action.matches("watch", resource):
                        handled, watch = _reaction(watch_reactor(action))
                        if handled and watch is not None:
                            return watch
                return self.core.handle(request, read_timeout=read_timeout)
            for verb, resource, reactor in reactors:
                if action.matches(verb, resource):
                    handled, obj = _reaction(reactor(action))
                    if handled:
                        return json_response(201 if action.verb == "create" else 200,
                                             _SUCCESS if obj is None else wire_copy(obj))
        except StatusError as error:
            return json_response(error.code, error.status(), error.headers)
        return self.core.handle(request, read_timeout=read_timeout)


class FakeWatch:
    """A watch the test drives by hand (client-go ``watch.FakeWatcher``), as a Response.

    ``add``/``modify``/``delete``/``error`` queue events from any thread; ``stop`` ends the
    stream after the queued events. ``iter_lines`` raises ``TimeoutError`` when its read
    timeout passes without an event.
    """

    def __init__(self, read_timeout: float | None = None) -> None:
        self.read_timeout = read_timeout
        self._cond = threading.Condition()
        self._events: deque[bytes] = deque()
        self._stopped = False

    def add(self, obj: KubeModel | Mapping[str, Any]) -> None:
        self._push("ADDED", obj)

    def modify(self, obj: KubeModel | Mapping[str, Any]) -> None:
        self._push("MODIFIED", obj)

    def delete(self, obj: KubeModel | Mapping[str, Any]) -> None:
        self._push("DELETED", obj)

    def bookmark(self, obj: KubeModel | Mapping[str, Any]) -> None:
        self._push("BOOKMARK", obj)

    def error(self, error: StatusError) -> None:
        self._push("ERROR", error.status())

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def _push(self, kind: str, obj: KubeModel | Mapping[str, Any]) -> None:
        line = orjson.dumps({"type": kind, "object": wire_copy(obj)})
        with self._cond:
            self._events.append(line)
            self._cond.notify_all()

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Mapping[str, str]:
        return {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}

    def read(self) -> bytes:
        return b"".join(line + b"\n" for line in self.iter_lines())

    def iter_lines(self) -> Iterator[bytes]:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: self._events or self._stopped,
                                           self.read_timeout):
                    raise TimeoutError(f"no watch event within {self.read_timeout} s")
                if not self._events:
                    return
                line = self._events.popleft()
            yield line

    def close(self) -> None:
        self.stop()


def _action(request: Request, target: Target) -> Action:
    method = request.method
    if method == "GET":
        watching = query_flag(dict(request.query), "watch")
        verb = "get" if target.name else "watch" if watching else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, "")
        if method == "DELETE":
            verb = "delete" if target.name else "delete-collection"
    body: Any = None
    if verb in ("create", "update") and request.body:
        try:
            body = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            body = request.body
    return Action(
        verb=verb or method.lower(),
        resource=target.resource.gvr,
        namespace=target.namespace,
        name=target.name,
        subresource=target.subresource,
        object=body,
        patch=request.body if verb == "patch" else None,
        patch_type=(request.content_type or "") if verb == "patch" else "",
        query=request.query,
    )

