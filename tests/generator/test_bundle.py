"""``kgen bundle-openapi``: the OpenAPI documents kgen_runtime.testing ships, kept current."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from kgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED_OPENAPI = ROOT.parent / "shared" / "openapi"
SHIPPED = ROOT / "runtime" / "kgen_runtime" / "testing" / "openapi"


@pytest.mark.skipif(not SHARED_OPENAPI.is_dir(), reason="../shared/openapi is not there")
def test_shipped_documents_are_current() -> None:
    result = CliRunner().invoke(main, ["bundle-openapi", str(SHARED_OPENAPI), "-o",
                                       str(SHIPPED), "--verify"])
    assert result.exit_code == 0, result.output


def test_bundle_writes_compact_deterministic_gzip_and_removes_stale(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    document = {"openapi": "3.0.0", "paths": {}, "components": {"schemas": {"b": {}, "a": {}}}}
    (source / "apis_x.example.com_v1.json").write_text(json.dumps(document, indent=2))
    (source / "version.json").write_text('{"major": "1"}')
    out = tmp_path / "out"
    (out).mkdir()
    (out / "apis_gone_v1.json.gz").write_bytes(b"")
    runner = CliRunner()
    assert runner.invoke(main, ["bundle-openapi", str(source), "-o", str(out), "--verify"]
                         ).exit_code == 1
    result = runner.invoke(main, ["bundle-openapi", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["apis_x.example.com_v1.json.gz"]
    data = (out / "apis_x.example.com_v1.json.gz").read_bytes()
    assert gzip.decompress(data) == orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    assert runner.invoke(main, ["bundle-openapi", str(source), "-o", str(out)]).exit_code == 0
    assert (out / "apis_x.example.com_v1.json.gz").read_bytes() == data
    assert runner.invoke(main, ["bundle-openapi", str(source), "-o", str(out), "--verify"]
                         ).exit_code == 0


def test_a_folder_without_documents_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["bundle-openapi", str(tmp_path), "-o",
                                       str(tmp_path / "out")])
    assert result.exit_code == 2 and "no OpenAPI v3 document found" in result.output
