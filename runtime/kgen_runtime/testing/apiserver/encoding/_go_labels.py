"""The errors of a label selector string, as apimachinery pkg/labels/selector.go's
``Parser`` reports them (keys and values checked with :mod:`kgen_runtime._names`).

The runtime's :mod:`kgen_runtime.labels` parses and matches selectors (with messages that
name positions); this module only says, for a selector it refused, what Go's parser says.
"""

from __future__ import annotations

import re

from kgen_runtime._names import label_value_errors, qualified_name_errors

__all__ = ["selector_error"]

# pkg/labels/selector.go Lexer and Parser

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_SYMBOLS = frozenset({")", ",", "!", "==", "=", ">", "<", "!=", "("})
_KEYWORDS = frozenset({"in", "notin"})
_IDENTIFIER, _END = "identifier", "end"
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[str, str]]:
    """(token, literal) pairs: symbols and keywords are their own token; the end is ''."""
    tokens, index = [], 0
    while True:
        while index < len(text) and text[index] in _WHITESPACE:
            index += 1
        if index == len(text):
            tokens.append((_END, ""))
            return tokens
        start = index
        if text[index] in _SPECIAL:  # scanSpecialSymbol: the longest known symbol
            last = ""  # every special character alone is a symbol
            while index < len(text) and text[index] in _SPECIAL:
                if text[start:index + 1] not in _SYMBOLS:
                    break
                last = text[start:index + 1]
                index += 1
            tokens.append((last, last))
            continue
        while index < len(text) and text[index] not in _WHITESPACE | _SPECIAL:
            index += 1
        word = text[start:index]
        tokens.append((word if word in _KEYWORDS else _IDENTIFIER, word))


class _Refused(Exception):
    pass


class _GoParser:
    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.position = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        token, literal = self.tokens[min(self.position, len(self.tokens) - 1)]
        return (_IDENTIFIER if values and token in _KEYWORDS else token), literal

    def consume(self, values: bool = True) -> tuple[str, str]:
        found = self.lookahead(values)
        self.position += 1
        return found

    def parse(self) -> None:
        while True:
            token, literal = self.lookahead()
            if token == _END:
                return
            if token not in (_IDENTIFIER, "!"):
                raise _Refused(f"found '{literal}', expected: !, identifier, or "
                               "'end of string'")
            try:
                self.requirement()
            except _Refused as error:
                raise _Refused(f"unable to parse requirement: {error}") from None
            token, literal = self.consume()
            if token == _END:
                return
            if token != ",":
                raise _Refused(f"found '{literal}', expected: ',' or 'end of string'")
            token, literal = self.lookahead()
            if token not in (_IDENTIFIER, "!"):
                raise _Refused(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> None:
        token, literal = self.consume()
        negated = token == "!"
        if negated:
            token, literal = self.consume()
        if token != _IDENTIFIER:
            raise _Refused(f"found '{literal}', expected: identifier")
        key = literal
        errors = qualified_name_errors(key)
        if errors:  # validateLabelKey with the parser's (nil) path
            raise _Refused(f'<nil>: Invalid value: "{key}": {"; ".join(errors)}')
        if self.lookahead()[0] in (_END, ","):
            return
        if negated:
            raise _Refused(f"found '{literal}', expected: ',' or 'end of string'")
        operator, literal = self.consume(values=False)
        if operator in _KEYWORDS:
            values = self.value_set()
        elif operator in ("=", "==", "!=", ">", "<"):
            values = self.exact_value()
        else:
            raise _Refused(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        self.check(operator, values)

    def value_set(self) -> list[str]:
        token, literal = self.consume()
        if token != "(":
            raise _Refused(f"found '{literal}' expected: '('")
        token, literal = self.lookahead()
        if token == ")":
            self.consume()
            return [""]
        if token not in (_IDENTIFIER, ","):
            raise _Refused(f"found '{literal}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:  # parseIdentifiersList
            token, literal = self.consume()
            if token == _IDENTIFIER:
                values.append(literal)
                after, following = self.lookahead()
                if after == ")":
                    break
                if after != ",":
                    raise _Refused(f"found '{following}', expected: ',' or ')'")
            elif token == ",":
                if not values:
                    values.append("")
                after, _ = self.lookahead()
                if after == ")":
                    values.append("")
                    break
                if after == ",":
                    self.consume()
                    values.append("")
            else:
                raise _Refused(f"found '{literal}', expected: ',', or identifier")
        self.consume()  # the ')'
        return values

    def exact_value(self) -> list[str]:
        if self.lookahead()[0] in (_END, ","):
            return [""]
        token, literal = self.consume()
        if token != _IDENTIFIER:
            raise _Refused(f"found '{literal}', expected: identifier")
        return [literal]

    def check(self, operator: str, values: list[str]) -> None:
        """NewRequirement's value rules (the key was checked as it was read)."""
        errors = []
        if operator in (">", "<"):
            errors += [f'values[{index}]: Invalid value: "{value}": for \'Gt\', \'Lt\' '
                       "operators, the value must be an integer"
                       for index, value in enumerate(values)
                       if not re.fullmatch(r"[+-]?[0-9]+", value)]
        for index, value in enumerate(sorted(set(values))):
            found = label_value_errors(value)
            if found:
                errors.append(f'values[{index}]: Invalid value: "{value}": {"; ".join(found)}')
        if errors:
            raise _Refused(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def selector_error(text: str) -> str | None:
    """What ``labels.Parse(text)`` fails with, or None when Go's parser takes it."""
    try:
        _GoParser(text).parse()
    except _Refused as error:
        return str(error)
    return None
