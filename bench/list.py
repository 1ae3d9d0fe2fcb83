"""Listing 5,000 Foos over HTTP: kgen's typed list against the ``kubernetes`` package and raw HTTP.

Run: ``.venv/bin/python bench/list.py`` (about 10 s; needs the ``bench`` extra:
``.venv/bin/pip install -e '.[bench]'``). A test API server in a child process
(so its work and memory are not counted against the clients) serves 5,000 realistic Foos
(3 labels, 2 annotations, a spec, half with a status), seeded straight into its store. Every
client lists them in one GET of the namespace:

* **raw (the limit)**: a urllib3 GET and ``orjson.loads`` — plain dicts, nothing checked;
* **kgen**: ``Clientset.for_config(...).samplecontroller_v1alpha1.foos(ns).list()`` — a typed
  ``FooList`` of ``Foo`` models, built from ``orjson``'s dicts (``model_from_wire_json``;
  each Foo's nested models are built when first read: the decoding table also times reading
  every one of them, and building everything at once);
* **kgen async**: the same list through ``AsyncClientset`` (aiohttp), awaited on an event loop
  kept for the whole run (target: within 1.2x of the blocking list);
* **kubernetes**: ``CustomObjectsApi.list_namespaced_custom_object`` — dicts, as the official
  client returns for custom resources;
* **kubernetes_asyncio**: the same call of its asyncio twin (aiohttp), awaited on the same
  event loop as kgen's async list: it reads the body, decodes it to ``str`` and ``json.loads``
  it into dicts (its ``deserialize`` to the ``object`` return type hands them back as they
  are) — no types, no defaults, nothing checked; kgen async must beat it.

Time is the best (and the median) wall time of ``REPEAT`` interleaved calls with the collector
paused (kgen pauses it while decoding anyway; the dict-based clients would otherwise pay for
collections this hides), and the best CPU time of this process (the server's not counted),
which moves much less than wall time with other work on the shared machine.
Peak memory is ``tracemalloc``'s peak during one call, and "held" what the returned result
keeps alive. A second table isolates decoding: the same response bytes turned into objects by
each client's decoder, without the server and the network.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
import statistics
import sys
import tracemalloc
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import urllib3
import yaml
from _common import wall_and_cpu  # bench/ is on sys.path when this file is run
from kubernetes import client as k8s
from kubernetes_asyncio import client as k8s_aio

# foo_api, the generated sample-controller package, lives in examples/foo-crd
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.clientset import AsyncClientset, Clientset
from foo_api.samplecontroller.v1alpha1 import FooList

from kgen_runtime.rest import Config
from kgen_runtime.testing import ObjectTracker, TestAPIServer

COUNT = 5_000
REPEAT = 10
NAMESPACE = "bench"
GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
CRD = Path(__file__).resolve().parents[1] / "examples" / "foo-crd" / "crds" / "foo.yaml"
MIB = 1024 * 1024


def foo(index: int) -> dict[str, Any]:
    """A realistic Foo: 3 labels, 2 annotations, a spec, and a status on every other one."""
    obj: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Foo",
        "metadata": {
            "name": f"foo-{index:05d}",
            "namespace": NAMESPACE,
            "labels": {
                "app.kubernetes.io/name": "sample",
                "app.kubernetes.io/instance": f"sample-{index % 50}",
                "tier": ("web", "db", "cache")[index % 3],
            },
            "annotations": {
                "example.com/owner": f"team-{index % 7}@example.com",
                "example.com/revision": str(index * 7919 % 100_000),
            },
        },
        "spec": {"deploymentName": f"deployment-{index:05d}", "replicas": 1 + index % 10},
    }
    if index % 2 == 0:
        obj["status"] = {"availableReplicas": index % 10}
    return obj


def serve(conn: Connection) -> None:
    """The child process: a test API server with ``COUNT`` Foos, until the parent says stop."""
    with TestAPIServer() as server:
        server.install_crd(yaml.safe_load(CRD.read_text()))
        tracker = ObjectTracker(server.core)
        for index in range(COUNT):
            tracker.add(foo(index))
        conn.send(server.url)
        conn.recv()


def listers(url: str) -> tuple[dict[str, Callable[[], Any]], Callable[[], None]]:
    """One zero-argument list call per client, all against ``url``; and how to close them."""
    foos = Clientset.for_config(Config(host=url, qps=0.0)).samplecontroller_v1alpha1.foos(NAMESPACE)
    async_clientset = AsyncClientset.for_config(Config(host=url, qps=0.0))
    async_foos = async_clientset.samplecontroller_v1alpha1.foos(NAMESPACE)
    loop = asyncio.new_event_loop()
    configuration = k8s.Configuration()
    configuration.host = url
    custom = k8s.CustomObjectsApi(k8s.ApiClient(configuration))
    api_client_aio = loop.run_until_complete(
        _in_loop(k8s_aio.ApiClient, k8s_aio.Configuration(host=url))
    )
    custom_aio = k8s_aio.CustomObjectsApi(api_client_aio)
    pool = urllib3.PoolManager()
    rows = {
        "raw urllib3 GET + orjson.loads (limit)": lambda: orjson.loads(
            pool.request("GET", url + PATH).data
        ),
        "kgen typed list (FooList of Foo)": foos.list,
        "kgen async typed list (AsyncClientset)": lambda: loop.run_until_complete(
            async_foos.list()
        ),
        "kubernetes CustomObjectsApi (dicts)": lambda: custom.list_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, PLURAL
        ),
        "kubernetes_asyncio CustomObjectsApi (dicts)": lambda: loop.run_until_complete(
            custom_aio.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
        ),
        "raw GET, bytes only (server + HTTP)": lambda: pool.request("GET", url + PATH).data,
    }

    def close() -> None:
        loop.run_until_complete(async_clientset.aclose())
        loop.run_until_complete(api_client_aio.close())
        loop.close()

    return rows, close


async def _in_loop(make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)`` called on the running loop (aiohttp's session needs one)."""
    return make(*args)


def count(result: Any) -> int:
    if isinstance(result, bytes):
        return len(orjson.loads(result)["items"])
    return len(result.items if isinstance(result, FooList) else result["items"])


def read_all(foos: FooList) -> FooList:
    """Read a field of every nested model of every item (builds them: they are built when
    first read)."""
    for item in foos.items:
        if item.spec is not None:
            item.spec.replicas  # noqa: B018
        if item.status is not None:
            item.status.available_replicas  # noqa: B018
        item.metadata.name  # noqa: B018
    return foos


def memory(run: Callable[[], Any]) -> tuple[float, float]:
    """(peak, held) MiB allocated by one call of ``run``: at its worst, and kept by its result."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = run()
        held, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return (peak - before) / MIB, (held - before) / MIB


class Timings(NamedTuple):
    """Per row: best wall time, median wall time and best CPU time of this process (s)."""

    best: dict[str, float]
    median: dict[str, float]
    cpu: dict[str, float]


def table(title: str, rows: dict[str, Callable[[], Any]], baseline: str) -> Timings:
    """Time and measure every row; print them with their ratio to ``baseline``."""
    print(f"\n{title}")
    print(
        f"{'':<46}{'ms':>8}{'vs limit':>9}{'median':>8}{'CPU ms':>8}"
        f"{'peak MiB':>10}{'held MiB':>10}"
    )
    walls: dict[str, list[float]] = {name: [] for name in rows}
    cpus: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(REPEAT):  # interleaved, so a burst of load elsewhere hits every row alike
        for name, run in rows.items():
            wall, cpu = wall_and_cpu(run)
            walls[name].append(wall)
            cpus[name].append(cpu)
    times = Timings(
        {name: min(runs) for name, runs in walls.items()},
        {name: statistics.median(runs) for name, runs in walls.items()},
        {name: min(runs) for name, runs in cpus.items()},
    )
    for name, run in rows.items():
        peak, held = memory(run)
        best = times.best[name]
        print(
            f"{name:<46}{best * 1000:>8.1f}{best / times.best[baseline]:>8.2f}x"
            f"{times.median[name] * 1000:>8.1f}{times.cpu[name] * 1000:>8.1f}"
            f"{peak:>10.1f}{held:>10.1f}"
        )
    return times


def main() -> None:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    server = context.Process(target=serve, args=(child,), daemon=True)
    server.start()
    try:
        url = parent.recv()
        rows, close = listers(url)
        sample = {name: count(run()) for name, run in rows.items()}  # warm up, and check
        assert set(sample.values()) == {COUNT}, sample
        body = rows["raw GET, bytes only (server + HTTP)"]()
        print(f"{COUNT:,} Foos, {len(body) / MIB:.1f} MiB of JSON per list; best of {REPEAT}")

        limit = "raw urllib3 GET + orjson.loads (limit)"
        times = table("list over HTTP (test API server in a child process)", rows, limit)
        decoders: dict[str, Callable[[], Any]] = {
            "orjson.loads (limit)": lambda: orjson.loads(body),
            "kgen FooList.model_from_wire_json": lambda: FooList.model_from_wire_json(body),
            "  ... then every spec and status read": lambda: read_all(
                FooList.model_from_wire_json(body)
            ),
            "pydantic FooList.model_validate_json": lambda: FooList.model_validate_json(body),
            "json.loads (the kubernetes client's)": lambda: json.loads(body),
        }
        decoded = table("decoding the same bytes only", decoders, "orjson.loads (limit)")

        kgen = times.best["kgen typed list (FooList of Foo)"]
        typed_decode = decoded.best["kgen FooList.model_from_wire_json"]
        print()
        for label, row in (
            ("wall best", times.best),
            ("wall median", times.median),
            ("CPU", times.cpu),
        ):
            ours = row["kgen async typed list (AsyncClientset)"]
            print(
                f"kgen async list, {label + ':':<12} "
                f"{ours / row['kgen typed list (FooList of Foo)']:.2f}x the blocking list "
                f"(target: within 1.2x), "
                f"{ours / row['kubernetes_asyncio CustomObjectsApi (dicts)']:.2f}x "
                "kubernetes_asyncio (target: below 1x)"
            )
        print(
            f"\nkgen list: {kgen / times.best[limit]:.2f}x the raw limit (target: within 2x), "
            f"{kgen / times.best['kubernetes CustomObjectsApi (dicts)']:.2f}x the kubernetes "
            f"client's time; typed decoding alone "
            f"{typed_decode / decoded.best['orjson.loads (limit)']:.2f}x"
            " orjson"
        )
        close()
    finally:
        parent.send("stop")
        server.join(10)


if __name__ == "__main__":
    main()
