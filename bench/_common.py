"""Helpers shared by the benchmarks: best-of-N wall time, a ratio table, the machine's load,
a process's CPU and RSS, and generating a package from the shared CRD corpus into a temporary
directory."""

from __future__ import annotations

import gc
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("KGEN_SHARED_DIR", REPO.parent / "shared")) / "crds"
"""The shared CRD corpus (``$KGEN_SHARED_DIR/crds``), as the generator tests find it."""


def wall_and_cpu(run: Callable[[], object]) -> tuple[float, float]:
    """One timing of ``run()``: wall-clock seconds and this process's CPU seconds (all its
    threads; a server in a child process is not counted). The CPU time moves much less than
    the wall time with other work on a shared machine.

    The garbage collector is collected before and disabled during the timing, so runs are
    comparable.
    """
    gc.collect()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gc.enable()


class CollectorTime:
    """CPU seconds this process spent in the cyclic collector, and collections per
    generation, while in the ``with`` block (through ``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started
            self.collections[info["generation"]] += 1

    def __enter__(self) -> CollectorTime:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)


def best_time(run: Callable[[], object], *, repeat: int = 5) -> float:
    """Return the fastest of ``repeat`` wall-clock timings of ``run()``, in seconds
    (collector paused, as in :func:`wall_and_cpu`); ``run`` should do enough work to take at
    least ~50 ms."""
    return min(wall_and_cpu(run)[0] for _ in range(repeat))


def best_times(
    *runs: Callable[[], object], repeat: int = 5, cpu: bool = False
) -> list[float]:
    """Like :func:`best_time` for several runs, interleaved (one of each per round), so that
    load from other processes on a shared machine falls on all of them alike; ``cpu``: the
    process's CPU time instead of wall time (for single-threaded runs, where it is the same
    work and moves far less with the machine's load)."""
    best = [float("inf")] * len(runs)
    which = 1 if cpu else 0
    for _ in range(repeat):
        for index, run in enumerate(runs):
            best[index] = min(best[index], wall_and_cpu(run)[which])
    return best


def report(title: str, unit: str, ours: float, baseline: float, baseline_name: str) -> None:
    """Print throughputs (``unit`` per second) of ours and the baseline, and their ratio."""
    print(
        f"{title:<40} kgen {ours:>12,.0f} {unit}/s   {baseline_name} {baseline:>12,.0f} {unit}/s"
        f"   ratio {ours / baseline:5.2f}x"
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (every thread), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident set size of process ``pid``, from ``/proc``."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def print_load() -> None:
    """Print the load averages: other work on the (shared) machine slows every timing."""
    one, five, fifteen = os.getloadavg()
    print(f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs")


@contextmanager
def generated_package(inputs: Sequence[Path], name: str) -> Iterator[ModuleType]:
    """Generate package ``name`` from CRD files into a temporary directory and import it.

    Uses kgen's usual black cache, so only the first run of a benchmark pays for formatting.
    The package is unimported and its directory removed on exit.
    """
    from kgen.generate import generate  # the generator only where a benchmark needs it

    with tempfile.TemporaryDirectory(prefix="kgen-bench-") as root:
        generate(inputs, Path(root) / name, name)
        sys.path.insert(0, root)
        try:
            yield importlib.import_module(name)
        finally:
            sys.path.remove(root)
            for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
                del sys.modules[module]
