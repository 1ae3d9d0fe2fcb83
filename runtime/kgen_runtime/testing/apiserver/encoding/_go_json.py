"""Why Go's ``encoding/json`` refuses a body, in its words: the scanner's syntax errors
(``invalid character 'n' looking for beginning of object key string``, ``unexpected end of
JSON input``) and the error of a value that is no object where a struct is expected.

kube-apiserver reads a body's apiVersion and kind first (runtime/serializer/json's
``DefaultMetaFactory.Interpret``: ``json.Unmarshal`` into a struct of the two), so these are
the texts its 400 carries for a body that is no JSON object.
"""

from __future__ import annotations

__all__ = ["syntax_error", "unmarshal_type"]

_WHITESPACE = b" \t\r\n"
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}


class _Error(Exception):
    pass


def _quote_char(byte: int) -> str:
    """encoding/json quoteChar: the character as a Go quoted rune between single quotes."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    escapes = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}
    if byte in escapes:
        return f"'{escapes[byte]}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    if 0x80 <= byte < 0xA1 or byte == 0xAD:  # the byte as a rune: not printable
        return f"'\\u{byte:04x}'"
    return f"'{chr(byte)}'"


class _Scanner:
    """A recursive reading of encoding/json's scanner states, raising its first error."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.index = 0

    def peek(self) -> int | None:
        return self.data[self.index] if self.index < len(self.data) else None

    def next_byte(self) -> int:
        byte = self.peek()
        if byte is None:
            raise _Error("unexpected end of JSON input")
        self.index += 1
        return byte

    def skip_space(self) -> None:
        while self.index < len(self.data) and self.data[self.index] in _WHITESPACE:
            self.index += 1

    def fail(self, byte: int, context: str) -> _Error:
        return _Error(f"invalid character {_quote_char(byte)} {context}")

    def value(self) -> None:
        self.skip_space()
        byte = self.next_byte()
        if byte == ord("{"):
            self.object()
        elif byte == ord("["):
            self.array()
        elif byte == ord('"'):
            self.string()
        elif byte == ord("-") or ord("0") <= byte <= ord("9"):
            self.number(byte)
        elif byte in _LITERALS:
            word = _LITERALS[byte]
            for expected in word[1:]:
                got = self.next_byte()
                if got != expected:
                    raise self.fail(got, f"in literal {word.decode()} (expecting "
                                         f"{_quote_char(expected)})")
        else:
            raise self.fail(byte, "looking for beginning of value")

    def object(self) -> None:
        self.skip_space()
        byte = self.next_byte()
        if byte == ord("}"):
            return
        while True:
            if byte != ord('"'):
                raise self.fail(byte, "looking for beginning of object key string")
            self.string()
            self.skip_space()
            byte = self.next_byte()
            if byte != ord(":"):
                raise self.fail(byte, "after object key")
            self.value()
            self.skip_space()
            byte = self.next_byte()
            if byte == ord("}"):
                return
            if byte != ord(","):
                raise self.fail(byte, "after object key:value pair")
            self.skip_space()
            byte = self.next_byte()

    def array(self) -> None:
        self.skip_space()
        if self.peek() == ord("]"):
            self.index += 1
            return
        while True:
            self.value()
            self.skip_space()
            byte = self.next_byte()
            if byte == ord("]"):
                return
            if byte != ord(","):
                raise self.fail(byte, "after array element")

    def string(self) -> None:
        while True:
            byte = self.next_byte()
            if byte == ord('"'):
                return
            if byte < 0x20:
                raise self.fail(byte, "in string literal")
            if byte == ord("\\"):
                escape = self.next_byte()
                if escape == ord("u"):
                    for _ in range(4):
                        digit = self.next_byte()
                        if chr(digit) not in "0123456789abcdefABCDEF":
                            raise self.fail(digit, "in \\u hexadecimal character escape")
                elif escape not in b'"\\/bfnrt':
                    raise self.fail(escape, "in string escape code")

    def number(self, first: int) -> None:
        if first == ord("-"):
            first = self.next_byte()
            if not ord("0") <= first <= ord("9"):
                raise self.fail(first, "in numeric literal")
        if first != ord("0"):
            self.digits()
        if self.peek() == ord("."):
            self.index += 1
            byte = self.next_byte()
            if not ord("0") <= byte <= ord("9"):
                raise self.fail(byte, "after decimal point in numeric literal")
            self.digits()
        if self.peek() in (ord("e"), ord("E")):
            self.index += 1
            byte = self.next_byte()
            if byte in (ord("+"), ord("-")):
                byte = self.next_byte()
            if not ord("0") <= byte <= ord("9"):
                raise self.fail(byte, "in exponent of numeric literal")
            self.digits()

    def digits(self) -> None:
        while self.index < len(self.data) and self.data[self.index] in b"0123456789":
            self.index += 1


def syntax_error(data: bytes) -> str | None:
    """encoding/json ``checkValid``'s error for ``data``, or None when it is valid JSON."""
    scanner = _Scanner(data)
    try:
        scanner.value()
        scanner.skip_space()
        byte = scanner.peek()
        if byte is not None:
            raise scanner.fail(byte, "after top-level value")
    except _Error as error:
        return str(error)
    return None


#: How encoding/json names a JSON value's type in an UnmarshalTypeError.
_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def unmarshal_type(value: object) -> str | None:
    """``array``, ``string``, ``number`` or ``bool`` for a value that cannot fill a struct."""
    return _JSON_TYPES.get(type(value))
