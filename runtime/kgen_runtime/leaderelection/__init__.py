"""Leader election on a coordination.k8s.io/v1 Lease (client-go's ``tools/leaderelection``).

One sans-I/O core decides (:mod:`._core`: what a candidate observed, when a record expires,
which record to write, when a new leader is reported); two drivers do the I/O and the
waiting: :class:`LeaderElector` on a thread, :class:`AsyncLeaderElector` as a task.
:class:`LeaderElectionConfig` is what a :class:`~kgen_runtime.controller.Manager` takes to
run one. The names are also exported from :mod:`kgen_runtime.controller`; this package
imports nothing of the controller kit (Events go through :mod:`kgen_runtime.events`).
"""

from kgen_runtime.leaderelection._config import LeaderElectionConfig
from kgen_runtime.leaderelection._core import JITTER_FACTOR, LeaderElectionRecord
from kgen_runtime.leaderelection._elector import LeaderElector, LeaseClient, LeaseLock
from kgen_runtime.leaderelection._elector_aio import (
    AsyncLeaderElector,
    AsyncLeaseClient,
    AsyncLeaseLock,
)

__all__ = [
    "JITTER_FACTOR",
    "AsyncLeaderElector",
    "AsyncLeaseClient",
    "AsyncLeaseLock",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
]
