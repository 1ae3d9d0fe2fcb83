"""Sharded Foo controller: reconciles/s and controller CPU per Foo for 1, 2 and 4 replicas.

Run: ``.venv/bin/python bench/sharded.py`` (2,000 Foos; 1, 2 and 4 replicas; plain and heavy
reconciles; ~4 min on an idle 2-core machine, 6 min at load 8) or ``--quick`` (400 and 100
Foos; 1 and 2 replicas; ~1 min).

One test API server runs in its own process (``TestAPIServerProcess``, the
``ShardedListAndWatch`` gate on). Each row starts R replica processes, each a
:class:`~kgen_runtime.controller.Manager` in a shard ring (``ShardingConfig``: member
``replica-<i>``, the ring's Leases in the row's namespace) running the example's
:class:`~foo_controller.FooReconciler` through the builder
(``controller_for(Foo).owns(Deployment).sharded()``, the example's rate limiter and
``--workers`` concurrent reconciles; its cache watches the row's namespace only). Once every
replica's caches are synced and the members' ranges cover the hash space, the bench creates
``--foos`` Foos at once (8 threads of raw POSTs: the load generator stays light) and times
until a watch of its own has seen every Foo with a status (each reconcile creates the Foo's
Deployment, writes its status and records an event): **s** and **Foos/s**. Then it waits
until the replicas go quiet (the follow-up reconcile of each Foo, after its own status write,
done too): **all s** and **rec/s**, reconciles per second over the whole batch, the measure
whose ratio shows how the work spreads over replicas. From ``/proc``:

* **controller CPU per Foo**: the CPU the replica processes used (user + system, every
  thread) from the first create until quiet, divided by the Foos;
* **server CPU per Foo**: the same for the server process (it also serves the creates, the
  bench's watch and the members' Lease rounds);
* **memory per replica**: RSS growth over the run, and the Foos and Deployments each replica
  caches (Foos are sharded by their uid; Deployments, the owned kind, by their controlling
  Foo's uid, so each replica caches the Deployments of its own Foos);
* **requests per Foo**: the HTTP requests the replicas sent (``rest_client_requests_total``,
  every attempt: writes, Event writes, list and watch calls, Lease rounds) from the first
  create until quiet, divided by the Foos;
* **ev lost**: Events the replicas' recorders dropped (``kgen_events_dropped_total``: their
  queue of 1,000 overflows when a replica records faster than it writes Events).

Baselines from the same run: the 1-replica row for the throughput ratios, and an unsharded
manager (no ``ShardingConfig``, no ``sharded()``: today's example) for the cost of sharding.
``--reconcile-cpu-ms`` adds a CPU-bound step of that many ms (holding the GIL, as Python
work does) to every reconcile, to model reconciles heavier than the example's; both loads are
measured, the rows of each interleaved. ``--profile FILE`` runs the unsharded row's replica
under cProfile (every thread) and prints where its time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import orjson
import urllib3
import yaml
from _common import (  # bench/ is on sys.path when this file is run
    cpu_seconds,
    print_load,
    rss_bytes,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_controller import (
    CONTROLLER_AGENT_NAME,
    FIELD_MANAGER,
    FooReconciler,
    new_rate_limiter,
    new_scheme,
)
from foo_controller._demo import CRD_PATH

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.clientset import Clientset
from kgen_runtime.controller import (
    CacheOptions,
    ClientEventSink,
    Cluster,
    Manager,
    Request,
    Result,
    ShardingConfig,
)
from kgen_runtime.events import EVENT_METRICS
from kgen_runtime.rest import REST_CLIENT_METRICS, Config, HTTPTransport
from kgen_runtime.sharding import HASH_SPACE
from kgen_runtime.testing import TestAPIServerProcess

FOOS_PATH = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{}/foos"
BOUND = 300.0  # seconds any one wait may take before the bench gives up
QUIET_CPU = 0.02  # replicas are quiet once they use less than this share of a core


# --- a replica (child process) -----------------------------------------------------------------


class BurningReconciler:
    """The Foo reconciler, counted, plus ``cpu_ms`` of CPU-bound Python per reconcile."""

    def __init__(self, inner: FooReconciler, cpu_ms: float) -> None:
        self.inner = inner
        self.cpu = cpu_ms / 1000
        self.calls = 0
        self._lock = threading.Lock()  # the workers count concurrently

    def reconcile(self, request: Request) -> Result | None:
        with self._lock:
            self.calls += 1
        end = time.thread_time() + self.cpu
        while time.thread_time() < end:  # holds the GIL, like any Python work
            pass
        return self.inner.reconcile(request)


@dataclass(frozen=True)
class ReplicaSpec:
    """What one replica process runs (pickled to it)."""

    url: str
    namespace: str
    member: str  # "" for an unsharded manager
    workers: int
    cpu_ms: float
    profile: str  # a file to write cProfile's stats to, or ""


def replica(conn: Connection, spec: ReplicaSpec) -> None:
    """Run the Foo controller until the parent says ``stop``; answer ``state`` requests with
    (synced, share of the hash space held, Foos cached, Deployments cached, reconciles,
    Events dropped, HTTP requests sent)."""
    profiles = _profile_threads() if spec.profile else None
    transport = HTTPTransport(Config(host=spec.url, qps=0.0))
    cluster = Cluster(transport, new_scheme(), field_manager=FIELD_MANAGER,
                      cache=CacheOptions(namespaces=[spec.namespace], resync_period=0.0))
    sharding = (ShardingConfig(ring="foo-controller", member=spec.member,
                               lease_namespace=spec.namespace, lease_duration=10.0,
                               renew_period=1.0) if spec.member else None)
    events = Clientset(transport).core_v1.events
    manager = Manager(cluster=cluster, event_sink=ClientEventSink(events), sharding=sharding)
    reconciler = BurningReconciler(
        FooReconciler(cluster.client, manager.event_recorder(CONTROLLER_AGENT_NAME)),
        spec.cpu_ms)
    builder = (manager.controller_for(Foo).owns(Deployment)
               .with_options(max_concurrent_reconciles=spec.workers,
                             rate_limiter=new_rate_limiter()))
    (builder.sharded() if sharding else builder).complete(reconciler)
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), name="manager")
    thread.start()
    foos = cluster.cache.informers_for(Foo)[0]
    deployments = cluster.cache.informers_for(Deployment)[0]
    member = manager.shard_member
    while (request := conn.recv()) != "stop":
        assert request == "state"
        held = (sum(r.end - r.start for r in member.ranges()) / HASH_SPACE
                if member is not None else 1.0)
        conn.send((foos.has_synced() and deployments.has_synced(), held,
                   len(foos.indexer), len(deployments.indexer), reconciler.calls,
                   _events_dropped(), _requests_sent()))
    stop.set()
    thread.join(BOUND)
    transport.close()
    if profiles is not None:
        stats = pstats.Stats(*profiles)
        stats.dump_stats(spec.profile)
    conn.send("stopped")


def _events_dropped() -> int:
    """Events this process recorded but never wrote (``kgen_events_dropped_total``)."""
    return int(sum(sample.value for metric in EVENT_METRICS.collect()
                   for sample in metric.samples if sample.name.endswith("_total")))


def _requests_sent() -> int:
    """HTTP requests this process sent, every attempt of every kind (``rest_client_requests``,
    recorded by every transport of the process)."""
    return int(sum(sample.value for metric in REST_CLIENT_METRICS.collect()
                   for sample in metric.samples
                   if sample.name == "rest_client_requests_total"))


def _profile_threads() -> list[cProfile.Profile]:
    """Profile every thread started from now on (cProfile sees only the thread that enables
    it): each runs under its own profiler, collected in the returned list."""
    profiles: list[cProfile.Profile] = []
    run = threading.Thread.run

    def profiled(self: threading.Thread) -> None:
        profile = cProfile.Profile(time.thread_time)  # CPU, not waits
        profiles.append(profile)
        profile.runcall(run, self)

    threading.Thread.run = profiled  # type: ignore[method-assign]
    return profiles


# --- the parent ----------------------------------------------------------------------------------


class Replicas:
    """R replica processes of one row (spawned, so each imports afresh)."""

    def __init__(self, specs: list[ReplicaSpec]) -> None:
        context = get_context("spawn")
        self.conns: list[Connection] = []
        self.processes = []
        for spec in specs:
            parent, child = context.Pipe()
            process = context.Process(target=replica, args=(child, spec), daemon=True)
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)

    def states(self) -> list[tuple[bool, float, int, int, int, int, int]]:
        for conn in self.conns:
            conn.send("state")
        return [_receive(conn) for conn in self.conns]

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.processes if p.pid is not None)

    def rss(self) -> list[int]:
        return [rss_bytes(p.pid) for p in self.processes if p.pid is not None]

    def stop(self) -> None:
        for conn in self.conns:
            conn.send("stop")
        for conn, process in zip(self.conns, self.processes, strict=True):
            _receive(conn)
            process.join(BOUND)


def _receive(conn: Connection) -> Any:
    if not conn.poll(BOUND):
        raise TimeoutError("a replica did not answer")
    return conn.recv()


def wait_for(condition: Callable[[], bool], what: str, interval: float = 0.1) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(interval)


@dataclass
class Row:
    """One row's measurements (see the module docstring for each)."""

    name: str
    replicas: int
    seconds: float
    quiet_seconds: float
    controller_cpu: float
    server_cpu: float
    rss_growth: list[int]
    foos_cached: list[int]
    deployments_cached: list[int]
    reconciles: int
    events_dropped: int
    requests: int


class Bench:
    """Runs the rows against one server: a namespace, R replicas and N Foos each."""

    def __init__(self, server: TestAPIServerProcess, args: argparse.Namespace) -> None:
        self.server = server
        self.args = args
        self.http = urllib3.PoolManager(maxsize=16)

    def request(self, method: str, path: str, body: object = None) -> Any:
        response = self.http.request(
            method, self.server.url + path, body=None if body is None else orjson.dumps(body),
            headers={"Content-Type": "application/json"})
        if response.status >= 300 and not (method == "DELETE" and response.status == 404):
            raise RuntimeError(f"{method} {path}: {response.status} {response.data[:300]!r}")
        return orjson.loads(response.data) if response.data else None

    @contextmanager
    def namespace(self) -> Iterator[str]:
        """A fresh namespace for one row, deleted (with what it holds) and gone afterwards."""
        name = f"bench-{uuid.uuid4().hex[:8]}"
        self.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        try:
            yield name
        finally:
            self.request("DELETE", f"/api/v1/namespaces/{name}")
            wait_for(lambda: self.http.request(
                "GET", f"{self.server.url}/api/v1/namespaces/{name}").status == 404,
                "the namespace's deletion", 0.25)

    def run(self, name: str, replicas: int, cpu_ms: float, foos: int, *,
            sharded: bool = True, profile: str = "") -> Row:
        with self.namespace() as namespace:
            specs = [ReplicaSpec(self.server.url, namespace,
                                 f"replica-{index}" if sharded else "", self.args.workers,
                                 cpu_ms, profile if index == 0 else "")
                     for index in range(replicas)]
            group = Replicas(specs)
            try:
                return self._measure(name, group, namespace, replicas, foos)
            finally:
                group.stop()

    def _measure(self, name: str, group: Replicas, namespace: str, replicas: int,
                 foos: int) -> Row:
        def ready() -> bool:
            states = group.states()
            return (all(synced for synced, *_ in states)
                    and abs(sum(held for _, held, *_ in states) - 1.0) < 1e-9
                    and all(held > 0 for _, held, *_ in states))

        for _ in range(2):  # ready twice, a member round apart: the ring has settled
            wait_for(ready, "the replicas' caches and ranges", 0.25)
            time.sleep(1.0)
        path = FOOS_PATH.format(namespace)
        since = self.request("GET", path)["metadata"]["resourceVersion"]
        done = threading.Event()
        watcher = threading.Thread(target=self._watch_statuses,
                                   args=(path, since, foos, done), daemon=True)
        watcher.start()
        rss_before = group.rss()
        requests_before = sum(s[6] for s in group.states())
        cpu_before, server_before = group.cpu(), cpu_seconds(self.server.pid)
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: self.request("POST", path, _foo(i)), range(foos)))
        if not done.wait(BOUND):
            raise TimeoutError("the Foos did not all get a status")
        seconds = time.perf_counter() - start
        quiet_seconds = self._wait_quiet(group) - start
        controller_cpu = group.cpu() - cpu_before
        server_cpu = cpu_seconds(self.server.pid) - server_before
        rss_growth = [after - before for before, after in zip(rss_before, group.rss(), strict=True)]
        states = group.states()
        return Row(name, replicas, seconds, quiet_seconds, controller_cpu, server_cpu,
                   rss_growth, [s[2] for s in states], [s[3] for s in states],
                   sum(s[4] for s in states), sum(s[5] for s in states),
                   sum(s[6] for s in states) - requests_before)

    def _watch_statuses(self, path: str, since: str, count: int, done: threading.Event) -> None:
        """Set ``done`` once a watch from ``since`` has seen ``count`` Foos with a status."""
        response = self.http.request(
            "GET", self.server.url + path,
            fields={"watch": "1", "resourceVersion": since, "timeoutSeconds": str(int(BOUND))},
            preload_content=False)
        converged: set[str] = set()
        buffer = b""
        try:
            for chunk in response.stream(65536):
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    obj = orjson.loads(line)["object"]
                    if obj.get("status") is not None:
                        converged.add(obj["metadata"]["name"])
                if len(converged) >= count:
                    done.set()
                    return
        finally:
            response.release_conn()

    @staticmethod
    def _wait_quiet(group: Replicas, interval: float = 0.25) -> float:
        """Wait until the replicas use less than ``QUIET_CPU`` of a core over ``interval``;
        return the ``perf_counter`` time that quiet interval began (the work's end, to
        within ``interval``)."""
        before = group.cpu()
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            began = time.perf_counter()
            time.sleep(interval)
            now = group.cpu()
            if now - before < QUIET_CPU * interval * len(group.processes):
                return began
            before = now
        raise TimeoutError("the replicas did not go quiet")


def _foo(index: int) -> dict[str, Any]:
    name = f"foo-{index:05d}"
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name}, "spec": {"deploymentName": name, "replicas": 1}}


def print_rows(title: str, rows: list[Row], foos: int) -> None:
    print(f"\n{title}")
    print(f"{'':<26}{'s':>6}{'Foos/s':>7}{'vs 1':>6}{'all s':>6}{'rec/s':>6}{'vs 1':>6}"
          f"{'ctl ms/Foo':>11}{'srv ms/Foo':>11}{'rec/Foo':>8}{'req/Foo':>8}{'ev lost':>8}"
          "   per replica: "
          "Foos cached/Deployments cached/RSS growth MiB")
    base = next((row for row in rows if row.replicas == 1 and row.name.startswith("sharded")),
                rows[0])
    for row in rows:
        shares = ", ".join(f"{f}/{d}/{r / 2**20:.1f}" for f, d, r in
                           zip(row.foos_cached, row.deployments_cached, row.rss_growth,
                               strict=True))
        print(f"{row.name:<26}{row.seconds:>6.1f}{foos / row.seconds:>7.0f}"
              f"{base.seconds / row.seconds:>5.2f}x{row.quiet_seconds:>6.1f}"
              f"{row.reconciles / row.quiet_seconds:>6.0f}"
              f"{base.quiet_seconds / row.quiet_seconds:>5.2f}x"
              f"{row.controller_cpu / foos * 1e3:>11.2f}{row.server_cpu / foos * 1e3:>11.2f}"
              f"{row.reconciles / foos:>8.2f}{row.requests / foos:>8.2f}"
              f"{row.events_dropped:>8}   {shares}", flush=True)


AREAS = (  # (label, file suffix, function): cumulative CPU of these entry points
    ("reconciles (FooReconciler.reconcile)", "foo_controller/_reconciler.py", "reconcile"),
    ("event recorder thread (correlate, write)", "events/_broadcaster.py", "_run"),
    ("reflectors (list, watch, decode, queue)", "cache/_reflector.py", "_loop"),
    ("informer delivery (deltas to handlers)", "cache/_informer.py", "_process_loop"),
    ("workqueue (add, get, done: own time)", "/workqueue/", ""),
    ("HTTP requests (transport.send)", "rest/transport.py", "send"),
    ("  of which header parsing (rest/_http.py)", "rest/_http.py", "parse_headers"),
    ("decoding responses (model_from_wire_json)", "meta/_model.py", "model_from_wire_json"),
    ("decoding watch events", "rest/_watch.py", "decode"),
    ("encoding request bodies (to_json)", "", "to_json"),
    ("building models (KubeModel.__init__)", "meta/_model.py", "__init__"),
    ("  of which rule checks (_check_model)", "meta/_model.py", "_check_model"),
    ("cached reads (cache.get: copies)", "_cluster/cache.py", "get"),
    ("pydantic schema builds (first use)", "pydantic/main.py", "model_rebuild"),
)


def print_profile(path: str, foos: int) -> None:
    """Where the profiled replica's CPU went (every thread, ``time.thread_time``): the
    cumulative time of the entry points of each part of the controller (parts overlap:
    reconciles include their HTTP requests), then the top functions by own time."""
    stats = pstats.Stats(path)
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in table.values())
    print(f"\nprofile of the unsharded replica ({path}): {total:.2f} s CPU profiled, "
          f"{total / foos * 1e3:.2f} ms per Foo (cProfile slows it ~3x; read the shares)")
    for label, suffix, function in AREAS:
        if function:
            method = f"<method '{function}'"  # a C method's entry, e.g. pydantic's to_json
            seconds = sum(cumtime for (file, _, name), (_, _, _, cumtime, _) in table.items()
                          if file.endswith(suffix)
                          and (name == function or name.startswith(method)))
        else:  # a package: its functions' own time
            seconds = sum(tottime for (file, _, _), (_, _, tottime, _, _) in table.items()
                          if suffix in file)
        print(f"  {label:<44}{seconds / foos * 1e3:>7.2f} ms/Foo {seconds / total:>5.0%}")
    stats.sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 Foos, 1 and 2 replicas")
    parser.add_argument("--foos", type=int, help="Foos created at once (default 2,000)")
    parser.add_argument("--replicas", default=None, help="comma-separated (default 1,2,4)")
    parser.add_argument("--workers", type=int, default=4, help="reconciles per replica")
    parser.add_argument("--reconcile-cpu-ms", type=float, default=40.0,
                        help="CPU-bound ms added per reconcile for the heavy load (0: none)")
    parser.add_argument("--heavy-foos", type=int,
                        help="Foos per row of the heavy load (default --foos / 8, at least 100)")
    parser.add_argument("--profile", metavar="FILE", default="",
                        help="profile the unsharded replica into FILE and summarise it")
    args = parser.parse_args()
    args.foos = args.foos or (400 if args.quick else 2_000)
    args.heavy_foos = args.heavy_foos or max(args.foos // 8, 100)
    counts = [int(n) for n in (args.replicas or ("1,2" if args.quick else "1,2,4")).split(",")]
    loads = [("plain", 0.0, args.foos)] + ([("heavy", args.reconcile_cpu_ms, args.heavy_foos)]
                                           if args.reconcile_cpu_ms else [])
    print_load()
    print(f"Foos created at once per row: {args.foos:,} (plain), {args.heavy_foos:,} (heavy: "
          f"+{args.reconcile_cpu_ms:g} ms CPU per reconcile); {args.workers} workers per "
          f"replica; replicas {counts}")
    crd = yaml.safe_load(CRD_PATH.read_text())
    with TestAPIServerProcess(sharded_list_and_watch=True, crds=[crd]) as server:
        bench = Bench(server, args)
        rows: dict[str, list[Row]] = {name: [] for name, _, _ in loads}
        # interleaved: the loads alternate within each replica count
        for count in counts:
            for load, cpu_ms, foos in loads:
                rows[load].append(bench.run(f"sharded, {count} replica(s)", count, cpu_ms, foos))
        for load, cpu_ms, foos in loads:
            profile = args.profile if load == "plain" else ""
            name = "unsharded" + (" (profiled)" if profile else " (baseline)")
            rows[load].append(bench.run(name, 1, cpu_ms, foos, sharded=False, profile=profile))
        for load, cpu_ms, foos in loads:
            print_rows(f"{load} load: {foos:,} Foos, +{cpu_ms:g} ms CPU per reconcile",
                       rows[load], foos)
        print_load()
    if args.profile:
        print_profile(args.profile, args.foos)


if __name__ == "__main__":
    main()
