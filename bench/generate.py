"""Generating the whole CRD corpus: cold, warm and no-op, this checkout against a baseline.

Run: ``.venv/bin/python bench/generate.py [--baseline ../main] [--rounds 1]`` (about 1 minute
per checkout and round on 2 busy cores). Each run is a fresh interpreter importing one
checkout's kgen and calling ``kgen.generate.generate`` exactly as ``kgen generate
../shared/crds -o OUT`` does, with ``KGEN_CACHE_DIR`` in a fresh temporary directory:

* **cold** — empty cache: every file is rendered and formatted (the baseline's cold run is
  this checkout's baseline);
* **warm** — the run cache removed, the per-file black cache kept: load, render, look up;
* **no-op** — nothing changed: the run cache answers and no file is written.

Checkouts alternate within each round. Wall and CPU time (user+sys, black's worker processes
included) are printed, since other work on the shared machine inflates wall time; the import
of kgen (and black) is timed apart from the run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import CORPUS, REPO, print_load

PACKAGE = "kgen_bench_corpus"
SCENARIOS = ("cold", "warm", "no-op")

_CHILD = """
import json, os, sys, time
from pathlib import Path
from typing import Any
def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
start, cpu0 = time.perf_counter(), cpu()
from kgen.generate import generate
imported, cpu1 = time.perf_counter(), cpu()
result = generate([Path(sys.argv[1])], Path(sys.argv[2]), sys.argv[3])
done, cpu2 = time.perf_counter(), cpu()
print(json.dumps({"import": imported - start, "wall": done - imported, "cpu": cpu2 - cpu1,
                  "changed": len(result.write.changed), "first": result.write.changed[:3]}))
"""


def _run(checkout: Path, cache: Path, out: Path) -> dict[str, Any]:
    """One generation in a fresh interpreter importing ``checkout``'s kgen and runtime."""
    output = subprocess.run(
        [sys.executable, "-c", _CHILD, str(CORPUS), str(out), PACKAGE],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{checkout / 'runtime'}:{checkout}", "KGEN_CACHE_DIR": str(cache)},
        cwd=checkout,
    ).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def _scenarios(checkout: Path) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="kgen-bench-") as root:
        cache, out = Path(root) / "cache", Path(root) / PACKAGE
        cold = _run(checkout, cache, out)
        shutil.rmtree(cache / "runs")
        warm = _run(checkout, cache, out)
        noop = _run(checkout, cache, out)
        assert warm["changed"] == noop["changed"] == 0, f"a re-run changed files: {warm} {noop}"
        return {"cold": cold, "warm": warm, "no-op": noop}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline",
        type=Path,
        default=REPO.parent / "main",
        help="the checkout to compare with (default: ../main)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="best of this many (default 1)")
    args = parser.parse_args()
    checkouts = {"this checkout": REPO, args.baseline.name: args.baseline.resolve()}
    print_load()
    best: dict[str, dict[str, dict[str, Any]]] = {}
    for _ in range(args.rounds):
        for name, checkout in checkouts.items():
            for scenario, numbers in _scenarios(checkout).items():
                kept = best.setdefault(name, {}).get(scenario)
                if kept is None or numbers["wall"] < kept["wall"]:
                    best[name][scenario] = numbers
    files = list(CORPUS.glob("*.yaml"))
    print(f"{len(files)} CRD files of {CORPUS}, best of {args.rounds}")
    print(f"{'':32}{'wall s':>8}{'CPU s':>8}{'import s':>10}")
    for name, results in best.items():
        for scenario in SCENARIOS:
            r = results[scenario]
            label = f"{name}, {scenario}"
            print(f"  {label:<30}{r['wall']:8.1f}{r['cpu']:8.1f}{r['import']:10.2f}")
    ours, theirs = best["this checkout"]["cold"], best[args.baseline.name]["cold"]
    print(
        f"  cold, this checkout / {args.baseline.name}: wall {ours['wall'] / theirs['wall']:.2f}x,"
        f" CPU {ours['cpu'] / theirs['cpu']:.2f}x"
    )
    print_load()


if __name__ == "__main__":
    main()
