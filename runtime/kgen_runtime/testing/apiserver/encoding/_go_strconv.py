"""Go's ``strconv`` integer parsing, whose errors kube-apiserver sends back as they are (a query
parameter's ``strconv.ParseInt: parsing "x": invalid syntax``)."""

from __future__ import annotations

from kgen_runtime.testing._status import StatusError

__all__ = ["go_parse_int"]


def go_parse_int(text: str, function: str = "ParseInt") -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)`` (``ParseUint`` takes no sign), raising a
    400 with its error's text (``strconv.ParseInt: parsing "x": invalid syntax``)."""
    signed = function == "ParseInt"
    digits = text[1:] if signed and text[:1] in ("+", "-") else text
    quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if not (digits.isascii() and digits.isdigit()):
        raise StatusError.bad_request(f"strconv.{function}: parsing {quoted}: invalid syntax")
    value = int(text)
    if not (-(2 ** 63) <= value < 2 ** 63 if signed else value < 2 ** 64):
        raise StatusError.bad_request(f"strconv.{function}: parsing {quoted}: value out of range")
    return value
