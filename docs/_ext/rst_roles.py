"""A griffe extension for the API reference: kgen_runtime's docstrings are Google-style with
Sphinx's inline roles, which Markdown would print as they are.

``:class:`~kgen_runtime.controller.Manager``` becomes `` `Manager` `` (``~`` keeps the last
dotted name, as Sphinx shows it), ``:meth:`Manager.start``` becomes `` `Manager.start` ``;
RST's ``\\ `` (an escaped space gluing a suffix, ``Request``\\ s) is dropped, and a
paragraph's closing ``::`` (RST's "a literal block follows") becomes ``:``, the block being
indented Markdown code already. Nothing else in a docstring changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")
_LITERAL_BLOCK = re.compile(r"::$", re.MULTILINE)


def _code(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rpartition('.')[2] if short else target}`"


def markdown_of(text: str) -> str:
    """The docstring ``text`` with its Sphinx roles and RST markers made Markdown."""
    text = _ROLE.sub(_code, text).replace("\\ ", "")
    return _LITERAL_BLOCK.sub(":", text)


class RstRoles(griffe.Extension):
    """Rewrites every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
