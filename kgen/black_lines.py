"""Black's output of a rendered module, running black only on the lines it would change.

The templates write black's style (double quotes where black puts them, magic trailing
commas, black's blank lines, docstrings as black leaves them), so black changes a rendered
module only where a logical line does not fit the line length: a long class name, a field
annotation listing many enum values, a long pattern. Those logical lines are found with
``ast``. The shapes that make up most of them (``Alias = Target``, ``class Name(Base):``,
``field: A | B | None = None``, a lone string or name in a collection written one element a
line) are laid out here as black lays them out; the others are formatted by black in one
batch per module, each wrapped in as many ``if _:`` blocks as its indentation (an element of
a collection between its statement's first and last lines), and spliced back. Black formats
a logical line from that line alone (only the blank lines around it depend on its
neighbours, and those are the template's), so the result is black's output of the whole
module at a fraction of the cost (issue 12 §4). What the splice does not know goes to black
whole. ``tests/generator/test_black_lines.py`` and ``test_black_stable.py`` hold all of it
against black itself.
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
    ``layout``: black's lines for it, when known without running black; ``frame``: for an
    element of a bracketed collection written one element a line, the first and last lines
    of its statement, which give black the element's context."""

    __slots__ = ("depth", "end", "frame", "header", "layout", "start")

    def __init__(
        self,
        start: int,
        end: int,
        depth: int,
        *,
        header: bool = False,
        layout: list[str] | None = None,
        frame: tuple[str, str] | None = None,
    ) -> None:
        self.start, self.end, self.depth, self.header = start, end, depth, header
        self.layout, self.frame = layout, frame

    def wrapped(self, lines: list[str]) -> str:
        opening = "".join(f"{_INDENT * level}if _:\n" for level in range(self.depth))
        body = f"{_INDENT * (self.depth + 1)}{_BODY}" if self.header else ""
        first, last = self.frame or ("", "")
        return opening + first + "".join(lines[self.start : self.end]) + last + body

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
        if self.frame:
            if len(inner) < 3 or (inner[0], inner[-1]) != self.frame:
                return None
            inner = inner[1:-1]
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
    pending: dict[str, list[_Span]] = {}
    for span in spans:
        if span.layout is None:
            text = span.wrapped(lines)
            span.layout = _FORMATTED.get(text)
            if span.layout is None:
                pending.setdefault(text, []).append(span)
    if pending:
        try:
            pieces = _split(black(_CUT.join(pending)).splitlines(keepends=True))
        except Exception:  # a cut the splice got wrong: black on the module says what is
            return black(source)
        if len(pieces) != len(pending):
            return black(source)
        for (text, same), piece in zip(pending.items(), pieces, strict=True):
            layout = same[0].unwrapped(piece)
            if layout is None:
                return black(source)
            for span in same:
                span.layout = layout
            _remember(text, layout)
    out: list[str] = []
    position = 0
    for span in spans:
        out += lines[position : span.start]
        out += span.layout or ()
        position = span.end
    out += lines[position:]
    return "".join(out)


# Black's lines for a wrapped logical line, by its text: corpora repeat them (the same
# embedded PodSpec in many CRDs), within a module and across the modules of a process.
_FORMATTED: dict[str, list[str]] = {}
_REMEMBERED = 50_000


def _remember(text: str, layout: list[str]) -> None:
    if len(_FORMATTED) >= _REMEMBERED:
        _FORMATTED.clear()
    _FORMATTED[text] = layout


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
            # block) to a line of their own when they do not fit. A module's docstring is
            # the first span, so it is the docstring of the batch too.
            if statement is body[0] and _too_long(lines, start, end):
                yield _Span(start, end, depth)
            continue
        inner = _block(statement)
        if inner is None:
            if not _too_long(lines, start, end):
                continue
            if end == start + 1:
                yield _Span(start, end, depth, layout=_layout(statement, lines[start]))
                continue
            elements = _exploded_elements(statement, lines)
            if elements is None:
                yield _Span(start, end, depth)
                continue
            frame = (lines[start], lines[end - 1])
            for element in elements:
                if not element.atom and _too_long(lines, element.start, element.end):
                    yield _Span(element.start, element.end, depth, frame=frame)
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


def _exploded_elements(statement: ast.stmt, lines: list[str]) -> list[_Element] | None:
    """The elements of a statement that is a bracketed collection written one element a
    line with a trailing comma (``__all__ = [``…``]``, ``Field(``…``)``); None for any
    other statement.

    Black keeps such a collection exploded (the trailing comma is "magic") and formats each
    element from that element alone, so an element that does not fit can be formatted
    apart from the others, between the statement's first and last lines.
    """
    value = getattr(statement, "value", None)
    if isinstance(value, ast.List | ast.Set) or (
        isinstance(value, ast.Tuple) and len(value.elts) > 1  # (x,) is not exploded
    ):
        elements = [_Element(e.lineno, e.end_lineno, _is_atom(e)) for e in value.elts]
    elif isinstance(value, ast.Dict) and all(value.keys):
        pairs = zip(value.keys, value.values, strict=True)
        elements = [_Element(k.lineno, v.end_lineno, False) for k, v in pairs if k]
    elif isinstance(value, ast.Call):
        arguments: list[ast.expr | ast.keyword] = [*value.args, *value.keywords]
        arguments.sort(key=lambda node: (node.lineno, node.col_offset))
        elements = [_Element(a.lineno, a.end_lineno, False) for a in arguments]
    else:
        return None
    start = statement.lineno - 1
    end = statement.end_lineno or statement.lineno
    if not (
        elements
        and lines[start].endswith(("(\n", "[\n", "{\n"))
        and lines[end - 1].strip() in (")", "]", "}")
        and not _too_long(lines, start, start + 1)
        and not _too_long(lines, end - 1, end)
    ):
        return None
    line = start + 1  # each element starts where the one before ended, on a comma
    for element in elements:
        if element.start != line or not lines[element.end - 1].endswith(",\n"):
            return None
        line = element.end
    return elements if line == end - 1 else None


class _Element:
    """Lines ``start:end`` (0-based) of one element of an exploded collection; ``atom``: a
    lone name or string, which black cannot split and so leaves as it is."""

    __slots__ = ("atom", "end", "start")

    def __init__(self, lineno: int, end_lineno: int | None, atom: bool) -> None:
        self.start, self.end, self.atom = lineno - 1, end_lineno or lineno, atom


def _is_atom(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) or _is_name(node)


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
    """``Alias = Target``: black wraps the target in parentheses, unless it is one name
    that does not fit even so (a dotted name is splittable to black, so always wrapped)."""
    if not (
        len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and _is_name(statement.value)
    ):
        return None
    indent = line[: statement.col_offset]
    target, value = line[statement.col_offset :].rstrip("\n").split(" = ")
    if isinstance(statement.value, ast.Name) and not _fits(f"{indent}{_INDENT}{value}"):
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
