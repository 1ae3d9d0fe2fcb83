"""An owned kind's list and watch in one replica of two: client CPU per object it keeps.

Run: ``.venv/bin/python bench/ownerwatch.py`` (10,000 Deployments, best of 5) or ``--quick``
(4,000, best of 3). Needs the ``bench`` extra (bench/decode.py's Deployments).

A sharded controller caches its owned kinds through
:class:`~kgen_runtime.sharding.OwnerShardedListWatch`, which keeps the objects whose
controller owner's uid hashes into the replica's ranges (issue 21). Served here, in process
by a stub transport (no server, no HTTP: every CPU second counted is the client's), are N
apps/v1 Deployments as a cluster returns them (bench/decode.py's, ~3.4 KB, each with a
controller reference to its own Foo uid): a list in pages of 500, then a watch of one
``MODIFIED`` event per Deployment. Each side is a typed ``ResourceClient`` of Deployments
behind ``ListWatch.from_client``, as an informer factory makes it:

* **unsharded (baseline)**: the ListWatch alone; every Deployment is built and kept;
* **owner-sharded, half**: ``OwnerShardedListWatch`` over it with the lower half of the hash
  space; it keeps the Deployments whose owner hashes there (about half);
* **floor**: ``orjson.loads`` of the same pages and lines, nothing built.

Timed: the CPU time of the list (all pages) and of the watch (all events), separately, best
of the rounds, the three sides taking turns in each round (collector paused during each
timing, for every side). Printed per object each side keeps (the floor: per object served),
and the sharded side against the baseline: about 2x when a replica builds every object
and drops half, nearer 1x the less it pays for the objects it drops.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from _common import best_times, print_load  # bench/ is on sys.path when this file is run
from decode import deployment

from kgen_runtime.api.apps.v1 import DEPLOYMENT_RESOURCE
from kgen_runtime.cache import ListWatch
from kgen_runtime.rest import ListOptions, Request, ResourceClient
from kgen_runtime.sharding import HASH_SPACE, HashRange, OwnerShardedListWatch, fnv1a64

PAGE = 500
LOWER = HashRange(0, HASH_SPACE // 2)


def owned(i: int) -> dict[str, Any]:
    """bench/decode.py's Deployment ``i``, controlled by Foo ``i``."""
    obj = deployment(i)
    obj["metadata"]["ownerReferences"] = [{
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": f"foo-{i}",
        "uid": owner_uid(i), "controller": True, "blockOwnerDeletion": True}]
    return obj


def owner_uid(i: int) -> str:
    return f"7c3e51d0-{i:04x}-4a8b-b1f2-{i * 104729:012x}"


@dataclass
class Served:
    """The pages of the list (by continue token) and the lines of the watch."""

    pages: dict[str, bytes] = field(default_factory=dict)
    lines: list[bytes] = field(default_factory=list)

    @classmethod
    def of(cls, count: int) -> Served:
        served = cls()
        objects = [owned(i) for i in range(count)]
        for start in range(0, count, PAGE):
            more = start + PAGE < count
            metadata = {"resourceVersion": "300000", **({"continue": f"p{start + PAGE}"}
                                                         if more else {})}
            served.pages["" if start == 0 else f"p{start}"] = orjson.dumps({
                "apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": metadata,
                "items": objects[start:start + PAGE]})
        for i, obj in enumerate(objects):
            obj["metadata"]["resourceVersion"] = str(300_001 + i)
            served.lines.append(orjson.dumps({"type": "MODIFIED", "object": obj}))
        return served


class StubResponse:
    def __init__(self, body: bytes = b"", lines: list[bytes] | None = None) -> None:
        self._body = body
        self._lines = lines or []

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self) -> bytes:
        return self._body

    def iter_lines(self) -> Iterator[bytes]:
        return iter(self._lines)

    def close(self) -> None:
        pass


class StubTransport:
    """Answers a list with its page, a watch with every line."""

    def __init__(self, served: Served) -> None:
        self._served = served

    def send(self, request: Request, *, stream: bool = False,
             read_timeout: float | None = None) -> StubResponse:
        query = dict(request.query)
        if query.get("watch") == "true":
            return StubResponse(lines=self._served.lines)
        return StubResponse(self._served.pages[query.get("continue", "")])


def list_all(lw: Any) -> int:
    """Every page through ``lw``; the objects kept."""
    kept, options = 0, ListOptions(limit=PAGE)
    while True:
        page = lw.list(options)
        kept += len(page.items)
        if not page.metadata.continue_:
            return kept
        options = ListOptions(limit=PAGE, continue_=page.metadata.continue_)


def watch_all(lw: Any) -> int:
    """The whole watch through ``lw``; the events delivered."""
    return sum(1 for _ in lw.watch(ListOptions(resource_version="300000")))


def main() -> None:
    quick = "--quick" in sys.argv
    count, repeat = (4_000, 3) if quick else (10_000, 5)
    print_load()
    served = Served.of(count)
    client = ResourceClient(StubTransport(served), DEPLOYMENT_RESOURCE)  # type: ignore[arg-type]
    unsharded = ListWatch.from_client(client)
    sharded = OwnerShardedListWatch(ListWatch.from_client(client), [LOWER])
    expected = sum(fnv1a64(owner_uid(i)) in LOWER for i in range(count))
    kept = {"unsharded": (list_all(unsharded), watch_all(unsharded)),
            "sharded": (list_all(sharded), watch_all(sharded))}
    assert kept == {"unsharded": (count, count), "sharded": (expected, expected)}, kept
    pages = list(served.pages.values())

    def floor_list() -> None:
        for body in pages:
            orjson.loads(body)

    def floor_watch() -> None:
        for line in served.lines:
            orjson.loads(line)

    sides: dict[str, tuple[int, Callable[[], object], Callable[[], object]]] = {
        "unsharded (baseline), per object": (
            count, lambda: list_all(unsharded), lambda: watch_all(unsharded)),
        "owner-sharded half, per object kept": (
            expected, lambda: list_all(sharded), lambda: watch_all(sharded)),
        "floor: orjson.loads, per object served": (count, floor_list, floor_watch),
    }
    size = sum(len(body) for body in pages) / count
    print(f"{count:,} Deployments of {size:,.0f} B (pages of {PAGE}), the sharded side keeps "
          f"{expected:,}; CPU µs per object, best of {repeat}")
    runs = [run for _, list_run, watch_run in sides.values() for run in (list_run, watch_run)]
    best = best_times(*runs, repeat=repeat, cpu=True)
    per: dict[str, tuple[float, float]] = {}
    print(f"{'':<40} {'list':>9} {'watch':>9} {'both':>9}")
    for index, (name, (objects, _, _)) in enumerate(sides.items()):
        list_us, watch_us = (best[2 * index + k] / objects * 1e6 for k in (0, 1))
        per[name] = (list_us, watch_us)
        print(f"{name:<40} {list_us:>9.1f} {watch_us:>9.1f} {list_us + watch_us:>9.1f}")
    base, ours = per["unsharded (baseline), per object"], per[
        "owner-sharded half, per object kept"]
    print(f"{'sharded per kept / unsharded per object':<40} {ours[0] / base[0]:>8.2f}x "
          f"{ours[1] / base[1]:>8.2f}x {sum(ours) / sum(base):>8.2f}x")


if __name__ == "__main__":
    main()
