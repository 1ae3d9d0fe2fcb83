"""Label selectors (apimachinery's ``pkg/labels``): parse, validate, print and match.

The grammar is Kubernetes' own::

    selector     := requirement ("," requirement)*
    requirement  := ["!"] key
                  | key ("=" | "==" | "!=") value
                  | key ("in" | "notin") "(" [value ("," value)*] ")"
                  | key (">" | "<") integer

* ``key`` is a qualified name (``[dns-subdomain-prefix/]name``, name at most 63 characters);
  ``value`` is empty or a label value (at most 63 characters of ``[A-Za-z0-9_.-]``, starting
  and ending alphanumeric). ``in``/``notin`` need at least one value.
* Matching: ``=``, ``==`` and ``in`` need the label present with one of the values; ``!=`` and
  ``notin`` match when the label is absent *or* has another value; ``key`` needs the label,
  ``!key`` its absence; ``>``/``<`` need an integer label value strictly beyond the bound.
* An empty selector (``""``) matches everything. Requirements are kept sorted by key, so
  ``str(parse(s))`` is a canonical form and equal selectors print equally.

Errors are :class:`SelectorError` (a ``ValueError``) naming the selector, the position and
what was expected. :class:`Selector` values are immutable and safe to share between threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "SelectorError",
    "as_selector",
    "everything",
    "label_selector_as_selector",
    "nothing",
    "parse",
    "selector_from_label_selector",
    "selector_from_set",
    "validate_label_key",
    "validate_label_value",
]


class SelectorError(ValueError):
    """A selector that cannot be parsed or a requirement that breaks the label rules."""


class Operator(StrEnum):
    """A requirement's operator; the value is its spelling in a selector string."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(_NAME)
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def validate_label_key(key: str) -> None:
    """Raise :class:`SelectorError` unless ``key`` is a qualified name (``[prefix/]name``)."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(prefix)):
        raise SelectorError(
            f"invalid label key {key!r}: prefix must be a DNS subdomain "
            "(lower-case alphanumerics, '-' and '.', at most 253 characters)"
        )
    if not name or len(name) > 63 or not _NAME_RE.fullmatch(name):
        raise SelectorError(
            f"invalid label key {key!r}: name must be 1-63 characters of [A-Za-z0-9_.-], "
            "starting and ending with an alphanumeric character"
        )


def validate_label_value(value: str) -> None:
    """Raise :class:`SelectorError` unless ``value`` is empty or a valid label value."""
    if value and (len(value) > 63 or not _NAME_RE.fullmatch(value)):
        raise SelectorError(
            f"invalid label value {value!r}: must be empty or 1-63 characters of "
            "[A-Za-z0-9_.-], starting and ending with an alphanumeric character"
        )


_SET_OPERATORS = frozenset({Operator.IN, Operator.NOT_IN})
_SINGLE_VALUE_OPERATORS = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})
_NUMERIC_OPERATORS = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})
_NO_VALUE_OPERATORS = frozenset({Operator.EXISTS, Operator.DOES_NOT_EXIST})


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key operator values`` term; construct with :meth:`new` to have it validated."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    @classmethod
    def new(cls, key: str, operator: Operator, values: Iterable[str] = ()) -> Requirement:
        """A validated requirement; values are de-duplicated and sorted."""
        validate_label_key(key)
        vals = tuple(sorted(set(values)))
        if operator in _SET_OPERATORS and not vals:
            raise SelectorError(f"{key}: values set can't be empty for '{operator.value}'")
        if operator in _SINGLE_VALUE_OPERATORS and len(vals) != 1:
            raise SelectorError(f"{key}: exactly one value is required for '{operator.value}'")
        if operator in _NO_VALUE_OPERATORS and vals:
            raise SelectorError(f"{key}: values set must be empty for exists and does-not-exist")
        if operator in _NUMERIC_OPERATORS:
            if len(vals) != 1:
                raise SelectorError(f"{key}: exactly one value is required for '{operator.value}'")
            try:
                int(vals[0])
            except ValueError:
                raise SelectorError(
                    f"{key}: for '{operator.value}' the value must be an integer, got {vals[0]!r}"
                ) from None
        else:
            for value in vals:
                validate_label_value(value)
        return cls(key, operator, vals)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a label set satisfies this requirement (see the module docstring)."""
        op = self.operator
        present = self.key in labels
        if op is Operator.EXISTS:
            return present
        if op is Operator.DOES_NOT_EXIST:
            return not present
        if op in _NUMERIC_OPERATORS:
            if not present:
                return False
            try:
                actual = int(labels[self.key])
            except ValueError:
                return False
            bound = int(self.values[0])
            return actual > bound if op is Operator.GREATER_THAN else actual < bound
        hit = present and labels[self.key] in self.values
        if op in (Operator.NOT_EQUALS, Operator.NOT_IN):
            return not hit
        return hit

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in _SET_OPERATORS:
            return f"{self.key} {op.value} ({','.join(self.values)})"
        if op is Operator.GREATER_THAN:
            return f"{self.key}>{self.values[0]}"
        if op is Operator.LESS_THAN:
            return f"{self.key}<{self.values[0]}"
        return f"{self.key}{op.value}{self.values[0]}"


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of requirements; the empty selector matches everything.

    ``Selector(None)`` is the selector that matches nothing (apimachinery's ``Nothing()``).
    """

    requirements: tuple[Requirement, ...] | None = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether every requirement holds for ``labels`` (``None`` means no labels)."""
        if self.requirements is None:
            return False
        lbls: Mapping[str, str] = labels if labels is not None else {}
        return all(r.matches(lbls) for r in self.requirements)

    def empty(self) -> bool:
        """True when the selector matches everything."""
        return self.requirements == ()

    def add(self, *requirements: Requirement) -> Selector:
        """A new selector with extra requirements (kept sorted by key)."""
        if self.requirements is None:
            return self
        return Selector(_sorted((*self.requirements, *requirements)))

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``=``, ``==`` or a one-value ``in``), if any."""
        for req in self.requirements or ():
            if req.key != key:
                continue
            if (
                req.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                and len(req.values) == 1
            ):
                return req.values[0]
        return None

    def __str__(self) -> str:
        if self.requirements is None:
            return "<nothing>"
        return ",".join(str(r) for r in self.requirements)


def _sorted(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    return tuple(sorted(requirements, key=lambda r: r.key))


def everything() -> Selector:
    """The selector that matches every label set."""
    return Selector(())


def nothing() -> Selector:
    """The selector that matches no label set."""
    return Selector(None)


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """An equality selector for every pair of ``labels``; validated; empty ⇒ everything."""
    return Selector(
        _sorted(Requirement.new(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items())
    )


_EXPRESSION_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def selector_from_label_selector(
    match_labels: Mapping[str, str] | None,
    match_expressions: Iterable[tuple[str, str, Iterable[str]]] = (),
) -> Selector:
    """Convert a metav1 ``LabelSelector`` (``LabelSelectorAsSelector``).

    ``match_expressions`` holds ``(key, operator, values)`` with the API's operator names
    (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``). Note the API's rule: a selector with
    neither labels nor expressions selects everything, but callers treating a *missing*
    ``LabelSelector`` should use :func:`nothing`.
    """
    reqs = [Requirement.new(k, Operator.EQUALS, (v,)) for k, v in (match_labels or {}).items()]
    for key, op_name, values in match_expressions:
        try:
            operator = _EXPRESSION_OPERATORS[op_name]
        except KeyError:
            message = f"{key}: {op_name!r} is not a valid label selector operator"
            raise SelectorError(message) from None
        reqs.append(Requirement.new(key, operator, values))
    return Selector(_sorted(reqs))


def label_selector_as_selector(selector: Any | None) -> Selector:
    """Convert a ``meta.LabelSelector`` model (client-go's ``metav1.LabelSelectorAsSelector``).

    ``None`` selects nothing; a selector with no labels and no expressions selects everything.
    Reads ``match_labels`` and ``match_expressions`` (items with ``key``, ``operator``,
    ``values``), so any object of that shape works.
    """
    if selector is None:
        return nothing()
    expressions = [(e.key, e.operator, e.values or ()) for e in (selector.match_expressions or ())]
    return selector_from_label_selector(selector.match_labels, expressions)


# --- parsing ---------------------------------------------------------------------------------

_SPECIAL = "=!(),<>"
_TOKEN_RE = re.compile(r"\s*(?:(==|!=|[=!(),<>])|([^\s=!(),<>]+))")


def _tokenize(selector: str) -> list[tuple[str, int]]:
    """Split into (token, position) pairs; identifiers and operators are plain strings."""
    tokens: list[tuple[str, int]] = []
    pos = 0
    while pos < len(selector):
        match = _TOKEN_RE.match(selector, pos)
        if match is None:  # only trailing whitespace is left
            break
        token = match.group(1) or match.group(2)
        tokens.append((token, match.start(match.lastindex or 1)))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, selector: str) -> None:
        self.selector = selector
        self.tokens = _tokenize(selector)
        self.index = 0

    def fail(self, expected: str) -> SelectorError:
        if self.index < len(self.tokens):
            token, pos = self.tokens[self.index]
            found = f"found {token!r} at position {pos}"
        else:
            found = "found end of string"
        return SelectorError(f"unable to parse selector {self.selector!r}: {found}, {expected}")

    def peek(self) -> str | None:
        return self.tokens[self.index][0] if self.index < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.index += 1
        return token

    def identifier(self, what: str) -> str:
        token = self.peek()
        if token is None or token in _SPECIAL or token in ("==", "!="):
            raise self.fail(f"expected {what}")
        self.index += 1
        return token

    def requirements(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while self.peek() is not None:
            reqs.append(self.requirement())
            token = self.peek()
            if token is None:
                break
            if token != ",":
                raise self.fail("expected ',' or end of string after a requirement")
            self.index += 1
            if self.peek() is None:
                raise self.fail("expected a requirement after ','")
        return reqs

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.index += 1
            key = self.identifier("a key after '!'")
            if self.peek() not in (None, ","):
                raise self.fail("expected ',' or end of string after '!key'")
            return Requirement.new(key, Operator.DOES_NOT_EXIST)
        key = self.identifier("a key")
        token = self.peek()
        if token in (None, ","):
            return Requirement.new(key, Operator.EXISTS)
        self.index += 1
        if token in ("=", "==", "!="):
            op = {"=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS, "!=": Operator.NOT_EQUALS}
            return Requirement.new(key, op[token], (self.single_value(),))
        if token in (">", "<"):
            op_num = Operator.GREATER_THAN if token == ">" else Operator.LESS_THAN
            return Requirement.new(key, op_num, (self.identifier("an integer value"),))
        if token in ("in", "notin"):
            op_set = Operator.IN if token == "in" else Operator.NOT_IN
            return Requirement.new(key, op_set, self.value_set())
        self.index -= 1
        raise self.fail("expected an operator (=, ==, !=, in, notin, >, <)")

    def single_value(self) -> str:
        token = self.peek()
        if token in (None, ","):  # "key=" selects the empty value
            return ""
        return self.identifier("a value")

    def value_set(self) -> list[str]:
        if self.take() != "(":
            self.index -= 1
            raise self.fail("expected '(' after 'in' or 'notin'")
        values: list[str] = []
        expect_value = True
        while True:
            token = self.peek()
            if token == ")":
                if expect_value and values:  # "(a,)" means a trailing empty value
                    values.append("")
                self.index += 1
                return values
            if token == ",":
                if expect_value:
                    values.append("")
                self.index += 1
                expect_value = True
                continue
            if not expect_value:
                raise self.fail("expected ',' or ')' in a value list")
            values.append(self.identifier("a value or ')'"))
            expect_value = False


def parse(selector: str) -> Selector:
    """Parse a label selector string (see the module docstring for the grammar).

    Raises:
        SelectorError: the string does not follow the grammar or breaks a label rule.
    """
    return Selector(_sorted(_Parser(selector).requirements()))


def as_selector(selector: Selector | str | Mapping[str, str] | None) -> Selector:
    """A parsed selector from text, a ``{key: value}`` set, a selector or ``None``
    (everything): the forms every list and filter of the runtime accepts."""
    if isinstance(selector, Mapping):
        return selector_from_set(selector)
    if isinstance(selector, str):
        return parse(selector)
    return everything() if selector is None else selector
