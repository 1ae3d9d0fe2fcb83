"""Generating the whole CRD corpus: a first run from an empty black cache, then a re-run with
nothing changed.

Run: ``.venv/bin/python bench/generate.py`` (about 1.5-2 minutes on 2 busy cores). Both runs
call ``kgen.generate.generate`` exactly as ``kgen generate /work/shared/crds -o OUT`` does,
with ``KGEN_CACHE_DIR`` pointing at a fresh temporary directory, so the first run formats
every file; the re-run finds every formatted file in the cache and every output file
unchanged, so it writes nothing. The first run is the baseline of the second. Targets: the
first run under 60 s, the re-run under 10% of it. CPU time (black's worker processes
included) is printed beside wall time, since other work on the machine inflates the latter.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from _common import CORPUS, print_load

PACKAGE = "kgen_bench_corpus"


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (black's worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    print_load()
    with tempfile.TemporaryDirectory(prefix="kgen-bench-") as root:
        os.environ["KGEN_CACHE_DIR"] = str(Path(root) / "black-cache")
        from kgen.generate import generate  # imported first, so neither run pays for it

        out = Path(root) / PACKAGE
        start, cpu = time.perf_counter(), cpu_seconds()
        first = generate([CORPUS], out, PACKAGE)
        cold, cold_cpu = time.perf_counter() - start, cpu_seconds() - cpu
        start, cpu = time.perf_counter(), cpu_seconds()
        again = generate([CORPUS], out, PACKAGE)
        rerun, rerun_cpu = time.perf_counter() - start, cpu_seconds() - cpu
        assert again.write.clean, "the re-run changed files"
        files = sorted(out.rglob("*.py"))
        megabytes = sum(p.stat().st_size for p in files) / 2**20
    kinds = sum(len(gv.kinds) for gv in first.package.group_versions)
    crd_files = len(list(CORPUS.glob("*.yaml")))
    print(
        f"{crd_files} CRD files -> {kinds} kinds in {len(first.package.group_versions)} "
        f"group/versions, {len(files)} Python files, {megabytes:.1f} MiB"
    )
    print("                                   wall      CPU")
    print(f"  first run, empty black cache   {cold:5.1f} s  {cold_cpu:5.1f} s   (target < 60 s)")
    print(f"  re-run, nothing changed        {rerun:5.1f} s  {rerun_cpu:5.1f} s   (target < 10%)")
    print(f"  re-run / first run             {rerun / cold:7.1%}")
    print_load()


if __name__ == "__main__":
    main()
