"""Small runtime utilities (apimachinery's util packages and k8s.io/utils/clock).

One module per concern, each usable on its own (``from kgen_runtime.util import wait``):
:mod:`.clock` (injectable time), :mod:`.runtime` (crash protection), :mod:`.wait` (loops,
polling, backoff), :mod:`.retry` (retry on conflict), :mod:`.errors` (error aggregation),
:mod:`.featuregate` (feature gates). Their public names are also re-exported here.
"""

from kgen_runtime.util.clock import REAL_CLOCK, Clock, FakeClock, RealClock
from kgen_runtime.util.errors import Aggregate, new_aggregate
from kgen_runtime.util.featuregate import FeatureGate, FeatureGateError, FeatureSpec, PreRelease
from kgen_runtime.util.retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    is_conflict,
    on_error,
    retry_on_conflict,
)
from kgen_runtime.util.runtime import handle_crash, handle_error
from kgen_runtime.util.wait import (
    Backoff,
    WaitTimeoutError,
    backoff_until,
    exponential_backoff,
    jitter,
    jitter_until,
    poll_until,
    until,
)

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "REAL_CLOCK",
    "Aggregate",
    "Backoff",
    "Clock",
    "FakeClock",
    "FeatureGate",
    "FeatureGateError",
    "FeatureSpec",
    "PreRelease",
    "RealClock",
    "WaitTimeoutError",
    "backoff_until",
    "exponential_backoff",
    "handle_crash",
    "handle_error",
    "is_conflict",
    "jitter",
    "jitter_until",
    "new_aggregate",
    "on_error",
    "poll_until",
    "retry_on_conflict",
    "until",
]
