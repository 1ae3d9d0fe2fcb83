"""RFC 3339 timestamps as metav1.Time and metav1.MicroTime write them.

Models keep timestamps as the wire strings (lossless and free to decode); these helpers
convert at the point where a datetime is actually needed.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_micro_time", "format_time", "parse_time"]


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (``2024-05-01T12:00:00Z``) into an aware datetime.

    Raises:
        ValueError: ``value`` is not an RFC 3339 date-time with a time zone.
    """
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {value!r} has no time zone")
    return parsed


def format_time(value: datetime) -> str:
    """Format like metav1.Time: UTC, whole seconds, ``Z`` suffix (``2024-05-01T12:00:00Z``).

    Raises:
        ValueError: ``value`` is naive (its time zone would be a guess).
    """
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(value: datetime) -> str:
    """Format like metav1.MicroTime: UTC with microseconds (``2024-05-01T12:00:00.000000Z``).

    Raises:
        ValueError: ``value`` is naive.
    """
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: pass an aware datetime")
    return value.astimezone(UTC)
