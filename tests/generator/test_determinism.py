"""Generated output is a pure function of the inputs, and writing it touches only what changed.

* Byte-identical from run to run, whatever the order of the input files and whatever the
  process's string-hash seed (set iteration order differs between processes).
* Only files whose bytes change are rewritten; unchanged files keep their mtime.
* ``--verify`` writes nothing, exits 1 listing stale files, 0 when the output is current.
* Files a previous run generated that are no longer produced are removed; files kgen did not
  generate are kept.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kgen.cli import main
from kgen.generate import generate

from .conftest import CORPUS, crd, requires_corpus

PACKAGE = "kgen_determinism"
# Fixed in the past so that any rewrite, however fast, shows up as a new mtime.
OLD_MTIME_NS = 1_000_000_000 * 1_000_000_000

# Prints {path: sha256} of every file the package renders to, before formatting; black is a
# pure function of its input, so equal renders format to equal bytes.
_RENDER_DIGESTS = """
import hashlib, json, sys
from pathlib import Path
from kgen.emit import render_package
from kgen.generate import load_package
package = load_package([Path(p) for p in sys.argv[1:]], "kgen_determinism")
files = render_package(package)
print(json.dumps({p: hashlib.sha256(s.encode()).hexdigest() for p, s in files.items()}))
"""


def _schema(*fields: str) -> dict[str, Any]:
    properties = {name: {"type": "string"} for name in fields}
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": properties}},
    }


WIDGET = crd("Widget", _schema("size"), group="widgets.example.com")
GADGET = crd("Gadget", _schema("colour"), group="gadgets.example.com")


@pytest.fixture(autouse=True)
def black_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One black cache for the module, so only the first formatting of a file pays."""
    cache = tmp_path_factory.getbasetemp() / "determinism-black-cache"
    monkeypatch.setenv("KGEN_CACHE_DIR", str(cache))
    return cache


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def mtimes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*")}


def age(root: Path) -> None:
    """Set every mtime under ``root`` to OLD_MTIME_NS."""
    for path in root.rglob("*"):
        os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))


def write_inputs(directory: Path, *documents: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "crds.yaml"
    source.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return source


def small_corpus() -> list[Path]:
    """The corpus files under 40 kB (18 today, of many shapes): cheap to format twice."""
    return [p for p in sorted(CORPUS.glob("*.yaml")) if p.stat().st_size < 40_000]


@pytest.mark.slow
@requires_corpus
def test_render_is_independent_of_input_order_and_hash_seed(tmp_path: Path) -> None:
    """The whole corpus, rendered in two processes with different hash seeds: once from the
    files in sorted order, once from them shuffled plus the directory holding them."""
    files = sorted(str(p) for p in CORPUS.glob("*.yaml"))
    shuffled = files[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != files
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _RENDER_DIGESTS, *inputs],
            cwd=tmp_path,
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed, inputs in (("1", files), ("2", [*shuffled, str(CORPUS)]))
    ]
    digests = []
    for run in runs:
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, stderr.decode()
        digests.append(json.loads(stdout))
    assert len(digests[0]) > 300
    assert digests[1] == digests[0]


@pytest.mark.slow
@requires_corpus
def test_generated_bytes_are_identical_across_runs_and_input_orders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs, each formatting from an empty cache, with the files in opposite orders."""
    files = small_corpus()
    outputs = []
    for name, inputs in (("a", files), ("b", files[::-1])):
        monkeypatch.setenv("KGEN_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        generate(inputs, tmp_path / name / PACKAGE, PACKAGE)
        outputs.append(tree(tmp_path / name / PACKAGE))
    assert len(outputs[0]) > 100
    assert outputs[1] == outputs[0]


def test_rerun_with_nothing_changed_writes_nothing(tmp_path: Path) -> None:
    source = write_inputs(tmp_path / "in", WIDGET, GADGET)
    out = tmp_path / PACKAGE
    first = generate([source], out, PACKAGE)
    assert sorted(first.write.changed) == sorted(tree(out))
    age(out)
    before = mtimes(out)
    again = generate([source], out, PACKAGE)
    assert (again.write.changed, again.write.removed) == ([], [])
    assert mtimes(out) == before


def test_only_changed_files_are_rewritten(tmp_path: Path) -> None:
    out = tmp_path / PACKAGE
    generate([write_inputs(tmp_path / "v1", WIDGET, GADGET)], out, PACKAGE)
    age(out)
    before_bytes, before_times = tree(out), mtimes(out)
    widened = crd("Widget", _schema("size", "weight"), group="widgets.example.com")
    result = generate([write_inputs(tmp_path / "v2", widened, GADGET)], out, PACKAGE)
    after_bytes, after_times = tree(out), mtimes(out)
    differing = {p for p in after_bytes if after_bytes[p] != before_bytes.get(p)}
    # the models, their apply configurations and the CRD the fake installs (crds.py) follow
    # the widened schema
    changed = ["crds.py", "widgets/v1/applyconfigurations.py", "widgets/v1/models.py"]
    assert differing == set(changed)
    assert result.write.changed == changed
    assert b"weight: str | None = None" in after_bytes["widgets/v1/models.py"]
    assert b"weight" in after_bytes["crds.py"]
    touched = {p for p in after_times if after_times[p] != before_times.get(p)}
    assert touched <= {*changed, "widgets/v1", "widgets/v1/__pycache__", "__pycache__"}
    assert "widgets/v1/models.py" in touched


def test_verify_exits_0_when_current_and_1_listing_stale_files_without_writing(
    tmp_path: Path,
) -> None:
    runner = CliRunner(env={"KGEN_CACHE_DIR": os.environ["KGEN_CACHE_DIR"]})
    out = tmp_path / PACKAGE
    current = write_inputs(tmp_path / "v1", WIDGET, GADGET)
    assert runner.invoke(main, ["generate", str(current), "-o", str(out)]).exit_code == 0

    result = runner.invoke(main, ["generate", str(current), "-o", str(out), "--verify"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{out}: up to date (2 kinds in 2 group/versions)\n"

    (out / "widgets" / "v1" / "client.py").unlink()
    age(out)
    before_bytes, before_times = tree(out), mtimes(out)
    widened = crd("Widget", _schema("size", "weight"), group="widgets.example.com")
    changed = write_inputs(tmp_path / "v2", widened)  # Gadget dropped, Widget changed
    result = runner.invoke(main, ["generate", str(changed), "-o", str(out), "--verify"])
    assert result.exit_code == 1, result.output
    listed = result.stderr.splitlines()
    assert f"stale: {out}/widgets/v1/models.py" in listed
    assert f"stale: {out}/widgets/v1/client.py" in listed  # missing counts as stale
    gadget_files = sorted(p for p in before_bytes if p.startswith("gadgets/"))
    assert [line for line in listed if line.startswith("not generated")] == [
        f"not generated any more: {out}/{p}" for p in gadget_files
    ]
    assert (tree(out), mtimes(out)) == (before_bytes, before_times)


def test_files_no_longer_generated_are_removed_and_others_kept(tmp_path: Path) -> None:
    out = tmp_path / PACKAGE
    generate([write_inputs(tmp_path / "both", WIDGET, GADGET)], out, PACKAGE)
    handwritten = {
        "NOTES.md": b"kept\n",
        "gadgets/v1/extra.py": b'"""A hand-written helper living beside generated code."""\n',
        "gadgets/v1/data.json": b"{}\n",
    }
    for path, data in handwritten.items():
        (out / path).write_bytes(data)
    widgets_only = tree(out)
    result = generate([write_inputs(tmp_path / "one", WIDGET)], out, PACKAGE)
    gadget_generated = sorted(
        p for p in widgets_only if p.startswith("gadgets/") and p not in handwritten
    )
    assert "gadgets/v1/models.py" in gadget_generated
    assert result.write.removed == gadget_generated
    remaining = tree(out)
    assert not any(p in remaining for p in gadget_generated)
    assert {p: remaining[p] for p in handwritten} == handwritten
    assert remaining["widgets/v1/models.py"] == widgets_only["widgets/v1/models.py"]
    assert b"Gadget" not in remaining["scheme.py"]


def test_verify_of_a_missing_output_lists_every_file_and_creates_nothing(tmp_path: Path) -> None:
    runner = CliRunner(env={"KGEN_CACHE_DIR": os.environ["KGEN_CACHE_DIR"]})
    source = write_inputs(tmp_path / "in", WIDGET)
    out = tmp_path / "absent" / PACKAGE
    result = runner.invoke(main, ["generate", str(source), "-o", str(out), "--verify"])
    assert result.exit_code == 1
    expected = generate([source], tmp_path / "reference" / PACKAGE, PACKAGE).write.changed
    assert result.stderr.splitlines() == [f"stale: {out}/{path}" for path in expected]
    assert not (tmp_path / "absent").exists()
