"""Black's output of a rendered module, running black only on the lines it would change.

The templates write black's style (double quotes where black puts them, magic trailing
commas, black's blank lines, docstrings as black leaves them), so black changes a rendered
module only where a logical line does not fit the line length: a long class name, a field
annotation listing many enum values, a long pattern. Those logical lines are found with
``ast``. The shapes that make up most of them (``Alias = Target``, ``class Name(Base):``,
``field: A | B | None = None``) are laid out here as black lays them out; the others are
formatted by black in one batch, each wrapped in as many ``if _:`` blocks as its indentation,
and spliced back. Black formats a logical line from that line alone (only the blank lines
around it depend on its neighbours, and those are the template's), so the result is black's
output of the whole module at a fraction of the cost (issue 12 §4).
``tests/generator/test_black_stable.py`` holds that against black itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from kgen.emit.pyexpr import LINE_LENGTH

__all__ = ["format_long_lines"]

_INDENT = "    "
# Separates the wrapped lines of one batch: a comment at column 0 stays a line of its own.
_CUT = "# kgen: cut\n"
# The body black needs under a compound statement's header.
_BODY = "pass\n"


class _Unsupported(Exception):
    """A construct the splice does not handle; the whole module goes to black."""


class _Span:
    """Lines ``start:end`` (0-based) of one logical line, at ``depth`` indentation levels;
    ``header`` when it opens a block (a ``class``/``def`` line needs a body to parse);
    ``layout``: black's lines for it, when known without running black."""

    __slots__ = ("depth", "end", "header", "layout", "start")

    def __init__(
        self, start: int, end: int, depth: int, *, header: bool, layout: list[str] | None = None
    ) -> None:
        self.start, self.end, self.depth, self.header = start, end, depth, header
        self.layout = layout

    def wrapped(self, lines: list[str]) -> str:
        opening = "".join(f"{_INDENT * level}if _:\n" for level in range(self.depth))
        body = f"{_INDENT * (self.depth + 1)}{_BODY}" if self.header else ""
        return opening + "".join(lines[self.start : self.end]) + body

    def unwrapped(self, formatted: list[str]) -> list[str] | None:
        """The span's lines out of black's output of :meth:`wrapped` (``None`` if that
        output does not have the wrapper's shape)."""
        while formatted and formatted[0] == "\n":
            formatted = formatted[1:]
        while formatted and formatted[-1] == "\n":
            formatted = formatted[:-1]
        opening = [f"{_INDENT * level}if _:\n" for level in range(self.depth)]
        if formatted[: self.depth] != opening:
            return None
        inner = formatted[self.depth :]
        while inner and inner[0] == "\n":  # black puts a blank line before a nested def
            inner = inner[1:]
        if self.header:
            if not inner or inner[-1] != f"{_INDENT * (self.depth + 1)}{_BODY}":
                return None
            inner = inner[:-1]
        return inner if inner else None


def _fits(line: str) -> bool:
    return len(line) <= LINE_LENGTH  # generated code is ASCII: one column per character


def _too_long(lines: list[str], start: int, end: int) -> bool:
    return any(len(lines[i]) > LINE_LENGTH + 1 for i in range(start, end))  # + the newline


def format_long_lines(source: str, black: Callable[[str], str]) -> str:
    """``source`` as ``black`` (a whole-module formatter) formats it, calling ``black`` once
    on just the logical lines that do not fit and have no known layout, or on the whole
    module when the source is not one of the shapes the splice handles (or does not parse:
    black reports that)."""
    lines = source.splitlines(keepends=True)
    if not _too_long(lines, 0, len(lines)):
        return source
    try:
        spans = list(_spans(ast.parse(source).body, lines, 0))
    except (SyntaxError, _Unsupported):
        return black(source)
    pending = [span for span in spans if span.layout is None]
    if pending:
        batch = _CUT.join(span.wrapped(lines) for span in pending)
        pieces = _split(black(batch).splitlines(keepends=True))
        if len(pieces) != len(pending):
            return black(source)
        for span, piece in zip(pending, pieces, strict=True):
            span.layout = span.unwrapped(piece)
            if span.layout is None:
                return black(source)
    out: list[str] = []
    position = 0
    for span in spans:
        out += lines[position : span.start]
        out += span.layout or ()
        position = span.end
    out += lines[position:]
    return "".join(out)


def _split(formatted: list[str]) -> list[list[str]]:
    pieces: list[list[str]] = [[]]
    for line in formatted:
        if line == _CUT:
            pieces.append([])
        else:
            pieces[-1].append(line)
    return pieces


def _spans(body: list[ast.stmt], lines: list[str], depth: int) -> Iterator[_Span]:
    """The logical lines of ``body`` that black changes because a line is too long.

    A string statement is left alone (black does not split strings; the templates write
    docstrings as black leaves them) unless it is a block's docstring whose closing quotes
    black moves. A block's header is formatted apart from its body, which is searched in
    turn.
    """
    for statement in body:
        start = statement.lineno - 1
        end = statement.end_lineno or statement.lineno
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            # Black moves a docstring's closing quotes (the first statement of a module or
            # block) to a line of their own when they do not fit.
            if statement is body[0] and _too_long(lines, start, end):
                if not depth:
                    raise _Unsupported  # a module docstring: not the first line of a batch
                yield _Span(start, end, depth, header=False)
            continue
        inner = _block(statement)
        if inner is None:
            if _too_long(lines, start, end):
                layout = _layout(statement, lines[start]) if end == start + 1 else None
                yield _Span(start, end, depth, header=False, layout=layout)
            continue
        header_end = inner[0].lineno - 1
        for decorator in getattr(statement, "decorator_list", ()):
            # Its own logical line, before the header (``@property``): short in templates.
            if _too_long(lines, decorator.lineno - 1, decorator.end_lineno or decorator.lineno):
                raise _Unsupported
        if _too_long(lines, start, header_end):
            layout = _class_layout(statement, lines[start]) if header_end == start + 1 else None
            yield _Span(start, header_end, depth, header=True, layout=layout)
        yield from _spans(inner, lines, depth + 1)


def _block(statement: ast.stmt) -> list[ast.stmt] | None:
    """The body of a compound statement with one block (``class``, ``def``, ``if`` without
    ``else``…), None for a simple statement."""
    body: list[ast.stmt] | None = getattr(statement, "body", None)
    if body is None:
        return None
    if any(getattr(statement, name, None) for name in ("orelse", "handlers", "finalbody")):
        raise _Unsupported  # a second block: not written by the templates
    return body


# Black's layouts of the long lines templates write most, from the line's own text (one
# physical line, as rendered). Each returns None for a variant it does not know.


def _layout(statement: ast.stmt, line: str) -> list[str] | None:
    if isinstance(statement, ast.Assign):
        return _alias_layout(statement, line)
    if isinstance(statement, ast.AnnAssign):
        return _field_layout(statement, line)
    return None


def _is_name(expression: ast.expr) -> bool:
    """A name or a dotted name (``Foo``, ``core_v1.Pod``)."""
    while isinstance(expression, ast.Attribute):
        expression = expression.value
    return isinstance(expression, ast.Name)


def _alias_layout(statement: ast.Assign, line: str) -> list[str] | None:
    """``Alias = Target``: black wraps the target in parentheses when that makes it fit, and
    leaves the line as it is when nothing does."""
    if not (
        len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and _is_name(statement.value)
    ):
        return None
    indent = line[: statement.col_offset]
    target, value = line[statement.col_offset :].rstrip("\n").split(" = ")
    if not _fits(f"{indent}{_INDENT}{value}"):
        return [line]
    return [f"{indent}{target} = (\n", f"{indent}{_INDENT}{value}\n", f"{indent})\n"]


def _class_layout(statement: ast.stmt, line: str) -> list[str] | None:
    """``class Name(Base):``: black moves the one base to a line of its own."""
    if not (
        isinstance(statement, ast.ClassDef)
        and len(statement.bases) == 1
        and not statement.keywords
        and _is_name(statement.bases[0])
    ):
        return None
    indent = line[: statement.col_offset]
    head, base = line.rstrip("\n").rsplit("(", 1)
    if not base.endswith("):"):
        return None
    return [f"{head}(\n", f"{indent}{_INDENT}{base[:-2]}\n", f"{indent}):\n"]


def _field_layout(statement: ast.AnnAssign, line: str) -> list[str] | None:
    """``field: A | list[B] | None = None``: black moves the default to a line of its own
    if that is enough; otherwise it parenthesises the annotation, one operand a line if it
    does not fit on one, and a ``list[…]`` operand that does not fit either around its
    item."""
    value = statement.value
    if not (
        isinstance(statement.target, ast.Name)
        and value is not None
        and (_is_name(value) or (isinstance(value, ast.Constant) and value.value is None))
    ):
        return None
    operands = _union_operands(statement.annotation)
    if operands is None or len(operands) < 2 or not _is_none(operands[-1]):
        return None
    indent = line[: statement.col_offset]
    inner = indent + _INDENT
    head, rest = line.rstrip("\n").split(": ", 1)
    annotation, default = rest.rsplit(" = ", 1)
    texts = annotation.split(" | ")
    if len(texts) != len(operands):
        return None
    if _fits(f"{head}: {annotation} = ("):  # the default alone moves, in parentheses
        return [f"{head}: {annotation} = (\n", f"{inner}{default}\n", f"{indent})\n"]
    layout = [f"{head}: (\n"]
    if _fits(f"{inner}{annotation}"):
        layout.append(f"{inner}{annotation}\n")
    else:
        for index, (operand, text) in enumerate(zip(operands, texts, strict=True)):
            prefix = "| " if index else ""
            if _fits(f"{inner}{prefix}{text}") or not isinstance(operand, ast.Subscript):
                layout.append(f"{inner}{prefix}{text}\n")
            else:
                item = text.removeprefix("list[").removesuffix("]")
                layout += [f"{inner}{prefix}list[\n", f"{inner}{_INDENT}{item}\n", f"{inner}]\n"]
    layout.append(f"{indent}) = {default}\n")
    return layout


def _union_operands(annotation: ast.expr) -> list[ast.expr] | None:
    """The operands of ``A | B | …`` when each is a name or ``list[name]``, else None."""
    operands: list[ast.expr] = []
    while isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        operands.insert(0, annotation.right)
        annotation = annotation.left
    operands.insert(0, annotation)
    for operand in operands:
        if isinstance(operand, ast.Subscript):
            if not (
                isinstance(operand.value, ast.Name)
                and operand.value.id == "list"
                and _is_name(operand.slice)
            ):
                return None
        elif not (_is_name(operand) or _is_none(operand)):
            return None
    return operands


def _is_none(expression: ast.expr) -> bool:
    return isinstance(expression, ast.Constant) and expression.value is None
