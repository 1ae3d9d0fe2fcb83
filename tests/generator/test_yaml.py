"""The loader reads YAML as the API server does (go-yaml v2 through sigs.k8s.io/yaml)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgen.diagnostics import Diagnostic
from kgen.generate import load_package
from kgen.ir import EnumOf, Scalar
from kgen.load import read_documents
from kgen.load.goyaml import Loader
from tests.generator.conftest import crd


def _load(text: str) -> Any:
    return yaml.load(text, Loader=Loader)


# Plain scalar → what go-yaml v2 decodes it to (then JSON): resolve.go's table and strconv.
GO_YAML_V2 = [
    ("=", "="),
    ("y", True),
    ("Y", True),
    ("yes", True),
    ("On", True),
    ("TRUE", True),
    ("n", False),
    ("NO", False),
    ("off", False),
    ("yEs", "yEs"),
    ("~", None),
    ("Null", None),
    ("1:20", "1:20"),
    ("190:20:30.15", "190:20:30.15"),
    ("1e3", 1000.0),
    ("1.5e3", 1500.0),
    ("1.0e+3", 1000.0),
    (".5", 0.5),
    ("1_000", 1000),
    ("0777", 511),
    ("0o17", 15),
    ("0x1F", 31),
    ("-0b101", -5),
    ("09", 9.0),
    ("+12", 12),
    ("18446744073709551615", 18446744073709551615),
    ("-9223372036854775809", -9223372036854775809.0),
    ("1e400", "1e400"),
    ("2024-01-01", "2024-01-01"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("-a", "-a"),
    ("0x", "0x"),
    ("+.inf", math.inf),
    (".iNf", ".iNf"),
    ("<", "<"),
]


@pytest.mark.parametrize(("text", "expected"), GO_YAML_V2, ids=[t for t, _ in GO_YAML_V2])
def test_plain_scalars_decode_as_go_yaml_v2_does(text: str, expected: Any) -> None:
    value = _load(f"v: {text}\n")["v"]
    assert value == expected
    assert type(value) is type(expected)


def test_quoted_scalars_stay_strings() -> None:
    assert _load("['=', \"yes\", '1e3', 'y']") == ["=", "yes", "1e3", "y"]


def test_boolean_and_integer_keys_become_their_json_text() -> None:
    """``y:`` is the key "true" to the API server (go-yaml v2), a known YAML 1.1 trap."""
    loaded = _load("on: 1\nn: 2\n3: x\nname: y\n")
    assert loaded == {"true": 1, "false": 2, "3": "x", "name": True}


def test_merge_keys_still_merge() -> None:
    assert _load("a: &base {x: 1}\nb:\n  <<: *base\n  z: 2\n")["b"] == {"x": 1, "z": 2}


def test_float_key_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text("a: 1\nb:\n  1.5: x\n")
    (problem,) = read_documents(path)
    assert isinstance(problem, Diagnostic)
    assert "line 3, column 3" in str(problem)
    assert "unsupported mapping key 1.5" in str(problem)


def test_explicit_tag_that_does_not_fit_points_at_the_scalar(tmp_path: Path) -> None:
    path = tmp_path / "tagged.yaml"
    path.write_text("a: 1\n---\n" + "x: 1\n" * 3000 + "b: !!int abc\n" + "y: 1\n" * 3000)
    problems = list(read_documents(path))
    assert [type(p) for p in problems] == [type(problems[0]), Diagnostic]
    assert f"{path}[1]: error: invalid YAML at line 3003, column 4" in str(problems[1])


def test_enum_value_equals_sign_generates(tmp_path: Path) -> None:
    """An enum ``- =`` (an operator list) is the string "=" to the API server."""
    schema = {"type": "object", "properties": {"op": {"type": "string", "enum": ["<", "EQ"]}}}
    manifest = yaml.safe_dump(crd("Rule", schema), sort_keys=False).replace("- EQ", "- =")
    assert "- =\n" in manifest
    path = tmp_path / "rule.yaml"
    path.write_text(manifest)
    (gv,) = load_package([path], "pkg").group_versions
    (op,) = gv.models[0].fields
    assert op.rules.enum == ("<", "=")
    assert op.type == EnumOf(("<", "="), Scalar("str"))
