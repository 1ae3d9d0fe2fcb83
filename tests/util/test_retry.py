"""retry: retry_on_conflict and on_error with client-go's defaults."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kgen_runtime.util import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    Backoff,
    WaitTimeoutError,
    is_conflict,
    on_error,
    retry_on_conflict,
)
from tests.util._support import RecordingClock


@pytest.fixture
def recording_clock() -> RecordingClock:
    return RecordingClock()


class FakeApiError(Exception):
    """Shaped like the REST layer's ApiError: ``code`` and ``reason``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = reason


class HttpError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(status_code)
        self.status_code = status_code


def failing(errors: list[Exception], result: str = "ok") -> tuple[list[int], Callable[[], str]]:
    calls = [0]

    def fn() -> str:
        calls[0] += 1
        if errors:
            raise errors.pop(0)
        return result

    return calls, fn


def test_defaults_are_client_gos() -> None:
    assert Backoff(duration=0.010, factor=1.0, jitter=0.1, steps=5) == DEFAULT_RETRY
    assert Backoff(duration=0.010, factor=5.0, jitter=0.1, steps=4) == DEFAULT_BACKOFF


def test_is_conflict() -> None:
    assert is_conflict(FakeApiError(409, "Conflict"))
    assert not is_conflict(FakeApiError(409, "AlreadyExists"))
    assert is_conflict(FakeApiError(409, ""))  # no reason: the code decides
    assert not is_conflict(FakeApiError(404, "NotFound"))
    assert is_conflict(HttpError(409))
    assert not is_conflict(HttpError(500))
    assert not is_conflict(ValueError("409"))


def test_retries_conflicts_until_success(recording_clock: RecordingClock) -> None:
    calls, fn = failing([FakeApiError(409, "Conflict")] * 3)
    assert retry_on_conflict(DEFAULT_RETRY, fn, clock=recording_clock) == "ok"
    assert calls == [4]
    assert len(recording_clock.sleeps) == 3
    assert all(0.010 <= s < 0.011 for s in recording_clock.sleeps)  # 10 ms, jitter 0.1


def test_gives_up_with_the_last_conflict(recording_clock: RecordingClock) -> None:
    conflicts: list[Exception] = [FakeApiError(409, "Conflict") for _ in range(6)]
    last = conflicts[4]
    calls, fn = failing(conflicts)
    with pytest.raises(FakeApiError) as caught:
        retry_on_conflict(DEFAULT_RETRY, fn, clock=recording_clock)
    assert caught.value is last
    assert calls == [5]
    assert len(recording_clock.sleeps) == 4


def test_other_errors_propagate_at_once(recording_clock: RecordingClock) -> None:
    calls, fn = failing([FakeApiError(409, "Conflict"), FakeApiError(404, "NotFound")])
    with pytest.raises(FakeApiError, match="404"):
        retry_on_conflict(DEFAULT_RETRY, fn, clock=recording_clock)
    assert calls == [2]


def test_on_error_with_a_custom_predicate(recording_clock: RecordingClock) -> None:
    calls, fn = failing([TimeoutError(), TimeoutError()], result="done")
    backoff = Backoff(duration=1, factor=5, steps=4)
    assert on_error(backoff, lambda e: isinstance(e, TimeoutError), fn,
                    clock=recording_clock) == "done"
    assert calls == [3]
    assert recording_clock.sleeps == [1, 5]


def test_on_error_with_no_steps_raises_wait_timeout(recording_clock: RecordingClock) -> None:
    calls, fn = failing([])
    with pytest.raises(WaitTimeoutError):
        on_error(Backoff(duration=1, steps=0), lambda e: True, fn,
                 clock=recording_clock)
    assert calls == [0]
