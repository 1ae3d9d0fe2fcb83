"""runtime: handle_crash swallows and logs; handle_error logs."""

from __future__ import annotations

import logging

import pytest

from kgen_runtime.util import handle_crash, handle_error


def test_handle_crash_logs_calls_handlers_and_swallows(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Exception] = []

    def broken_handler(err: Exception) -> None:
        raise RuntimeError("handler broke")

    with handle_crash(seen.append, broken_handler, seen.append):
        raise KeyError("k")
    assert [type(e) for e in seen] == [KeyError, KeyError]
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "observed a crash: KeyError: 'k'"
    assert messages[1].startswith("crash handler")
    assert all(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


def test_handle_crash_lets_base_exceptions_through() -> None:
    with pytest.raises(KeyboardInterrupt), handle_crash():
        raise KeyboardInterrupt


def test_handle_crash_without_error_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    with handle_crash():
        pass
    assert caplog.records == []


def test_handle_error_logs(caplog: pytest.LogCaptureFixture) -> None:
    handle_error(ValueError("bad"), "syncing foo")
    assert [r.getMessage() for r in caplog.records] == ["syncing foo: bad"]
