"""A reconcile through the informer cache: a lazily cached object against an eagerly built one.

Run: ``.venv/bin/python bench/cached_reconcile.py`` (about 30 s). One list response of
2,000 apps/v1 Deployments (bench/documents.py's, ~4.5 KB each) is decoded as an informer
caches it and filed in an ``Indexer``; then every object goes through what a reconcile does
with it: **lister get** (``Indexer.get_by_key``), **read** four fields
(``metadata.name``, ``spec.replicas``, the first container's image,
``status.readyReplicas``), ``deepcopy()``, **edit** (``spec.replicas`` + 1) and
``model_dump_wire_json()``.

Sides, the same code on both:

* **eager**: the page decoded as main's informers did (``DeploymentList.model_from_wire_json``,
  every model built at decode);
* **lazy**: the page decoded as this branch's informers do
  (``meta._lazy.lazy_list_from_wire_json``: items held as their wire documents), so the
  first read of each object (the lister get's caller reading ``metadata``) builds it.

Printed per object (CPU time of this process, best of 7, interleaved, the collector paused
for both alike): the decode + filing, the reconcile, and the total. The lazy reconcile holds
the build the eager decode did, so the totals should be equal; their difference is what
laziness costs on this path.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from _common import best_times, print_load

sys.path.insert(0, str(Path(__file__).resolve().parent))
from documents import deployment

from kgen_runtime.api.apps.v1.models import Deployment, DeploymentList
from kgen_runtime.cache import Indexer
from kgen_runtime.meta._lazy import lazy_list_from_wire_json, untouched_document

ITEMS = 2_000


def body() -> bytes:
    items = [deployment(i) for i in range(ITEMS)]
    return orjson.dumps({"apiVersion": "apps/v1", "kind": "DeploymentList",
                         "metadata": {"resourceVersion": "300000"}, "items": items})


def side(decode: Callable[[], Any], state: dict[str, Any]
         ) -> tuple[Callable[[], object], Callable[[], object]]:
    """(decode the page and file its items, reconcile every item from the indexer)."""

    def cache() -> object:
        indexer: Indexer[Any] = Indexer()
        for obj in decode().items:
            indexer.add(obj)
        state["indexer"] = indexer
        return indexer

    def reconcile() -> object:
        indexer = state["indexer"]
        written = []
        for key in state["keys"]:
            obj = indexer.get_by_key(key)
            _ = (obj.metadata.name, obj.spec.replicas, obj.spec.template.spec.containers[0].image,
                 obj.status.ready_replicas)
            copied = obj.deepcopy()
            copied.spec.replicas = (copied.spec.replicas or 0) + 1
            written.append(copied.model_dump_wire_json())
        return written

    state["keys"] = [f"{d['metadata']['namespace']}/{d['metadata']['name']}"
                     for d in (deployment(i) for i in range(ITEMS))]
    return cache, reconcile


def main() -> None:
    print_load()
    data = body()
    lazy: dict[str, Any] = {}
    eager_cache, eager_reconcile = side(lambda: DeploymentList.model_from_wire_json(data), {})
    lazy_cache, lazy_reconcile = side(
        lambda: lazy_list_from_wire_json(DeploymentList, Deployment, data), lazy)

    eager_cache()
    lazy_cache()
    assert all(untouched_document(o) is not None for o in lazy["indexer"].list())
    assert eager_reconcile() == lazy_reconcile()  # the same bytes written

    totals = {"eager": [float("inf")] * 2, "lazy": [float("inf")] * 2}
    for _ in range(7):  # each reconcile needs a fresh cache: decode and reconcile in turns
        e_cache, l_cache = best_times(eager_cache, lazy_cache, repeat=1, cpu=True)
        e_rec, l_rec = best_times(eager_reconcile, lazy_reconcile, repeat=1, cpu=True)
        totals["eager"] = [min(totals["eager"][0], e_cache), min(totals["eager"][1], e_rec)]
        totals["lazy"] = [min(totals["lazy"][0], l_cache), min(totals["lazy"][1], l_rec)]
    print(f"{ITEMS:,} Deployments, CPU µs per object (best of 7, interleaved)")
    print(f"{'':<8}{'decode + file':>15}{'reconcile':>12}{'total':>10}")
    for name, (cached, reconciled) in totals.items():
        per = [cached / ITEMS * 1e6, reconciled / ITEMS * 1e6]
        print(f"{name:<8}{per[0]:>15.1f}{per[1]:>12.1f}{sum(per):>10.1f}")
    eager_total, lazy_total = sum(totals["eager"]), sum(totals["lazy"])
    print(f"lazy total / eager total: {lazy_total / eager_total:.3f}x "
          f"({(lazy_total - eager_total) / ITEMS * 1e6:+.1f} µs per object)")


if __name__ == "__main__":
    main()
