"""Tiny timing helpers shared by the benchmarks: best-of-N wall time and a ratio table."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best_time(run: Callable[[], object], *, repeat: int = 5) -> float:
    """Return the fastest of ``repeat`` wall-clock timings of ``run()``, in seconds.

    The garbage collector is collected before and disabled during each timing, so runs are
    comparable; ``run`` should do enough work to take at least ~50 ms.
    """
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def report(title: str, unit: str, ours: float, baseline: float, baseline_name: str) -> None:
    """Print throughputs (``unit`` per second) of ours and the baseline, and their ratio."""
    print(
        f"{title:<40} kgen {ours:>12,.0f} {unit}/s   {baseline_name} {baseline:>12,.0f} {unit}/s"
        f"   ratio {ours / baseline:5.2f}x"
    )
