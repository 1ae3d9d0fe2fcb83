"""Writes through the test server's core: what recording ``managedFields`` costs per write.

Run: ``.venv/bin/python bench/server_writes.py [--baseline ../main]``. Each round creates
``N`` Foos (3 labels, a spec with a list) and merge-patches each once, in-process through
``APIServerCore.handle`` (no HTTP), in a child process per checkout: this one and the
baseline checkout (by default ``../main``, e.g. one before field management), interleaved
round by round. Prints the best microseconds per write of each and the ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
N = 1000
ROUNDS = 5

_CHILD = """
import copy, sys, time
import orjson
from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore
from tests.testing._support import FOO_CRD, FOOS, foo

core = APIServerCore()
core.install_crd(copy.deepcopy(FOO_CRD))
start = time.perf_counter()
for i in range({n}):
    body = foo(f"f{{i}}", replicas=2, tags=["a"])
    body["metadata"]["labels"] = {{"app": "a", "tier": "web", "team": "t"}}
    assert core.handle(Request("POST", FOOS, body=orjson.dumps(body),
                               content_type="application/json")).status == 201
for i in range({n}):
    assert core.handle(Request("PATCH", f"{{FOOS}}/f{{i}}", body=b'{{"spec":{{"replicas":3}}}}',
                               content_type="application/merge-patch+json")).status == 200
print((time.perf_counter() - start) / (2 * {n}) * 1e6)
"""


def _run(checkout: Path) -> float:
    """Microseconds per write in a fresh interpreter importing ``checkout``'s runtime."""
    env_path = f"{checkout / 'runtime'}:{checkout}"
    output = subprocess.run(
        [sys.executable, "-c", _CHILD.format(n=N)], check=True, capture_output=True, text=True,
        env={"PYTHONPATH": env_path}, cwd=checkout,
    ).stdout
    return float(output.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=REPO.parent / "main",
                        help="the checkout to compare with (default: ../main)")
    baseline = parser.parse_args().baseline.resolve()
    ours, theirs = float("inf"), float("inf")
    for _ in range(ROUNDS):
        ours = min(ours, _run(REPO))
        theirs = min(theirs, _run(baseline))
    print(f"writes through APIServerCore ({N} creates + {N} merge patches, best of {ROUNDS})")
    print(f"  this checkout  {ours:8.0f} us/write")
    print(f"  {baseline.name:<13}  {theirs:8.0f} us/write")
    print(f"  ratio          {ours / theirs:8.2f}x")


if __name__ == "__main__":
    main()
