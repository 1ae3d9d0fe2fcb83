"""Informer soak: 100,000 ConfigMaps, churn for ``--minutes``, memory per object, no divergence.

Run: ``.venv/bin/python bench/soak.py`` (100,000 ConfigMaps, 30 minutes of churn; the seeding
takes 1-3 min more) or ``--minutes 3`` for a check; ``--quick`` is 10,000 for 1 minute.

One test API server runs in its own process (``TestAPIServerProcess``, the
``ShardedListAndWatch`` gate on) and is seeded with ``--objects`` ConfigMaps (~0.5 KB of JSON
each) in one namespace, by 8 threads of raw POSTs. The informer runs in a second process of
its own, so its RSS is the informer's: ``kgen_runtime.api.informers.SharedInformerFactory``'s
ConfigMap informer on that namespace (lists in pages of ``--page-size``, then watches), with
one handler counting adds, updates and deletes; with ``--sharded``, through a
``ShardedListWatch`` on the lower half of the hash space (the server filters), so it caches
about half. Once it has synced, this process churns at ``--rate`` writes/s (a create, an
update of a random live ConfigMap's data, a delete of a random live one, in turn, so the
count stays level), and every ``--interval`` seconds prints the informer process's RSS, the
objects cached and RSS per cached object (RSS growth since before the informer started,
divided by the objects). At the end it stops the churn, LISTs the namespace and waits
(bounded) until the informer's store holds exactly the listed keys at the listed
resourceVersions (for ``--sharded``, the listed objects in its half), and reports any
divergence: missing, extra and stale keys.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import get_context
from multiprocessing.connection import Connection
from typing import Any

import orjson
import urllib3
from _common import print_load, rss_bytes  # bench/ is on sys.path when this file is run

from kgen_runtime.api.core.v1 import CONFIG_MAP_RESOURCE
from kgen_runtime.api.informers import SharedInformerFactory
from kgen_runtime.cache import ReflectorOptions
from kgen_runtime.rest import Config, HTTPTransport
from kgen_runtime.sharding import HASH_SPACE, HashRange, ShardedListWatch, fnv1a64
from kgen_runtime.testing import TestAPIServerProcess

NAMESPACE = "soak"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
LOWER_HALF = HashRange(0, HASH_SPACE // 2)
BOUND = 120.0  # seconds a sync or the final catch-up may take before the soak gives up
MAX_MINUTES = 240.0


# --- the informer (child process) --------------------------------------------------------------


def informer_process(conn: Connection, url: str, page_size: int, sharded: bool) -> None:
    """Say ``imported``, start the informer on ``start``, then answer ``state`` with
    (synced, objects cached, [adds, updates, deletes]) and ``keys`` with the store's
    ``{namespace/name: resourceVersion}`` until ``stop``."""
    transport = HTTPTransport(Config(host=url, qps=0.0))
    factory = SharedInformerFactory(
        transport, namespace=NAMESPACE, reflector_options=ReflectorOptions(page_size=page_size),
        wrap_list_watch=(lambda lw: ShardedListWatch(lw, [LOWER_HALF])) if sharded else None)
    informer = factory.informer_for(CONFIG_MAP_RESOURCE)
    seen = [0, 0, 0]

    def count(index: int) -> Any:
        def handler(*_: Any) -> None:
            seen[index] += 1  # the informer's one delivery thread calls it
        return handler

    informer.add_event_handler(on_add=count(0), on_update=count(1), on_delete=count(2))
    stop = threading.Event()
    conn.send("imported")
    while (request := conn.recv()) != "stop":
        if request == "start":
            factory.start(stop)
            conn.send("started")
        elif request == "state":
            conn.send((informer.has_synced(), len(informer.indexer), list(seen)))
        else:
            assert request == "keys"
            conn.send({f"{obj.metadata.namespace}/{obj.metadata.name}":
                       obj.metadata.resource_version for obj in informer.indexer.list()})
    stop.set()
    factory.shutdown()
    transport.close()
    conn.send("stopped")


# --- the parent -------------------------------------------------------------------------------


class Soak:
    def __init__(self, server: TestAPIServerProcess, args: argparse.Namespace) -> None:
        self.server = server
        self.args = args
        self.http = urllib3.PoolManager(maxsize=16)
        self.live: list[str] = []  # names of the ConfigMaps that exist
        self.next_name = 0
        self.writes = 0
        self.failure: BaseException | None = None  # what ended the churn early

    def request(self, method: str, path: str, body: object = None,
                content_type: str = "application/json") -> Any:
        response = self.http.request(
            method, self.server.url + path, body=None if body is None else orjson.dumps(body),
            headers={"Content-Type": content_type})
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {response.data[:300]!r}")
        return orjson.loads(response.data)

    def create(self) -> None:
        name = f"cm-{self.next_name:07d}"
        self.next_name += 1
        self.request("POST", PATH, {"metadata": {"name": name, "labels": {"app": "soak"}},
                                    "data": {"config": "x" * 300, "version": "0"}})
        self.live.append(name)

    def seed(self, count: int) -> None:
        names = range(self.next_name, self.next_name + count)
        self.next_name += count

        def create(index: int) -> None:
            self.request("POST", PATH, {"metadata": {"name": f"cm-{index:07d}",
                                                     "labels": {"app": "soak"}},
                                        "data": {"config": "x" * 300, "version": "0"}})

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, names))
        self.live.extend(f"cm-{index:07d}" for index in names)

    def churn(self, stop: threading.Event, rng: random.Random) -> None:
        """Writes at ``--rate`` per second until ``stop``: create, update, delete in turn.
        A failed write ends it, kept in ``failure``."""
        try:
            self._churn(stop, rng)
        except BaseException as error:
            self.failure = error
            raise

    def _churn(self, stop: threading.Event, rng: random.Random) -> None:
        start = time.monotonic()
        while not stop.is_set():
            kind = self.writes % 3
            if kind == 0:
                self.create()
            elif kind == 1:
                name = rng.choice(self.live)
                self.request("PATCH", f"{PATH}/{name}", {"data": {"version": str(self.writes)}},
                             "application/merge-patch+json")
            else:
                index = rng.randrange(len(self.live))
                self.live[index], self.live[-1] = self.live[-1], self.live[index]
                self.request("DELETE", f"{PATH}/{self.live.pop()}")
            self.writes += 1
            delay = start + self.writes / self.args.rate - time.monotonic()
            if delay > 0:
                stop.wait(delay)

    def final_list(self) -> dict[str, str]:
        """``{namespace/name: resourceVersion}`` of a LIST now (for ``--sharded``, of the
        objects in the informer's half)."""
        items = self.request("GET", PATH)["items"]
        return {f"{NAMESPACE}/{item['metadata']['name']}": item["metadata"]["resourceVersion"]
                for item in items
                if not self.args.sharded or fnv1a64(item["metadata"]["uid"]) in LOWER_HALF}


def _ask(conn: Connection, request: str, timeout: float = BOUND) -> Any:
    conn.send(request)
    if not conn.poll(timeout):
        raise TimeoutError(f"the informer process did not answer {request!r}")
    return conn.recv()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, help="ConfigMaps (default 100,000)")
    parser.add_argument("--minutes", type=float, help=f"of churn (default 30, at most "
                                                      f"{MAX_MINUTES:.0f})")
    parser.add_argument("--rate", type=float, default=30.0, help="churn writes per second")
    parser.add_argument("--interval", type=float, help="seconds between samples (default 60)")
    parser.add_argument("--page-size", type=int, default=5_000, help="informer list page")
    parser.add_argument("--sharded", action="store_true", help="cache the lower half only")
    parser.add_argument("--quick", action="store_true", help="10,000 objects, 1 minute")
    parser.add_argument("--seed", type=int, default=0, help="of the churn's random choices")
    args = parser.parse_args()
    args.objects = args.objects or (10_000 if args.quick else 100_000)
    args.minutes = min(args.minutes or (1.0 if args.quick else 30.0), MAX_MINUTES)
    args.interval = args.interval or (15.0 if args.minutes <= 5 else 60.0)
    print_load()
    with TestAPIServerProcess(sharded_list_and_watch=True) as server:
        soak = Soak(server, args)
        soak.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        started = time.perf_counter()
        soak.seed(args.objects)
        print(f"seeded {args.objects:,} ConfigMaps in {time.perf_counter() - started:.0f} s "
              f"(server RSS {rss_bytes(server.pid) / 2**20:,.0f} MiB)", flush=True)

        context = get_context("spawn")
        conn, child = context.Pipe()
        process = context.Process(target=informer_process, daemon=True,
                                  args=(child, server.url, args.page_size, args.sharded))
        process.start()
        child.close()
        try:
            run(soak, conn, process.pid or 0, args)
        finally:
            _ask(conn, "stop")
            process.join(BOUND)
    print_load()


def run(soak: Soak, conn: Connection, pid: int, args: argparse.Namespace) -> None:
    if not conn.poll(BOUND) or conn.recv() != "imported":
        raise TimeoutError("the informer process did not start")
    baseline = rss_bytes(pid)
    started = time.perf_counter()
    _ask(conn, "start")
    deadline = time.monotonic() + BOUND
    while not (state := _ask(conn, "state"))[0]:
        if time.monotonic() > deadline:
            raise TimeoutError("the informer did not sync")
        time.sleep(0.2)
    what = "the lower half of " if args.sharded else ""
    print(f"informer synced {state[1]:,} of {what}{args.objects:,} in "
          f"{time.perf_counter() - started:.1f} s (pages of {args.page_size:,}); informer "
          f"process RSS {baseline / 2**20:.0f} MiB before it started\n"
          f"churn: {args.rate:g} writes/s (create, update, delete in turn) for "
          f"{args.minutes:g} min\n", flush=True)
    print(f"{'min':>6}{'writes':>9}{'cached':>9}{'RSS MiB':>9}{'B/object':>10}"
          f"{'adds':>9}{'updates':>9}{'deletes':>9}")
    stop = threading.Event()
    churner = threading.Thread(target=soak.churn, args=(stop, random.Random(args.seed)))
    churner.start()
    samples: list[float] = []
    start = time.monotonic()
    try:
        while True:
            elapsed = time.monotonic() - start
            _, cached, (adds, updates, deletes) = _ask(conn, "state")
            rss = rss_bytes(pid)
            samples.append((rss - baseline) / max(cached, 1))
            print(f"{elapsed / 60:>6.1f}{soak.writes:>9,}{cached:>9,}{rss / 2**20:>9.0f}"
                  f"{samples[-1]:>10,.0f}{adds:>9,}{updates:>9,}{deletes:>9,}", flush=True)
            if soak.failure is not None:
                raise RuntimeError("the churn failed") from soak.failure
            if elapsed >= args.minutes * 60:
                break
            time.sleep(min(args.interval, max(args.minutes * 60 - elapsed, 0.0)))
    finally:
        stop.set()
        churner.join(BOUND)
    minutes = (time.monotonic() - start) / 60
    print(f"\n{soak.writes:,} writes in {minutes:.1f} min ({soak.writes / minutes / 60:.1f}/s); "
          f"RSS per cached object first {samples[0]:,.0f} B, last {samples[-1]:,.0f} B "
          f"({samples[-1] / samples[0]:.2f}x), max {max(samples):,.0f} B")
    check_divergence(soak, conn)


def check_divergence(soak: Soak, conn: Connection) -> None:
    """Compare the informer's store with a final LIST until they agree (bounded)."""
    listed = soak.final_list()
    deadline = time.monotonic() + BOUND
    started = time.monotonic()
    while True:
        cached: dict[str, str] = _ask(conn, "keys")
        if cached == listed or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    missing = listed.keys() - cached.keys()
    extra = cached.keys() - listed.keys()
    stale = sum(1 for key in listed.keys() & cached.keys() if listed[key] != cached[key])
    if not missing and not extra and not stale:
        print(f"final LIST: {len(listed):,} objects; the informer's store holds the same keys "
              f"at the same resourceVersions (caught up in {time.monotonic() - started:.1f} s)"
              ": no divergence")
    else:
        print(f"DIVERGENCE after {BOUND:.0f} s: {len(missing):,} missing, {len(extra):,} extra, "
              f"{stale:,} stale of {len(listed):,} listed")
        sys.exit(1)


if __name__ == "__main__":
    main()
