"""Import time of generated packages against ``import kubernetes.client``.

Run: ``.venv/bin/python bench/import_time.py [--runs 9]`` (about 1 minute; needs the
``bench`` extra for the ``kubernetes`` package). The CRD corpus (``../shared/crds``) is
generated into a temporary directory first, as ``kgen generate ../shared/crds -o OUT
--package kgen_bench_corpus`` does. Then every row is a fresh interpreter (``python -c``)
that times one ``import`` statement with ``time.perf_counter`` — interpreter start-up is
left out on every side alike — and prints it; the rows take turns (one run of each per
round), and the median of ``--runs`` rounds is printed with its ratio to the baseline.
Every side imports from bytecode, as installed packages do: the children write and read
it in one temporary ``PYTHONPYCACHEPREFIX`` (``PYTHONDONTWRITEBYTECODE`` unset), and an
untimed first round fills it. The rows:

* **baseline** ``import kubernetes.client``: the official client, every model class of
  the whole Kubernetes API defined at import (plain classes, no validation built);
* ``import kgen_runtime.api.scheme``: the runtime's generated Kubernetes API, its scheme
  with every kind registered;
* ``import kgen_bench_corpus.scheme``: the corpus package's scheme, 113 kinds in 60
  group/versions;
* ``import foo_api.scheme``: the bundled example (``examples/foo-crd``);
* ``from kgen_runtime.api.apps.v1 import Deployment``: one kind used, which imports its
  group/version's models and the models they refer to (core/v1's);
* ``... + every kind``: the corpus scheme and then ``scheme.all_known_types()``, which
  imports every model module. A scheme registers kinds by name and imports a model module
  on first use of one of its kinds; this row is the whole cost that start-up no longer pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import CORPUS, REPO, print_load  # bench/ is on sys.path when this file is run

PACKAGE = "kgen_bench_corpus"
_TIMED = """
import time
started = time.perf_counter()
{statement}
print(time.perf_counter() - started)
"""


def rows(package_root: Path) -> list[tuple[str, str, list[Path]]]:
    """(label, statement timed, directories on the child's sys.path), baseline first."""
    example = REPO / "examples" / "foo-crd"
    corpus = f"import {PACKAGE}.scheme"
    return [
        ("import kubernetes.client", "import kubernetes.client", []),
        ("import kgen_runtime.api.scheme", "import kgen_runtime.api.scheme", []),
        (f"import {PACKAGE}.scheme", corpus, [package_root]),
        ("import foo_api.scheme", "import foo_api.scheme", [example]),
        (
            "from kgen_runtime.api.apps.v1 import Deployment",
            "from kgen_runtime.api.apps.v1 import Deployment",
            [],
        ),
        (
            f"import {PACKAGE}.scheme + every kind",
            f"{corpus}\n{PACKAGE}.scheme.scheme.all_known_types()",
            [package_root],
        ),
    ]


def time_import(statement: str, path: list[Path], pycache: Path) -> float:
    """Seconds one fresh interpreter spends in ``statement``, bytecode cached in ``pycache``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(p) for p in path] + [p for p in [env.get("PYTHONPATH", "")] if p]
    )
    completed = subprocess.run(
        [sys.executable, "-c", _TIMED.format(statement=statement)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(completed.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="rounds; the median is printed")
    args = parser.parse_args()
    from kgen.generate import generate  # the generator only for the set-up

    with tempfile.TemporaryDirectory(prefix="kgen-bench-") as root:
        generate([CORPUS], Path(root) / PACKAGE, PACKAGE)
        table = rows(Path(root))
        pycache = Path(root) / "pycache"
        for _, statement, path in table:
            time_import(statement, path, pycache)  # compiles every module once
        times: list[list[float]] = [[] for _ in table]
        for _ in range(args.runs):
            for index, (_, statement, path) in enumerate(table):
                times[index].append(time_import(statement, path, pycache))
    print_load()
    medians = [statistics.median(t) for t in times]
    baseline = medians[0]
    print(f"median of {args.runs} fresh interpreters per row, rows interleaved")
    for (label, _, _), median, runs in zip(table, medians, times, strict=True):
        spread = f"{min(runs) * 1e3:6.0f}-{max(runs) * 1e3:.0f} ms"
        print(f"{label:<48} {median * 1e3:7.0f} ms ({spread})   {median / baseline:5.2f}x")


if __name__ == "__main__":
    main()
