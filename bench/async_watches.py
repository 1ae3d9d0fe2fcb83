"""1,000 concurrent watches on one event loop: client memory per watch, and event fan-out.

Run: ``.venv/bin/python bench/async_watches.py`` (about 20 s). A test API server in a child
process serves the Foo CRD. One event loop opens ``WATCHES`` watches of the namespace through
one ``AsyncClientset`` (aiohttp, one connection each), in batches of 50 so the server's
listen backlog keeps up. Reported:

* **memory per watch**: ``tracemalloc``'s growth of the client process from before the first
  watch to all watches open and idle, divided by ``WATCHES`` (Python allocations: aiohttp's
  connection, protocol and buffers, the watcher, the task);
* **fan-out**: one Foo created; the time until every watch has received its ADDED event,
  against the same for a single watch (the baseline, measured in the same run).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import sys
import time
import tracemalloc
from multiprocessing.connection import Connection
from pathlib import Path

import yaml
from _common import print_load  # bench/ is on sys.path when this file is run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.clientset import AsyncClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.rest import Config, ListOptions
from kgen_runtime.testing import TestAPIServer

WATCHES = 1_000
BATCH = 50
NAMESPACE = "bench"
CRD = Path(__file__).resolve().parents[1] / "examples" / "foo-crd" / "crds" / "foo.yaml"
KIB = 1024


def serve(conn: Connection) -> None:
    with TestAPIServer() as server:
        server.install_crd(yaml.safe_load(CRD.read_text()))
        conn.send(server.url)
        conn.recv()


async def fan_out(url: str, count: int, name: str) -> tuple[float, float]:
    """Open ``count`` watches, create one Foo; (KiB allocated per watch, seconds to deliver)."""
    async with AsyncClientset.for_config(Config(host=url, qps=0.0)) as clientset:
        foos = clientset.samplecontroller_v1alpha1.foos(NAMESPACE)
        start_rv = (await foos.list()).metadata.resource_version
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        watchers = []
        for first in range(0, count, BATCH):
            opened = [
                foos.watch(ListOptions(resource_version=start_rv), read_timeout=60.0)
                for _ in range(min(BATCH, count - first))
            ]
            watchers += await asyncio.gather(*(_opened(w) for w in opened))
        received = [asyncio.Event() for _ in watchers]

        async def consume(index: int) -> None:
            async for event in watchers[index]:
                if event.object.metadata.name == name:
                    received[index].set()
                    return

        tasks = [asyncio.create_task(consume(i)) for i in range(len(watchers))]
        await asyncio.sleep(0.5)  # every consumer waiting on its stream
        gc.collect()
        per_watch = (tracemalloc.get_traced_memory()[0] - before) / count / KIB
        tracemalloc.stop()
        started = time.perf_counter()
        await foos.create(Foo(metadata={"name": name}, spec=FooSpec(replicas=1)))
        await asyncio.gather(*(event.wait() for event in received))
        elapsed = time.perf_counter() - started
        await asyncio.gather(*tasks)
        for watcher in watchers:
            watcher.stop()
        return per_watch, elapsed


async def _opened(watcher: object) -> object:
    return await watcher  # type: ignore[misc]


def main() -> None:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    server = context.Process(target=serve, args=(child,), daemon=True)
    server.start()
    try:
        url = parent.recv()
        print_load()
        one_mem, one_time = asyncio.run(fan_out(url, 1, "single"))
        many_mem, many_time = asyncio.run(fan_out(url, WATCHES, "many"))
        print(
            f"1 watch:      {one_mem:8.1f} KiB allocated, "
            f"event delivered in {one_time * 1000:7.1f} ms"
        )
        print(
            f"{WATCHES:,} watches: {many_mem:8.1f} KiB per watch, event delivered to all in "
            f"{many_time * 1000:7.1f} ms ({many_time / one_time:.1f}x one watch, "
            f"{many_time / WATCHES * 1e6:.0f} us per watch)"
        )
    finally:
        parent.send("stop")
        server.join(10)


if __name__ == "__main__":
    main()
