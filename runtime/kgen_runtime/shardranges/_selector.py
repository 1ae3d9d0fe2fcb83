"""Parsing a ``shardSelector`` as kube-apiserver v1.36 does, with its error texts.

The server parses the selector as a CEL expression and walks the tree, allowing only
``shardRange(<field>, '<hexStart>', '<hexEnd>')`` calls joined by ``||`` (the ``sharding.Parse``
walker behind ``Convert_v1_ListOptions_To_internalversion_ListOptions``). Its errors are
prefixed ``invalid shard selector: `` and answered with a 500 (../shared/REAL-CLUSTER.md, which
records the texts of a short bound and of an unsupported field). This module accepts the
subset of CEL those selectors use — calls, field paths, quoted strings, ``||`` and parentheses
— and words every structural error as the server's walker does. A text that is not CEL at all
gets ``CEL parse error: Syntax error: ...``, the server's prefix; the rest of that message is
ours, not cel-go's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgen_runtime.shardranges._ranges import HASH_SPACE, HashRange, ShardField

__all__ = ["ShardSelectorError", "parse_selector"]

_PREFIX = "invalid shard selector: "
_FULL_SPACE_END = "0x10000000000000000"
_SUPPORTED = ", ".join(field.value for field in ShardField)


class ShardSelectorError(ValueError):
    """A malformed ``shardSelector``; ``str()`` is the message of the server's 500.

    Attributes:
        selector: The text that was parsed.
        detail: The parser's own words, without the ``invalid shard selector: `` prefix.
    """

    def __init__(self, selector: str, detail: str) -> None:
        super().__init__(_PREFIX + detail)
        self.selector = selector
        self.detail = detail


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "ident", "string", "number", "op"
    text: str
    value: str = ""


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<string>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<number>[0-9][0-9A-Za-z_.]*)
      | (?P<op>\|\||&&|==|!=|<=|>=|[().,!<>+\-*/%?:\[\]{}])
    )""",
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip() == "":
                break
            raise _syntax(f"unexpected character {text[position:].lstrip()[:1]!r}")
        position = match.end()
        kind = match.lastgroup or ""
        raw = match.group(kind)
        value = (re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw[1:-1])
                 if kind == "string" else raw)
        tokens.append(_Token(kind, raw, value))
    return tokens


class _Syntax(Exception):
    """Not CEL at all (cel-go's parser would refuse it)."""


def _syntax(what: str) -> _Syntax:
    return _Syntax(f"CEL parse error: Syntax error: {what}")


# The tree of the CEL subset: ("call", name, args) / ("path", dotted) / ("literal", value, is_str)
_Node = tuple[object, ...]

# cel-go's ast.ExprKind values, which the walker's messages print with %v (no String method).
_CALL_KIND, _IDENT_KIND, _LITERAL_KIND, _SELECT_KIND = 1, 3, 5, 7


def _kind(node: _Node) -> int:
    if node[0] == "call":
        return _CALL_KIND
    if node[0] == "literal":
        return _LITERAL_KIND
    return _SELECT_KIND if "." in str(node[1]) else _IDENT_KIND


class _Parser:
    """Recursive descent over ``or := primary ('||' primary)*`` (``&&`` parsed to be refused)."""

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._at = 0

    def parse(self) -> _Node:
        node = self._or()
        if self._at < len(self._tokens):
            raise _syntax(f"unexpected {self._tokens[self._at].text!r}")
        return node

    def _peek(self) -> _Token | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _take(self, text: str | None = None) -> _Token:
        token = self._peek()
        if token is None:
            raise _syntax("unexpected end of input")
        if text is not None and token.text != text:
            raise _syntax(f"expected {text!r}, got {token.text!r}")
        self._at += 1
        return token

    def _or(self) -> _Node:
        node = self._and()
        while (token := self._peek()) is not None and token.text == "||":
            self._take()
            node = ("call", "_||_", [node, self._and()])
        return node

    def _and(self) -> _Node:
        node = self._primary()
        while (token := self._peek()) is not None and token.text == "&&":
            self._take()
            node = ("call", "_&&_", [node, self._primary()])
        return node

    def _primary(self) -> _Node:
        token = self._take()
        if token.text == "(":
            node = self._or()
            self._take(")")
            return node
        if token.kind == "string":
            return ("literal", token.value, True)
        if token.kind == "number":
            return ("literal", token.text, False)
        if token.kind != "ident":
            raise _syntax(f"unexpected {token.text!r}")
        if (following := self._peek()) is not None and following.text == "(":
            self._take("(")
            args: list[_Node] = []
            if (closing := self._peek()) is None or closing.text != ")":
                args.append(self._or())
                while (comma := self._peek()) is not None and comma.text == ",":
                    self._take(",")
                    args.append(self._or())
            self._take(")")
            return ("call", token.text, args)
        path = token.text
        while (dot := self._peek()) is not None and dot.text == ".":
            self._take(".")
            name = self._take()
            if name.kind != "ident":
                raise _syntax(f"unexpected {name.text!r} after '.'")
            path += "." + name.text
        return ("path", path)


def parse_selector(text: str) -> tuple[ShardField, list[HashRange]]:
    """The field and the ranges (in the order written) of a ``shardSelector``.

    Raises:
        ShardSelectorError: ``text`` is not a selector the server accepts; the message is the
            server's (see the module docstring).
    """
    expression = text.strip()
    try:
        if not expression:
            raise ShardSelectorError(
                text, "empty shard selector is not allowed; omit the parameter for "
                "unfiltered lists")
        terms = _walk(_Parser(_tokens(expression)).parse(), text)
    except _Syntax as error:
        raise ShardSelectorError(text, str(error)) from None
    field = terms[0][0]
    for other, _ in terms[1:]:
        if other != field:
            raise ShardSelectorError(
                text, f'all shard ranges must use the same field, got "{field}" and "{other}"')
    return ShardField(field), [hash_range for _, hash_range in terms]


def _walk(node: _Node, text: str) -> list[tuple[str, HashRange]]:
    if node[0] != "call":
        raise ShardSelectorError(
            text, f"unexpected expression kind {_kind(node)}; expected shardRange() call or || "
            "operator")
    name, args = str(node[1]), node[2]
    assert isinstance(args, list)
    if name == "_||_":
        return _walk(args[0], text) + _walk(args[1], text)
    if name != "shardRange":
        raise ShardSelectorError(
            text, f'unsupported function "{name}"; only shardRange() and || are allowed')
    return [_shard_range(args, text)]


def _shard_range(args: list[_Node], text: str) -> tuple[str, HashRange]:
    if len(args) != 3:
        raise ShardSelectorError(
            text, f"shardRange() requires exactly 3 arguments, got {len(args)}")
    if args[0][0] != "path":
        raise ShardSelectorError(
            text, "shardRange() first argument: expected field path (e.g. "
            f"object.metadata.uid), got expression kind {_kind(args[0])}")
    field = str(args[0][1])
    if field not in {f.value for f in ShardField}:
        raise ShardSelectorError(
            text, f'unsupported field path "{field}"; supported: {_SUPPORTED}')
    start = _hex_bound(args[1], "hexStart", text)
    end = _hex_bound(args[2], "hexEnd", text)
    if start >= end:
        raise ShardSelectorError(
            text, f"shard range start {_literal(args[1])} must be less than end "
            f"{_literal(args[2])}")
    return field, HashRange(start, end)


def _literal(node: _Node) -> str:
    return str(node[1])


def _hex_bound(node: _Node, name: str, text: str) -> int:
    """A bound as the server checks it: ``0x`` + 16 lowercase hex digits, or ``2**64``."""
    if node[0] != "literal":
        raise ShardSelectorError(
            text, f"{name} must be a string literal (e.g. '0xff'), got expression kind "
            f"{_kind(node)}")
    value = str(node[1])
    if not node[2]:  # a CEL number: Go's %T of its value
        raise ShardSelectorError(text, f"{name} must be a string literal, got int64")
    if not value.startswith("0x"):
        raise ShardSelectorError(text, f'{name} must have \'0x\' prefix, got "{value}"')
    digits = value[2:]
    if not digits:
        raise ShardSelectorError(text, f"{name}: hex value is required after '0x'")
    if len(digits) > 17:
        raise ShardSelectorError(
            text, f'{name}: hex value too long ({len(digits)} chars, max 17): "{digits}"')
    for char in digits:
        if char not in "0123456789abcdef":
            raise ShardSelectorError(
                text, f'{name}: invalid hex character "{char}" in "{value}"')
    if len(digits) == 17:
        if value != _FULL_SPACE_END:
            raise ShardSelectorError(
                text, f"{name}: 17-digit hex value must be '{_FULL_SPACE_END}' (2^64), "
                f'got "{value}"')
        return HASH_SPACE
    if len(digits) != 16:
        padded = "0x" + digits.rjust(16, "0")
        raise ShardSelectorError(
            text, f'{name} must be a 0x-prefixed 16-digit hex value, got "{value}" (did you '
            f'mean "{padded}"?)')
    return int(digits, 16)
