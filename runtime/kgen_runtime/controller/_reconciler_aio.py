"""The asyncio twin of the reconciler protocol (:mod:`._reconciler`): a reconcile awaited,
under the same contract (what a result or an error means for the key).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar

from kgen_runtime.controller._reconciler import Result

__all__ = ["AsyncReconciler", "AsyncReconcilerFunc"]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class AsyncReconciler(Protocol[K_contra]):
    """Reconciles the object named by a key, awaited (the contract of ``Reconciler``)."""

    async def reconcile(self, key: K_contra) -> Result | None:
        """Bring the object named ``key`` to its desired state."""
        ...


class AsyncReconcilerFunc(Generic[K]):
    """Adapts an ``async def`` function to :class:`AsyncReconciler`."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[K], Awaitable[Result | None]]) -> None:
        self.func = func

    async def reconcile(self, key: K) -> Result | None:
        """Await the wrapped function."""
        return await self.func(key)

    def __repr__(self) -> str:
        return f"AsyncReconcilerFunc({self.func!r})"
