"""Field selectors (apimachinery's ``pkg/fields``): parse, print and match.

Grammar: ``term ("," term)*`` with ``term := field ("=" | "==" | "!=") value``. Values may
contain ``,``, ``=`` and ``\\`` when escaped with a backslash (``\\,`` ``\\=`` ``\\\\``);
:func:`escape_value` does that. An empty selector matches everything.

For cached objects the fields are ``metadata.name`` and ``metadata.namespace`` (the only
field selectors every resource supports); :func:`object_fields` builds that set. A field the
set does not have compares as the empty string, as on the server.

:class:`Selector` values are immutable and safe to share between threads. Errors are
:class:`FieldSelectorError` (a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "FieldSelectorError",
    "Selector",
    "Term",
    "escape_value",
    "everything",
    "object_fields",
    "one_term_equal_selector",
    "parse",
    "selector_from_set",
]

FieldOperator = Literal["=", "==", "!="]


class FieldSelectorError(ValueError):
    """A field selector string that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Term:
    """One ``field operator value`` term (``value`` unescaped)."""

    field: str
    operator: FieldOperator
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        equal = fields.get(self.field, "") == self.value
        return not equal if self.operator == "!=" else equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of terms, sorted by field; empty matches everything."""

    terms: tuple[Term, ...] = ()

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(t.matches(fields) for t in self.terms)

    def empty(self) -> bool:
        return not self.terms

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal (an ``=``/``==`` term), if the selector says so."""
        for term in self.terms:
            if term.field == field and term.operator != "!=":
                return term.value
        return None

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)


def escape_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so ``value`` survives a round trip through :func:`parse`."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def everything() -> Selector:
    """The selector that matches every object."""
    return Selector()


def selector_from_set(fields: Mapping[str, str]) -> Selector:
    """An equality term for each pair of ``fields``."""
    return Selector(tuple(sorted((Term(k, "=", v) for k, v in fields.items()), key=_by_field)))


def one_term_equal_selector(field: str, value: str) -> Selector:
    """``field=value``: e.g. ``one_term_equal_selector("metadata.name", "foo")``."""
    return Selector((Term(field, "=", value),))


def object_fields(obj: Any) -> dict[str, str]:
    """The field set of a Kubernetes object: ``metadata.name`` and ``metadata.namespace``."""
    meta = obj.metadata
    return {
        "metadata.name": meta.name or "",
        "metadata.namespace": meta.namespace or "",
    }


def _by_field(term: Term) -> str:
    return term.field


def _split_unescaped(text: str, separator: str) -> list[str]:
    """Split on ``separator`` where it is not backslash-escaped; escapes are kept."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unescape(selector: str, value: str) -> str:
    out: list[str] = []
    chars = iter(value)
    for ch in chars:
        if ch != "\\":
            if ch == "=":
                raise FieldSelectorError(
                    f"invalid field selector {selector!r}: unescaped '=' in value {value!r}"
                )
            out.append(ch)
            continue
        nxt = next(chars, None)
        if nxt not in ("\\", ",", "="):
            raise FieldSelectorError(
                f"invalid field selector {selector!r}: invalid escape sequence in {value!r}"
            )
        out.append(nxt)
    return "".join(out)


_OPERATORS: tuple[FieldOperator, ...] = ("!=", "==", "=")


def _parse_term(selector: str, text: str) -> Term:
    """Split at the first operator, scanning left to right (as apimachinery's ``splitTerm``)."""
    for index in range(len(text)):
        for operator in _OPERATORS:
            if text.startswith(operator, index):
                if index == 0:
                    raise FieldSelectorError(
                        f"invalid field selector {selector!r}: {text!r} has no field name"
                    )
                value = _unescape(selector, text[index + len(operator) :])
                return Term(text[:index], operator, value)
    # apimachinery pkg/fields/selector.go parseSelector's words
    raise FieldSelectorError(f"invalid selector: '{selector}'; can't understand '{text}'")


def parse(selector: str) -> Selector:
    """Parse a field selector string.

    Raises:
        FieldSelectorError: a term without an operator or field, or a bad escape.
    """
    parts = sorted(_split_unescaped(selector, ","))  # parseSelector reads the sorted terms
    terms = [_parse_term(selector, part) for part in parts if part]
    return Selector(tuple(sorted(terms, key=_by_field)))
