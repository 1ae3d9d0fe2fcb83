"""The runnable examples in the docstrings of meta, scheme and codec stay true."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import kgen_runtime.codec
import kgen_runtime.meta
import kgen_runtime.scheme


@pytest.mark.parametrize(
    "module",
    [kgen_runtime.meta, kgen_runtime.scheme, kgen_runtime.codec],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
