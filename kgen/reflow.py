"""Reflow the docstrings and comments of a scaffolded module that names made too long.

The scaffold's templates put kind, group and package names into prose (a docstring
"Reconciles PostgresDatabaseBackupSchedule objects …"). Black shortens code but leaves strings and
comments as they are, so a long name pushes such a line past the project's own ruff line
length (E501). Only the paragraphs that hold a line over the limit are rewrapped, at word
boundaries; every other line stays as the template wrote it.
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

__all__ = ["reflow_long_prose"]

_QUOTES = '"""'


def reflow_long_prose(source: str, width: int) -> str:
    """``source`` with each docstring or comment paragraph that has a line longer than
    ``width`` columns rewrapped to fit (a single word longer than that stays whole)."""
    lines = source.splitlines(keepends=True)
    blocks = _docstrings(source) + _comment_blocks(source)
    for first, last, indent, prefix in sorted(blocks, reverse=True):
        if all(len(lines[i].rstrip("\n")) <= width for i in range(first, last + 1)):
            continue
        body = [line.rstrip("\n") for line in lines[first : last + 1]]
        lines[first : last + 1] = _rewrap(body, indent, prefix, width)
    return "".join(lines)


def _docstrings(source: str) -> list[tuple[int, int, int, str]]:
    """(first line, last line, indent, "") of each triple-quoted string statement: module,
    class, function and attribute docstrings."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and node.end_lineno is not None
        ):
            found.append((node.lineno - 1, node.end_lineno - 1, node.col_offset, ""))
    lines = source.splitlines()
    return [
        block
        for block in found
        if lines[block[0]][block[2] :].startswith(_QUOTES) and lines[block[1]].endswith(_QUOTES)
    ]


def _comment_blocks(source: str) -> list[tuple[int, int, int, str]]:
    """(first line, last line, indent, "# ") of each run of whole-line comments at one indent
    (scaffold markers such as ``# +kgen:scaffold:…`` end a run and are never rewrapped)."""
    comments: dict[int, int] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
            text = token.string
            if text.startswith("# ") and not text.startswith("# +"):
                comments[token.start[0] - 1] = token.start[1]
    blocks: list[tuple[int, int, int, str]] = []
    for row, indent in sorted(comments.items()):
        if blocks and blocks[-1][1] == row - 1 and blocks[-1][2] == indent:
            blocks[-1] = (blocks[-1][0], row, indent, "# ")
        else:
            blocks.append((row, row, indent, "# "))
    return blocks


def _rewrap(body: list[str], indent: int, prefix: str, width: int) -> list[str]:
    """The lines of one docstring or comment block, its too-long paragraphs rewrapped."""
    margin = " " * indent
    texts = [line[indent:] if line.startswith(margin) else line.strip() for line in body]
    texts = [text[len(prefix) :] for text in texts]
    out: list[str] = []
    paragraph: list[str] = []
    for text in [*texts, ""]:
        if text.strip() and text.strip() != _QUOTES:
            paragraph.append(text)
            continue
        if paragraph:
            out.extend(_fill(paragraph, indent, prefix, width))
            paragraph = []
        # a blank line, or closing quotes on a line of their own, stays as it is
        out.append(margin + text if text.strip() else "")
    return [line + "\n" for line in out[:-1]]


def _fill(paragraph: list[str], indent: int, prefix: str, width: int) -> list[str]:
    margin = " " * indent + prefix
    if all(len(margin) + len(text) <= width for text in paragraph):
        return [margin + text for text in paragraph]
    words = " ".join(text.strip() for text in paragraph)
    return textwrap.wrap(
        words,
        width=width,
        initial_indent=margin,
        subsequent_indent=margin,
        break_long_words=False,
        break_on_hyphens=False,
    )
