"""The reconciler contract (controller-runtime's ``reconcile`` package).

A reconciler brings one object, named by its key, to its desired state. What it returns or
raises tells the controller what to do with the key next:

* returns ``None`` or ``Result()`` — done: the key's backoff is forgotten;
* returns ``Result(requeue_after=s)`` — done for now, look again in ``s`` seconds (backoff
  forgotten, no retry count);
* returns ``Result(requeue=True)`` — look again after the rate limiter's backoff;
* raises :class:`TerminalError` — failed in a way retrying cannot fix: logged, not requeued;
* raises any other ``Exception`` — failed: requeued with backoff, up to the controller's
  ``max_retries``, then logged and dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["Reconciler", "ReconcilerFunc", "Request", "Result", "TerminalError"]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """The object a reconcile is about (controller-runtime's ``reconcile.Request``).

    The key of controllers made by the builder: hashable, ordered, and printed as the
    store key (``"namespace/name"``, or ``"name"`` for a cluster-scoped object).

    >>> str(Request("default", "example-foo")), str(Request("", "node-1"))
    ('default/example-foo', 'node-1')
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Result:
    """What a successful reconcile asks for (controller-runtime's ``reconcile.Result``).

    Attributes:
        requeue: Look at the key again after the rate limiter's backoff.
        requeue_after: If positive, look at the key again after this many seconds; takes
            precedence over ``requeue``.
    """

    requeue: bool = False
    requeue_after: float = 0.0


class TerminalError(Exception):
    """A reconcile failure that retrying cannot fix: the key is not requeued.

    Raise it directly or chain the cause: ``raise TerminalError("bad spec") from err``.
    A later event for the key still triggers a new reconcile.
    """


class Reconciler(Protocol[K_contra]):
    """Reconciles the object named by a key; see the module docstring for the contract.

    Called from several worker threads at once, but never concurrently for the same key.
    Read objects from listers (shared: ``deepcopy()`` before changing) and write through a
    client. Must be idempotent: it may run for a key whose object did not change.
    """

    def reconcile(self, key: K_contra) -> Result | None:
        """Bring the object named ``key`` to its desired state."""
        ...


class ReconcilerFunc(Generic[K]):
    """Adapts a plain function to :class:`Reconciler` (controller-runtime's ``reconcile.Func``).

    >>> ReconcilerFunc(lambda key: None).reconcile("default/foo") is None
    True
    """

    __slots__ = ("func",)

    def __init__(self, func: Callable[[K], Result | None]) -> None:
        self.func = func

    def reconcile(self, key: K) -> Result | None:
        """Call the wrapped function."""
        return self.func(key)

    def __repr__(self) -> str:
        return f"ReconcilerFunc({self.func!r})"
