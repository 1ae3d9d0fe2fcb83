"""Formatting shortcuts keep the output byte-identical to plain black in its safe mode.

kgen formats with black's fast mode (no AST-equivalence or stability check) and skips black
for the files the renderer already writes in black's style (``kgen.emit.BLACK_STABLE``). Each
shortcut is held here against black itself: the CRD table for arbitrary text (Hypothesis),
and every file of the shared corpus against ``format_file_contents(fast=False)``, which
raises if formatting changed the code's AST or is not stable.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import black
import black.report
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen.emit import BLACK_STABLE, render_package
from kgen.emit.pyexpr import quoted
from kgen.generate import load_package
from kgen.write import _BLACK_MODE, _allow_long_lines, format_sources
from tests.generator.conftest import CORPUS, crd, requires_corpus

_counter = itertools.count()


def _black(source: str, *, fast: bool) -> str:
    try:
        return black.format_file_contents(source, fast=fast, mode=_BLACK_MODE)
    except black.report.NothingChanged:
        return source


def test_black_stable_names_only_files_the_renderer_writes() -> None:
    assert {"crds.py"} == BLACK_STABLE


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", '"plain"'),
        ("it's", '"it\'s"'),
        ('say "hi"', "'say \"hi\"'"),
        ("both ' and \"", '"both \' and \\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("\u00e9\n", '"\\xe9\\n"'),
    ],
)
def test_quoted_uses_blacks_quotes(value: str, expected: str) -> None:
    assert quoted(value) == expected
    assert _black(f"x = {quoted(value)}\n", fast=False) == f"x = {expected}\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    description=st.text(
        alphabet=st.sampled_from(list("ab '\"\\\n\t\u00e9\u202e\U0001f600#{}"))
        | st.characters(exclude_categories=["Cs", "Cc", "Cn"]),  # what YAML carries
        max_size=400,
    )
)
def test_crd_table_is_already_blacks_output(
    tmp_path_factory: pytest.TempPathFactory, description: str
) -> None:
    schema = {
        "type": "object",
        "description": description,
        "properties": {"spec": {"type": "string", "description": description[::-1]}},
    }
    folder = tmp_path_factory.mktemp(f"crd{next(_counter)}")
    source = folder / "widget.yaml"
    source.write_bytes(orjson.dumps(crd(schema=schema)))
    files = render_package(load_package([source], "widgets"))
    for path in BLACK_STABLE:
        assert _black(files[path], fast=False) == files[path]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@requires_corpus
def test_corpus_formats_as_safe_black() -> None:
    """Every corpus file as kgen writes it equals black's safe-mode output of its rendering
    (the stable files are checked unchanged by black, the rest AST-equivalent and stable)."""
    rendered = render_package(load_package([CORPUS], "kgen_corpus"))
    written = format_sources(rendered.items(), preformatted=BLACK_STABLE)
    assert set(written) == set(rendered)
    for path, source in sorted(rendered.items()):
        if path.endswith(".py"):
            expected = _allow_long_lines(_black(source, fast=False))
            assert written[path].decode() == expected, path


def test_example_crd_table_matches_committed() -> None:
    """The example package's committed crds.py (regenerated with black before this shortcut)
    is exactly what the renderer now writes without black."""
    example = Path(__file__).resolve().parents[2] / "examples" / "foo-crd"
    files = render_package(load_package([example / "crds"], "foo_api"))
    assert (example / "foo_api" / "crds.py").read_text() == files["crds.py"]
