"""Which asyncio HTTP library the async transport uses: aiohttp against httpx, urllib3 as baseline.

Run: ``.venv/bin/python bench/async_http.py`` (about 20 s; needs ``pip install httpx``, which
is not a kgen dependency). The test API server of ``bench/list.py`` runs in a child process
with 5,000 Foos. Each library, on one event loop (urllib3 blocking, as the sync transport
uses it), does what the async transport does most:

* **list**: one GET of the namespace's 5,000 Foos (2.4 MiB), body read in full;
* **watch**: a watch with ``sendInitialEvents=true`` streams the 5,000 Foos as ADDED events;
  the body is split into lines (one event each) until the initial-events-end bookmark;
* **concurrent lists**: 20 GETs of 500 Foos each in flight at once on one loop (urllib3:
  one after another, its throughput without threads).

Times are best of ``REPEAT``, the libraries interleaved; ratios are to urllib3.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
import urllib3
from _common import print_load  # bench/ is on sys.path when this file is run
from list import COUNT, NAMESPACE, PATH, serve

REPEAT = 7
PARALLEL = 20
WATCH_QUERY = (
    "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
    "&allowWatchBookmarks=true&timeoutSeconds=30"
)
END = b"k8s.io/initial-events-end"

Op = Callable[[], Awaitable[int]]


def aiohttp_ops(session: aiohttp.ClientSession, url: str) -> dict[str, Op]:
    async def list_once() -> int:
        async with session.get(url + PATH) as response:
            return len(await response.read())

    async def watch_once() -> int:
        events = 0
        async with session.get(url + PATH + WATCH_QUERY) as response:
            buffer = b""
            async for chunk in response.content.iter_any():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if END in line:
                        return events
                    events += 1
        raise AssertionError("watch ended early")

    async def parallel_lists() -> int:
        async def one() -> int:
            query = "?limit=500"
            async with session.get(url + PATH + query) as response:
                return len(await response.read())

        return sum(await asyncio.gather(*(one() for _ in range(PARALLEL))))

    return {"list": list_once, "watch": watch_once, "concurrent lists": parallel_lists}


def httpx_ops(client: httpx.AsyncClient, url: str) -> dict[str, Op]:
    async def list_once() -> int:
        response = await client.get(url + PATH)
        return len(response.content)

    async def watch_once() -> int:
        events = 0
        async with client.stream("GET", url + PATH + WATCH_QUERY) as response:
            buffer = b""
            async for chunk in response.aiter_raw():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if END in line:
                        return events
                    events += 1
        raise AssertionError("watch ended early")

    async def parallel_lists() -> int:
        async def one() -> int:
            response = await client.get(url + PATH + "?limit=500")
            return len(response.content)

        return sum(await asyncio.gather(*(one() for _ in range(PARALLEL))))

    return {"list": list_once, "watch": watch_once, "concurrent lists": parallel_lists}


def urllib3_ops(pool: urllib3.PoolManager, url: str) -> dict[str, Op]:
    async def list_once() -> int:
        return len(pool.request("GET", url + PATH).data)

    async def watch_once() -> int:
        events = 0
        response = pool.request("GET", url + PATH + WATCH_QUERY, preload_content=False)
        buffer = b""
        try:
            while chunk := response.read1(64 * 1024):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if END in line:
                        return events
                    events += 1
        finally:
            response.close()
        raise AssertionError("watch ended early")

    async def sequential_lists() -> int:
        return sum(len(pool.request("GET", url + PATH + "?limit=500").data) for _ in range(20))

    return {"list": list_once, "watch": watch_once, "concurrent lists": sequential_lists}


async def measure(url: str) -> None:
    async with aiohttp.ClientSession() as session, httpx.AsyncClient() as client:
        libraries = {
            "urllib3 (sync baseline)": urllib3_ops(urllib3.PoolManager(maxsize=PARALLEL), url),
            "aiohttp": aiohttp_ops(session, url),
            "httpx": httpx_ops(client, url),
        }
        for ops in libraries.values():  # warm up, and check every op does its whole job
            assert await ops["watch"]() == COUNT
        best = {(lib, op): float("inf") for lib, ops in libraries.items() for op in ops}
        for _ in range(REPEAT):
            for lib, ops in libraries.items():
                for op, run in ops.items():
                    start = time.perf_counter()
                    await run()
                    best[lib, op] = min(best[lib, op], time.perf_counter() - start)
    baseline = "urllib3 (sync baseline)"
    ops_names = list(libraries[baseline])
    print(f"{'':<26}" + "".join(f"{op:>26}" for op in ops_names))
    for lib in libraries:
        cells = [
            f"{best[lib, op] * 1000:>9.1f} ms {best[lib, op] / best[baseline, op]:>5.2f}x".rjust(26)
            for op in ops_names
        ]
        print(f"{lib:<26}" + "".join(cells))


def main() -> None:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    server = context.Process(target=serve, args=(child,), daemon=True)
    server.start()
    try:
        url = parent.recv()
        print_load()
        print(f"{COUNT:,} Foos in namespace {NAMESPACE}; best of {REPEAT}, interleaved")
        asyncio.run(measure(url))
    finally:
        parent.send("stop")
        server.join(10)


if __name__ == "__main__":
    main()
