"""The public surface of kgen_runtime.util, pinned."""

from __future__ import annotations

import kgen_runtime.util as util


def test_public_names() -> None:
    assert sorted(util.__all__) == sorted([
        "DEFAULT_BACKOFF", "DEFAULT_RETRY", "REAL_CLOCK", "Aggregate", "Backoff", "Clock",
        "FakeClock", "FeatureGate", "FeatureGateError", "FeatureSpec", "PreRelease",
        "RealClock", "WaitTimeoutError", "backoff_until", "exponential_backoff", "handle_crash",
        "handle_error", "is_conflict", "jitter", "jitter_until", "new_aggregate", "on_error",
        "poll_until", "retry_on_conflict", "until",
    ])
    assert all(hasattr(util, name) for name in util.__all__)
