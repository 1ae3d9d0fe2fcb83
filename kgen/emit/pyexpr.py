"""Python source fragments for IR values and types: the one place that turns data into code.

Everything that comes from a schema (descriptions, enum values, defaults, names) reaches the
generated source through these functions, which emit only literals, never raw text.
"""

from __future__ import annotations

import math
import re
import textwrap
from functools import lru_cache
from typing import Any

from kgen import ir

__all__ = [
    "LINE_LENGTH",
    "annotation",
    "docstring",
    "literal",
    "module_alias",
    "quoted",
    "sort_all",
    "sort_names",
    "type_expression",
]

LINE_LENGTH = 88
"""Generated code keeps black's and ruff's default line length, not the project's."""

_SCALAR_TYPES = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "any": "Any",
    "int_or_str": "int | str",
}


def literal(value: Any) -> str:
    """A Python literal for a JSON value (``repr`` with non-finite floats spelled out), with
    strings in black's quotes (:func:`quoted`) so that black leaves it alone."""
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if isinstance(value, str):
        return quoted(value)
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}"
    return quoted(str(value))


def quoted(value: str) -> str:
    """A string literal as black writes it: ``ascii``'s (non-ASCII escaped: no bidi or
    look-alike tricks in generated code), in double quotes unless that needs more escapes
    (black's own rule), so a module of such literals is black-stable."""
    text = ascii(value)  # in single quotes, unless only a single quote is inside
    if '"' not in value:
        return text if "'" in value else f'"{text[1:-1]}"'
    if "'" not in value or value.count('"') > value.count("'"):
        return text  # double quotes would need more escapes
    # Both quotes, no more double than single ones: black swaps to double quotes.
    return '"' + text[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'


# Characters whose escaped form is wider than one column (or may be: a quote).
_COSTLY_CHARACTER = re.compile(r"[^\x20-\x7e]|['\\]")


def string_chunks(value: str, width: int) -> list[str]:
    """``value`` cut into pieces whose :func:`quoted` fits in ``width`` columns, for an
    implicitly concatenated string that keeps generated lines short (no noqa needed).

    Each piece takes characters while they fit (at least one), counting a character as the
    columns of its escape (a quote as two, in case it needs escaping); runs of printable
    ASCII are taken a slice at a time (CRD schemas run to megabytes).
    """
    chunks: list[str] = []
    start, used, position = 0, 2, 0  # 2: the quotes
    for match in [*_COSTLY_CHARACTER.finditer(value), None]:
        stop = len(value) if match is None else match.start()
        while position < stop:  # one column each
            if used + 1 > width and position > start:
                chunks.append(value[start:position])
                start, used = position, 2
            taken = max(1, min(stop - position, width - used))
            used += taken
            position += taken
        if match is None:
            break
        char = match.group()
        cost = 2 if char == "'" else len(ascii(char)) - 2
        if used + cost > width and position > start:
            chunks.append(value[start:position])
            start, used = position, 2
        used += cost
        position += 1
    chunks.append(value[start:])
    return chunks


def _name_rank(name: str) -> int:
    return 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2


def _natural(text: str) -> list[tuple[int, str]]:
    return [(int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"(\d+)", text)]


def sort_names(names: list[str]) -> list[str]:
    """isort's (and ruff's) order for imported names: CONSTANTS, then Classes, then others;
    each case-insensitively, with numbers in numeric order."""
    return sorted(names, key=lambda n: (_name_rank(n), _natural(n.lower()), n))


def sort_all(names: list[str]) -> list[str]:
    """ruff's order for ``__all__`` (RUF022): as imports, but case-sensitive."""
    return sorted(names, key=lambda n: (_name_rank(n), _natural(n)))


@lru_cache(maxsize=65536)  # schemas repeat descriptions (every embedded PodSpec)
def docstring(text: str, indent: int = 4, *, block: bool = False) -> str:
    """A triple-quoted literal of ``text``, wrapped to the line length, escaped so that no
    schema text can end it early or inject code; non-ASCII characters are escaped too, so
    no bidirectional-override or look-alike character reaches the generated source.
    With ``block``, a docstring of several lines closes on a line of its own (PEP 257)."""
    width = LINE_LENGTH - indent - 6
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        # Escaped first, so the width counts the characters the source line will have.
        line = _UNSAFE_CHARACTER.sub(_escape_character, line.expandtabs().replace("\\", "\\\\"))
        if len(line) <= width:
            lines.append(line.rstrip())
            continue
        wrapped = textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
        lines.extend(wrapped or [""])
    # Continuation lines carry the indentation: black re-indents class docstrings but leaves
    # the strings that document attributes as they are.
    margin = " " * indent
    body = _escape_quote_runs(
        "\n".join(lines[:1] + [margin + line if line else "" for line in lines[1:]]).strip()
    )
    if block and "\n" in body:
        body += "\n" + margin
    return f'"""{body}"""'


_UNSAFE_CHARACTER = re.compile(r"[^\x20-\x7e\n\t]")


def _escape_character(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _escape_quote_runs(body: str) -> str:
    """Escape every ``"`` of a run of three or more, and of a run that ends the body, so the
    text can neither close the triple-quoted literal nor merge with its closing quotes."""

    def escaped(run: re.Match[str]) -> str:
        quotes = run.group()
        return '\\"' * len(quotes) if len(quotes) >= 3 or run.end() == len(body) else quotes

    return _QUOTE_RUN.sub(escaped, body)


_QUOTE_RUN = re.compile('"+')


def type_expression(type_: ir.TypeRef) -> str:
    """The annotation of a value of ``type_`` (without the ``| None`` of optional fields)."""
    if isinstance(type_, ir.Scalar):
        return _SCALAR_TYPES[type_.name]
    if isinstance(type_, ir.EnumOf):
        values = ", ".join(literal(v) for v in type_.values)
        return f"Literal[{values}] | {_SCALAR_TYPES[type_.base.name]}"
    if isinstance(type_, ir.ListOf):
        item = type_expression(type_.item)
        return f"list[{_optional(item) if type_.item_nullable else item}]"
    if isinstance(type_, ir.MapOf):
        value = type_expression(type_.value)
        return f"dict[str, {_optional(value) if type_.value_nullable else value}]"
    if type_.module is None or type_.module == ir.RUNTIME_MODULE:
        return type_.name
    return f"{module_alias(type_.module)}.{type_.name}"


def module_alias(module: tuple[str, str]) -> str:
    """How a models module imports another group/version's models (``core_v1``)."""
    return "_".join(module)


def annotation(field: ir.Field) -> str:
    """A field's annotation: always optional, because decoding is lenient."""
    return _optional(type_expression(field.type))


def _optional(expression: str) -> str:
    return expression if expression == "Any" else f"{expression} | None"

