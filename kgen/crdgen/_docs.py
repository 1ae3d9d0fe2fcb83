"""Descriptions of models and fields, read from docstrings as controller-gen reads doc comments.

A class's description is its own docstring; a field's is ``Field(description=...)`` or the
string literal right after the field (an attribute docstring), read from the class's source
with :mod:`ast` — the same convention pydantic's ``use_attribute_docstrings`` follows.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
from functools import lru_cache
from typing import Any

__all__ = ["attribute_docstrings", "class_description"]

# The docstring kgen's model template writes when a schema has no description.
_PLACEHOLDER = re.compile(r"The\s+``[^`]*``\s+object\.")


def class_description(cls: type[Any]) -> str:
    """The class's own docstring, cleaned; empty for none or kgen's placeholder docstring."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str):
        return ""
    text = inspect.cleandoc(doc)
    return "" if _PLACEHOLDER.fullmatch(text) else text


def attribute_docstrings(cls: type[Any]) -> dict[str, str]:
    """``{attribute: docstring}`` for the annotated attributes ``cls`` itself declares."""
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:  # a built-in class
        return {}
    node = _source_classes(filename).get(cls.__qualname__) if filename else None
    if node is None:  # defined where there is no source (a REPL, exec)
        return {}
    docs = {}
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _source_classes(filename: str) -> dict[str, ast.ClassDef]:
    """Every class statement of a source file by qualified name (each version parsed once)."""
    try:
        stat = os.stat(filename)
    except OSError:
        return {}
    return _class_nodes(filename, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _class_nodes(filename: str, mtime_ns: int, size: int) -> dict[str, ast.ClassDef]:
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return {}
    try:
        tree = ast.parse("".join(lines), filename)
    except SyntaxError:
        return {}
    found: dict[str, ast.ClassDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(prefix + node.name, node)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body, prefix)

    visit(tree.body, "")
    return found
