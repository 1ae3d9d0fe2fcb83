"""How a manager's replica competes for leadership: the options the
:class:`~kgen_runtime.controller.Manager` and the :class:`~kgen_runtime.controller.AsyncManager`
hand to their elector."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["LeaderElectionConfig"]

LockT = TypeVar("LockT")


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig(Generic[LockT]):
    """How the manager's replica competes for leadership (see :class:`LeaderElector`):
    a :class:`LeaseLock` for the :class:`Manager`, an :class:`AsyncLeaseLock` for the
    :class:`AsyncManager`.

    ``release_on_cancel`` defaults to true here (controller-runtime: false): the manager only
    releases after its controllers have stopped, so handing over at once is safe.
    ``health_tolerance`` is the ``/healthz`` grace for an expired lease.
    """

    lock: LockT
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True
    health_tolerance: float = 20.0
