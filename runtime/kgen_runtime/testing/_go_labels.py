"""Label rules worded as kube-apiserver words them: the label key and value checks of
apimachinery pkg/api/validate/content/kube.go (``IsLabelKey``, ``IsLabelValue``) and the
errors of a label selector string, as pkg/labels/selector.go's ``Parser`` reports them.

The runtime's :mod:`kgen_runtime.labels` parses and matches selectors (with messages that
name positions); this module only says, for a selector it refused, what Go's parser says.
"""

from __future__ import annotations

import re

__all__ = ["label_key_errors", "label_value_errors", "selector_error", "subdomain_errors"]

_KEY_FORMAT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_KEY_NAME = re.compile(_KEY_FORMAT)
_KEY_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character")
_VALUE_MESSAGE = ("a valid label must be an empty string or consist of alphanumeric "
                  "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                  "character")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')")


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the examples quoted and joined by ``,  or ``."""
    shown = ",  or ".join(f"'{example}'" for example in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{fmt}')"


def subdomain_errors(name: str) -> list[str]:
    """IsDNS1123Subdomain: the length error, then the format error (v1.36 says
    "characters" here, as the recorded exchanges show)."""
    errors = ["must be no more than 253 characters"] if len(name) > 253 else []
    if _DNS_SUBDOMAIN.fullmatch(name) is None:
        errors.append(_SUBDOMAIN_MESSAGE)
    return errors


def label_key_errors(key: str) -> list[str]:
    """IsLabelKey (also IsQualifiedName): an optional DNS-subdomain prefix and ``/``, then a
    name of at most 63 bytes."""
    prefix, slash, name = key.partition("/")
    errors: list[str] = []
    if not slash:
        name = key
    elif "/" in name:
        return ["a valid label key " + _regex_error(_KEY_MESSAGE, _KEY_FORMAT, "MyName",
                                                     "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    elif not prefix:
        errors.append("prefix part must be non-empty")
    else:
        errors += ["prefix part " + message for message in subdomain_errors(prefix)]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not (name.isascii() and _KEY_NAME.fullmatch(name)):
        errors.append("name part " + _regex_error(_KEY_MESSAGE, _KEY_FORMAT, "MyName",
                                                  "my.name", "123-abc"))
    return errors


def label_value_errors(value: str) -> list[str]:
    """IsLabelValue: empty, or at most 63 bytes of a label key name's form."""
    errors = ["must be no more than 63 bytes"] if len(value.encode()) > 63 else []
    if value and not (value.isascii() and _KEY_NAME.fullmatch(value)):
        errors.append(_regex_error(_VALUE_MESSAGE, f"({_KEY_FORMAT})?", "MyValue", "my_value",
                                   "12345"))
    return errors


# -- selectors: pkg/labels/selector.go Lexer and Parser ------------------------------------------

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
        errors = label_key_errors(key)
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
