"""``metav1.Time`` and ``metav1.MicroTime`` values as kube-apiserver decodes and writes them.

A built-in object's timestamps are Go values: decoding parses them with ``time.Parse``
(``Time``: RFC 3339, ``"2006-01-02T15:04:05Z07:00"``, a fraction accepted and dropped;
``MicroTime``: ``"2006-01-02T15:04:05.000000Z07:00"``, exactly six fraction digits), and
writing prints them in UTC (``...:05Z``; ``...:05.000000Z``). A value that does not parse
fails the decode with Go's ``ParseError`` text (``parsing time "<value>" as "<layout>":
cannot parse "<rest>" as "<element>"``). Range checks (month 13) are not reproduced.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

__all__ = ["MICRO_TIME", "TIME", "normalise_time"]

TIME = "2006-01-02T15:04:05Z07:00"
MICRO_TIME = "2006-01-02T15:04:05.000000Z07:00"
#: The layouts' elements: (element, digits it takes, or 0 for a literal).
_DATE = (("2006", 4), ("-", 0), ("01", 2), ("-", 0), ("02", 2), ("T", 0), ("15", 2),
         (":", 0), ("04", 2), (":", 0), ("05", 2))


def normalise_time(value: str, layout: str) -> tuple[str | None, str]:
    """``(value as Go writes it, "")`` or ``(None, Go's parse error)``."""
    rest = value
    numbers = []
    for element, digits in _DATE:
        if digits:
            if len(rest) < digits or not rest[:digits].isdigit():
                return None, _error(value, layout, rest, element)
            numbers.append(int(rest[:digits]))
        elif not rest.startswith(element):
            return None, _error(value, layout, rest, element)
        rest = rest[digits or len(element):]
    micros = 0
    if layout == MICRO_TIME:
        if len(rest) < 7 or rest[0] not in ".," or not rest[1:7].isdigit():
            return None, _error(value, layout, rest, ".000000")
        micros, rest = int(rest[1:7]), rest[7:]
    elif len(rest) >= 2 and rest[0] in ".," and rest[1].isdigit():
        fraction = len(rest[1:]) - len(rest[1:].lstrip("0123456789"))
        rest = rest[1 + fraction:]  # parsed, and dropped by Time's second precision
    offset, rest = _zone(rest)
    if offset is None:
        return None, _error(value, layout, rest, "Z07:00")
    if rest:
        return None, f'parsing time "{value}": extra text: "{rest}"'
    try:
        year, month, day, hour, minute, second = numbers
        moment = datetime(year, month, day, hour, minute, second, micros, timezone(offset))
    except ValueError as error:
        return None, f'parsing time "{value}": {error}'
    utc = moment.astimezone(UTC)
    if layout == MICRO_TIME:
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), ""
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ"), ""


def _zone(rest: str) -> tuple[timedelta | None, str]:
    if rest.startswith("Z"):
        return timedelta(0), rest[1:]
    if (len(rest) >= 6 and rest[0] in "+-" and rest[1:3].isdigit() and rest[3] == ":"
            and rest[4:6].isdigit()):
        sign = -1 if rest[0] == "-" else 1
        return sign * timedelta(hours=int(rest[1:3]), minutes=int(rest[4:6])), rest[6:]
    return None, rest


def _error(value: str, layout: str, rest: str, element: str) -> str:
    return f'parsing time "{value}" as "{layout}": cannot parse "{rest}" as "{element}"'
