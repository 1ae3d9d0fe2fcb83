"""``kgen generate`` on bad input: every error names the file, the document's index and the
JSON path, the command exits non-zero, and the output directory is left exactly as it was.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kgen.cli import main
from kgen.diagnostics import GenerateError
from kgen.generate import load_package

from .conftest import crd

SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A widget.",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "default": 1},
                "colour": {"type": "string", "enum": ["red", "blue"]},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}
WIDGET = crd("Widget", SCHEMA, subresources={"status": {}})
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}
# Line 7 is the one where the parser finds the flow sequence of line 6 never closed.
MALFORMED = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
spec:
  sizes: [1, 2
  colour: red
"""
MALFORMED_JSON = """\
{"apiVersion": "apiextensions.k8s.io/v1",
 "kind": "CustomResourceDefinition",
 "spec": {"group": "example.com",,}}
"""
EXPECTED_TYPES = "array, boolean, integer, number, object, string"


def _with(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``document`` with the value at ``path`` replaced (or removed if None)."""
    changed = copy.deepcopy(document)
    parent: Any = changed
    for part in path[:-1]:
        parent = parent[part]
    if value is None:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return changed


def _yaml(*documents: dict[str, Any]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False)


SPEC_PROPERTIES = ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> CliRunner:
    """A runner whose black cache is private to this module (KGEN_CACHE_DIR)."""
    return CliRunner(env={"KGEN_CACHE_DIR": str(tmp_path_factory.mktemp("black-cache"))})


def generate(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(main, ["generate", *map(str, args)])


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under ``root`` with its bytes (None for directories) and mtime."""
    return {
        path.relative_to(root).as_posix(): (
            path.read_bytes() if path.is_file() else None,
            path.stat().st_mtime_ns,
        )
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
def out(runner: CliRunner, tmp_path: Path) -> Iterator[Path]:
    """An output directory holding a previous generation and a hand-written file; the test
    must leave it byte-for-byte and mtime-for-mtime as it was."""
    source = tmp_path / "previous.yaml"
    source.write_text(_yaml(WIDGET))
    root = tmp_path / "out" / "widgets"
    result = generate(runner, source, "-o", root)
    assert result.exit_code == 0, result.output
    (root / "NOTES.md").write_text("hand-written, not generated\n")
    before = snapshot(tmp_path / "out")
    assert "widgets/example/v1/models.py" in before
    yield root
    assert snapshot(tmp_path / "out") == before


def _cases() -> Iterator[Any]:
    spec_path = "spec.versions[0].schema.openAPIV3Schema.properties.spec"
    yield pytest.param(
        {"bad.yaml": MALFORMED},
        ["bad.yaml[1]: error: invalid YAML at line 7, column 9"],
        id="malformed-yaml",
    )
    yield pytest.param(
        {"bad.json": MALFORMED_JSON},
        ["bad.json: error: invalid JSON: unexpected character, expected a string key: line 3"],
        id="malformed-json",
    )
    yield pytest.param(
        {"widget.json": json.dumps(_with(WIDGET, ("spec", "names", "plural"), None))},
        ["widget.json[0]: spec.names.plural: error: required"],
        id="json-missing-plural",
    )
    yield pytest.param(
        {"config.yaml": _yaml(CONFIG_MAP)},
        ["config.yaml: error: no CustomResourceDefinition found"],
        id="no-crd",
    )
    yield pytest.param(
        {"a.yaml": _yaml(WIDGET), "b.yaml": _yaml(CONFIG_MAP, WIDGET)},
        ["b.yaml[1]: spec.names.kind: error: example.com/Widget is also defined by {d}/a.yaml[0]"],
        id="same-group-kind-twice",
    )
    unknown_type = _with(WIDGET, (*SPEC_PROPERTIES, "properties", "size", "type"), "strng")
    yield pytest.param(
        {"widget.yaml": _yaml(unknown_type)},
        [
            f"widget.yaml[0]: {spec_path}.properties.size.type: error: "
            f"unknown schema type 'strng'; expected one of {EXPECTED_TYPES}"
        ],
        id="unknown-schema-type",
    )
    yield pytest.param(
        {"widget.yaml": _yaml(_with(WIDGET, ("apiVersion",), "apiextensions.k8s.io/v2"))},
        [
            "widget.yaml[0]: apiVersion: error: unsupported CustomResourceDefinition apiVersion "
            "'apiextensions.k8s.io/v2'"
        ],
        id="unsupported-api-version",
    )
    yield pytest.param(
        {"widget.yaml": _yaml(CONFIG_MAP, _with(WIDGET, ("spec", "names", "plural"), None))},
        ["widget.yaml[1]: spec.names.plural: error: required"],
        id="missing-plural",
    )
    yield pytest.param(
        {
            "bad.yaml": MALFORMED,
            "widget.yaml": _yaml(
                _with(WIDGET, ("apiVersion",), "apiextensions.k8s.io/v2"),
                _with(WIDGET, ("spec", "names", "plural"), None),
            ),
        },
        [
            "bad.yaml[1]: error: invalid YAML at line 7, column 9",
            "widget.yaml[0]: apiVersion: error: unsupported",
            "widget.yaml[1]: spec.names.plural: error: required",
        ],
        id="every-load-problem-in-one-run",
    )
    yield pytest.param(
        {"bad.yaml": MALFORMED, "widget.yaml": _yaml(unknown_type)},
        [
            "bad.yaml[1]: error: invalid YAML at line 7, column 9",
            f"widget.yaml[0]: {spec_path}.properties.size.type: error: unknown schema type",
        ],
        id="schema-problems-reported-with-load-problems",
    )


@pytest.mark.parametrize(("files", "expected"), list(_cases()))
def test_bad_input_is_reported_with_location_and_leaves_output_untouched(
    runner: CliRunner, out: Path, tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name, text in files.items():
        (inputs / name).write_text(text)
    result = generate(runner, *(inputs / name for name in files), "-o", out)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == len(expected), result.stderr
    for line, prefix in zip(sorted(lines), expected, strict=True):
        assert line.startswith(f"{inputs}/{prefix.format(d=inputs)}"), (line, prefix)
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--frobnicate"], "No such option '--frobnicate'", id="unknown-flag"),
        pytest.param(["--package", "my-api"], "'my-api' is not a valid", id="hyphen"),
        pytest.param(["--package", "1api"], "'1api' is not a valid", id="leading-digit"),
        pytest.param(["--package", ""], "'' is not a valid", id="empty"),
        pytest.param(
            ["--package", "class"],
            "'class' is not a valid",
            id="keyword",
        ),
    ],
)
def test_usage_errors_exit_2_and_leave_output_untouched(
    runner: CliRunner, out: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    source = tmp_path / "widget.yaml"
    source.write_text(_yaml(WIDGET))
    result = generate(runner, source, "-o", out, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stderr.startswith("Usage: ")


def test_output_directory_that_is_not_a_package_name_needs_package(
    runner: CliRunner, tmp_path: Path
) -> None:
    source = tmp_path / "widget.yaml"
    source.write_text(_yaml(WIDGET))
    result = generate(runner, source, "-o", tmp_path / "my-api")
    assert result.exit_code == 2
    assert "'my-api' is not a Python package name; name the directory as" in result.stderr
    assert not (tmp_path / "my-api").exists()


def test_missing_input_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = generate(runner, tmp_path / "absent.yaml", "-o", tmp_path / "api")
    assert result.exit_code == 2
    assert "absent.yaml' does not exist" in result.stderr
    assert not (tmp_path / "api").exists()


def _v1beta1(document: dict[str, Any]) -> dict[str, Any]:
    """The apiextensions.k8s.io/v1beta1 spelling of a single-version v1 CRD: the schema,
    subresources and printer columns are CRD-wide, ``version`` names the only version."""
    spec = copy.deepcopy(document["spec"])
    (version,) = spec.pop("versions")
    spec["version"] = version["name"]
    spec["validation"] = version["schema"]
    spec["subresources"] = version["subresources"]
    spec["additionalPrinterColumns"] = [
        {"name": c["name"], "type": c["type"], "JSONPath": c["jsonPath"]}
        for c in version["additionalPrinterColumns"]
    ]
    return {**document, "apiVersion": "apiextensions.k8s.io/v1beta1", "spec": spec}


def test_v1beta1_crd_generates_exactly_like_its_v1_form(runner: CliRunner, tmp_path: Path) -> None:
    v1 = copy.deepcopy(WIDGET)
    v1["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
    ]
    trees = []
    for name, document in (("v1", v1), ("v1beta1", _v1beta1(v1))):
        source = tmp_path / f"{name}.yaml"
        source.write_text(_yaml(document))
        root = tmp_path / name / "widgets"
        result = generate(runner, source, "-o", root)
        assert result.exit_code == 0, result.output
        trees.append({p: data for p, (data, _) in snapshot(root).items()})
    assert trees[0] == trees[1]
    assert b"class Widget(KubeObject):" in (trees[1]["example/v1/models.py"] or b"")


def test_v1beta1_crd_gets_the_api_servers_v1beta1_defaults(tmp_path: Path) -> None:
    """v1beta1's SetDefaults_CustomResourceDefinitionSpec: no scope means Namespaced; no
    singular/listKind derive from the kind; a lone ``version`` is the served storage one."""
    spec = {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "version": "v1",
        "validation": {"openAPIV3Schema": SCHEMA},
    }
    document = {**WIDGET, "apiVersion": "apiextensions.k8s.io/v1beta1", "spec": spec}
    source = tmp_path / "widgets.yaml"
    source.write_text(_yaml(document))
    (gv,) = load_package([source], "widgets").group_versions
    (kind,) = gv.kinds
    assert (kind.namespaced, kind.singular, kind.list_kind, kind.storage) == (
        True, "widget", "WidgetList", True,
    )


def test_v1_crd_without_scope_is_still_an_error(tmp_path: Path) -> None:
    document = _with(WIDGET, ("spec", "scope"), None)
    source = tmp_path / "widgets.yaml"
    source.write_text(_yaml(document))
    with pytest.raises(GenerateError) as raised:
        load_package([source], "widgets")
    assert [str(d) for d in raised.value.diagnostics] == [
        f"{source}[0]: spec.scope: error: must be 'Namespaced' or 'Cluster', got None"
    ]


def test_package_name_differing_from_the_output_directory_is_refused(
    runner: CliRunner, out: Path, tmp_path: Path
) -> None:
    """A package is imported by its directory's name: ``-o out/widgets --package gadgets``
    would write a package ``import gadgets`` cannot find."""
    source = tmp_path / "widget.yaml"
    source.write_text(_yaml(WIDGET))
    result = generate(runner, source, "-o", out, "--package", "gadgets")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"{out}: error: --package 'gadgets' differs from the output directory's name "
        "'widgets'; a package is imported by its directory's name\n"
    )


@pytest.mark.parametrize("relative", ["__init__.py", "example/v1/client.py", "py.typed"])
def test_a_file_kgen_did_not_write_is_never_overwritten(
    runner: CliRunner, tmp_path: Path, relative: str
) -> None:
    """The user's own file in the output tree stops the run: error naming it, nothing written."""
    source = tmp_path / "widget.yaml"
    source.write_text(_yaml(WIDGET))
    root = tmp_path / "widgets"
    (root / relative).parent.mkdir(parents=True)
    (root / relative).write_text("# my own code\n")
    before = snapshot(root)
    result = generate(runner, source, "-o", root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"{root / relative}: error: not generated by kgen (no '# Code generated by kgen' "
        "header); kgen never overwrites it: move it out of the output directory\n"
    )
    assert snapshot(root) == before


def test_progress_goes_to_stderr_with_verbose_and_quiet_prints_nothing(
    runner: CliRunner, tmp_path: Path
) -> None:
    source = tmp_path / "widget.yaml"
    source.write_text(_yaml(WIDGET))
    fresh = CliRunner(env={"KGEN_CACHE_DIR": str(tmp_path / "cache")})
    verbose = generate(fresh, source, "-o", tmp_path / "a" / "widgets", "-v")
    assert verbose.exit_code == 0, verbose.output
    steps = [line.split("s ", 1)[1] for line in verbose.stderr.splitlines()]
    assert steps == [
        "loading inputs",
        "loaded 1 kinds in 1 group/versions",
        "rendered 15 files; formatted 13 (the rest cached or already in black's style)",
    ]
    assert all(line.startswith("kgen: ") for line in verbose.stderr.splitlines())
    again = generate(fresh, source, "-o", tmp_path / "b" / "widgets", "--verbose")
    assert "inputs unchanged since a previous run: reusing its output" in again.stderr
    quiet = generate(runner, source, "-o", tmp_path / "c" / "widgets", "-q")
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")
    assert (tmp_path / "c" / "widgets" / "example" / "v1" / "models.py").is_file()
    plain = generate(runner, source, "-o", tmp_path / "d" / "widgets")  # stderr: not a tty
    assert plain.stderr == ""
    assert plain.stdout.startswith(f"{tmp_path / 'd' / 'widgets'}: 1 kinds")


def test_help_says_where_the_cache_lives_and_that_openapi_is_accepted(
    runner: CliRunner,
) -> None:
    text = runner.invoke(main, ["generate", "--help"]).output
    assert "Kubernetes OpenAPI v3" in text
    assert "$KGEN_CACHE_DIR" in text and "~/.cache/kgen" in text
    assert "-q, --quiet" in text and "-v, --verbose" in text
