"""Formatting shortcuts keep the output byte-identical to plain black in its safe mode.

The templates write black's style and black runs only on the logical lines that do not fit
(``kgen.black_lines``, in black's fast mode: no AST-equivalence or stability check); the CRD
table (``kgen.emit.BLACK_STABLE``) is not formatted at all. Each shortcut is held here
against black itself: the CRD table for arbitrary text (Hypothesis), a few packages of
representative shapes in the default run, and (slow) every file of the shared corpus and of
the built-in API against ``format_file_contents(fast=False)``, which raises if formatting
changed the code's AST or is not stable.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import black
import black.report
import orjson
import pytest
from black.strings import normalize_string_quotes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen.emit import BLACK_STABLE, render_package
from kgen.emit.pyexpr import literal, quoted, string_chunks
from kgen.generate import load_package
from kgen.write import _allow_long_lines, _black_mode, format_sources
from tests.generator.conftest import CORPUS, SHARED, crd, requires_corpus

OPENAPI = SHARED / "openapi"
REPOSITORY = Path(__file__).resolve().parents[2]

_counter = itertools.count()


def _black(source: str, *, fast: bool) -> str:
    try:
        return black.format_file_contents(source, fast=fast, mode=_black_mode())
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


@settings(max_examples=300, deadline=None)
@given(value=st.text(alphabet=st.sampled_from(list("a'\"\\\n\u00e9"))))
def test_quoted_is_blacks_quote_normalisation(value: str) -> None:
    """Black's own rule (``normalize_string_quotes``) on ``ascii``'s literal, for any mix
    of quotes, backslashes and escapes."""
    assert quoted(value) == normalize_string_quotes(ascii(value))


def test_literal_writes_strings_in_blacks_quotes() -> None:
    value = {"it's": ["a", 'say "hi"', 1.5, None, True], "k": float("inf")}
    expected = """{"it's": ["a", 'say "hi"', 1.5, None, True], "k": float("inf")}"""
    assert literal(value) == expected
    assert _black(f"x = {expected}\n", fast=False) == f"x = {expected}\n"


_TEXT = st.text(
    alphabet=st.sampled_from(list("ab '\"\\\n\t\u00e9\u202e\U0001f600#{}"))
    | st.characters(exclude_categories=["Cs", "Cc", "Cn"]),  # what YAML carries
    max_size=400,
)


@settings(max_examples=200, deadline=None)
@given(value=_TEXT, width=st.integers(min_value=3, max_value=90))
def test_string_chunks_are_the_longest_pieces_that_fit(value: str, width: int) -> None:
    """Chunks join to the value; each is quoted in ``width`` columns (a quote counted as
    escaped) unless it is a single character, and takes as much as fits."""

    def columns(text: str) -> int:
        return 2 + sum(2 if c == "'" else len(ascii(c)) - 2 for c in text)

    chunks = string_chunks(value, width)
    assert "".join(chunks) == value
    for index, chunk in enumerate(chunks):
        assert columns(chunk) <= width or len(chunk) == 1
        assert len(quoted(chunk)) <= columns(chunk)
        if index + 1 < len(chunks):
            assert columns(chunk + chunks[index + 1][0]) > width


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


def _assert_written_as_black_writes(package: str, inputs: list[Path], fast: bool) -> None:
    """Every file kgen writes for ``inputs`` equals black's output of its rendering, and
    black leaves it as it is."""
    rendered = render_package(load_package(inputs, package))
    written = format_sources(rendered.items(), preformatted=BLACK_STABLE)
    assert set(written) == set(rendered)
    for path, source in sorted(rendered.items()):
        if path.endswith(".py"):
            text = written[path].decode()
            assert text == _allow_long_lines(_black(source, fast=fast)), path
            assert _black(text, fast=True) == text, path


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
@requires_corpus
@pytest.mark.parametrize(
    "inputs",
    [
        # Long class names, aliases and apply-configuration docstrings (cert-manager),
        # enums, defaults and schema extras (prometheus-operator), the built-in admission
        # registration types (markers, merge rules, a types-only module beside them).
        ["cert-manager__cert-manager__challenges.yaml"],
        ["prometheus-operator__prometheus-operator__servicemonitors.yaml"],
        ["openapi/apis_admissionregistration.k8s.io_v1.json"],
        # Two served versions: a conversion.py with one-element path tuples; two kinds
        # converted in one module (cluster-api).
        ["examples/foo-crd/crds"],
        [
            "kubernetes-sigs__cluster-api__clusters.yaml",
            "kubernetes-sigs__cluster-api__clusterclasses.yaml",
        ],
    ],
    ids=lambda inputs: inputs[0].split("__")[-1].removesuffix(".yaml"),
)
def test_representative_packages_are_written_as_black_writes_them(inputs: list[str]) -> None:
    paths = [
        SHARED / name if name.startswith("openapi/")
        else REPOSITORY / name if name.startswith("examples/")
        else CORPUS / name
        for name in inputs
    ]
    _assert_written_as_black_writes("kgen_sample", paths, fast=True)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@requires_corpus
@pytest.mark.parametrize(("package", "inputs"), [("kgen_corpus", CORPUS), ("api", OPENAPI)])
def test_every_file_is_written_as_safe_black_writes_it(package: str, inputs: Path) -> None:
    """Every corpus and built-in API file as kgen writes it equals black's safe-mode output
    of its rendering (AST-equivalent and stable), and black leaves it unchanged."""
    _assert_written_as_black_writes(package, [inputs], fast=False)


def test_example_crd_table_matches_committed() -> None:
    """The example package's committed crds.py (regenerated with black before this shortcut)
    is exactly what the renderer now writes without black."""
    example = Path(__file__).resolve().parents[2] / "examples" / "foo-crd"
    files = render_package(load_package([example / "crds"], "foo_api"))
    assert (example / "foo_api" / "crds.py").read_text() == files["crds.py"]
