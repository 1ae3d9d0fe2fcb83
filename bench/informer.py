"""Informer initial sync, memory per cached Foo, and watch replay: kgen against two baselines.

Run: ``.venv/bin/python bench/informer.py`` (10,000 and 50,000 Foos, paged and unpaged;
~10 min) or ``--quick`` (10,000 only). A test API server in a child process (so its work
and memory are not counted against the clients) serves realistic ~1.1 KB Foos: 3 labels,
2 annotations, a managedFields entry for the spec, and on every other Foo a status with a
second entry for the status subresource. The Foos are seeded straight into the server's
store through its ``ObjectTracker`` (creating 50,000 over HTTP one by one would dominate the
run; the objects served are the same).

Clients, each keeping a cache keyed ``namespace/name`` and calling one handler per object:

* **lean dict (the limit)**: a hand-written paged list (``limit`` + ``continue``) and watch
  with urllib3 + ``orjson`` into a plain dict — untyped, nothing checked. It handles the
  collector as kgen's reflector does (issue 22: equal collector handling): the cyclic
  collector paused for the whole list (``no_gc``), the list's objects promoted to the
  oldest generation (``promote_to_oldest_generation``) before it resumes, both the runtime's
  own calls (since issue 22, round syncmargin: promoted after the pause, as before, the
  lean dict paid a young collection over the whole list that kgen never pays); the
  ``collector left running`` row is the same loop without those two calls;
* **kgen**: ``foo_api.informers.SharedInformerFactory`` — typed ``Foo`` models in an
  indexer (decoded by ``model_from_wire_json``; since issue 22, round lazycache, kept as
  their wire documents until first touched, which this bench's handlers never do); alone
  (the default configuration, which since issue 22 gives the objects of watch events the
  shared equal of each ``fieldsV1`` tree; listed objects keep theirs), with the
  ``drop_managed_fields`` and ``compact`` transforms, and with
  ``ReflectorOptions(freeze_initial_list=True)`` (``gc.freeze`` after the first list);
* **kubernetes**: ``kubernetes.informer.SharedInformer`` (37.0.2). It cannot list custom
  objects on its own: it reads ``resp.items`` of ``list_func``'s result, and
  ``CustomObjectsApi`` returns a dict (whose ``items`` is the dict method). We wrap the list
  call to give it ``.items``/``.metadata.resource_version`` and let its own ``Watch`` call
  the unwrapped function for the watch. It always lists in one unpaged request. Its
  ``stop()`` hangs if called between its list and its watch request, so we stop it only
  once its watch is open;
* **floor**: the same GETs reading bytes only — the server's and HTTP's share of every row.

Paging: each size is listed in pages (500 at 10,000, client-go's default; 5,000 at 50,000)
and unpaged. The test server builds each page by sorting the whole collection (and continue
pages from its history), so 100 pages of 500 at 50,000 would measure the server, not the
clients. The kubernetes informer, the transforms' variants and watch replay run in the first
configuration only; a last table shows how sync time and memory grow from 10,000 to 50,000.

Measured: **sync** — wall time from start until the cache holds every Foo and the handler
has seen each one (best of ``REPEAT`` rounds, 2 at 50,000, each round syncing every client
once in turn; collector enabled as in production), and the CPU time of this process
meanwhile (every thread; best round) with the collector's share of it; **held** — bytes
``tracemalloc`` sees allocated, after a full collection, by the synced client (cache,
indexes, threads), per object; **replay** — a watch opened from a resourceVersion older
than ``EVENTS`` stored updates, so the server replays them as fast as the client takes
them: events per second reaching the handler, and this process's CPU microseconds per
event, which a starved server does not move (10,000 only; best of ``REPLAYS``, the clients
taking turns). A last table decodes one list body in-process and applies each
transform (and each part of ``compact``) alone: memory held and microseconds per object,
without the server's noise.
"""

from __future__ import annotations

import argparse
import functools
import gc
import inspect
import logging
import multiprocessing
import re
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import orjson
import urllib3
import yaml
from _common import (  # bench/ is on sys.path when this file is run
    CollectorTime,
    best_time,
    print_load,
)
from kubernetes import client as k8s
from kubernetes import informer as k8s_informer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.clientset import Clientset
from foo_api.informers import SharedInformerFactory
from foo_api.samplecontroller.v1alpha1 import FOO_RESOURCE, Foo, FooList

from kgen_runtime.cache import (
    Compactor,
    ListWatch,
    ReflectorOptions,
    SharedIndexInformer,
    TransformFunc,
    compact,
    drop_managed_fields,
)
from kgen_runtime.meta import no_gc
from kgen_runtime.meta._memory import promote_to_oldest_generation
from kgen_runtime.rest import Config, ListOptions
from kgen_runtime.testing import ObjectTracker, TestAPIServer

SIZES = (10_000, 50_000)
#: (Foos, list page size: 0 is one unpaged list) per run; --quick runs the first two.
CONFIGS = ((10_000, 500), (10_000, 0), (50_000, 0), (50_000, 5_000))
REPEAT = 3  # sync timings per client at 10,000 Foos (2 at 50,000)
REPLAYS = 2  # watch replays per client (best events/s), interleaved
EVENTS = 10_000
TIMEOUT = 120.0
NAMESPACE = "bench"
GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
API_VERSION = f"{GROUP}/{VERSION}"
PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
CRD = Path(__file__).resolve().parents[1] / "examples" / "foo-crd" / "crds" / "foo.yaml"
TIME = "2025-06-01T12:00:00Z"


def _fields(*paths: str) -> dict[str, Any]:
    """A ``fieldsV1`` tree owning ``paths`` (dotted, ``f:`` prefixes added)."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for part in path.split("|"):
            node = node.setdefault(f"f:{part}", {".": {}} if part in _PARENTS else {})
    return tree


_PARENTS = {"metadata", "labels", "annotations", "spec", "status"}


def foo(index: int) -> dict[str, Any]:
    """A realistic Foo of about 1.1 KB as served (the server adds uid, timestamps, versions)."""
    labels = {
        "app.kubernetes.io/name": "sample",
        "app.kubernetes.io/instance": f"sample-{index % 50}",
        "tier": ("web", "db", "cache")[index % 3],
    }
    annotations = {
        "example.com/owner": f"team-{index % 7}@example.com",
        "example.com/revision": str(index * 7919 % 100_000),
    }
    managed = [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": API_VERSION,
            "time": TIME,
            "fieldsType": "FieldsV1",
            "fieldsV1": _fields(
                *(f"metadata|labels|{key}" for key in labels),
                *(f"metadata|annotations|{key}" for key in annotations),
                "spec|deploymentName",
                "spec|replicas",
            ),
        }
    ]
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Foo",
        "metadata": {
            "name": f"foo-{index:05d}",
            "namespace": NAMESPACE,
            "labels": labels,
            "annotations": annotations,
            "managedFields": managed,
        },
        "spec": {"deploymentName": f"deployment-{index:05d}", "replicas": 1 + index % 10},
    }
    if index % 2 == 0:
        obj["status"] = {"availableReplicas": index % 10}
        managed.append(
            {
                "manager": "sample-controller",
                "operation": "Update",
                "apiVersion": API_VERSION,
                "time": TIME,
                "fieldsType": "FieldsV1",
                "fieldsV1": _fields("status|availableReplicas"),
                "subresource": "status",
            }
        )
    return obj


# --- the server (child process) ---------------------------------------------------------------


def serve(conn: Connection, count: int) -> None:
    """Seed ``count`` Foos, send the URL, then run ``("update", n)`` commands until ``"stop"``.

    An update command changes ``spec.replicas`` of ``n`` Foos (round robin) and answers with
    the resourceVersion before the first of them, from which a watch replays all ``n``.

    The server's heap is frozen (``gc.freeze``) after the seeding and after every update
    command, so its cyclic collector never walks what earlier commands left: left running, its
    full collections made every replay cost the server more than the one before (server CPU
    per replayed event, read from ``/proc``: 12 µs on a process's first replay, 23-41 on its
    second, up to 75 on its fourth; 10-17 on every one with the heap frozen), so every client
    replaying after the lean dict, which replays first, was timed against a slower server.
    Frozen, the server costs every client the same whatever the order.
    """
    with TestAPIServer(history_size=EVENTS + 1_000) as server:
        server.install_crd(yaml.safe_load(CRD.read_text()))
        tracker = ObjectTracker(server.core)
        stored = [tracker.add(foo(index)) for index in range(count)]
        latest = stored[-1]["metadata"]["resourceVersion"]
        gc.freeze()
        conn.send(server.url)
        while (command := conn.recv()) != "stop":
            _, events = command
            before = latest
            for n in range(events):
                obj = stored[n % count]
                obj["spec"]["replicas"] = obj["spec"]["replicas"] % 10 + 1  # schema max 10
                stored[n % count] = updated = tracker.update(FOO_RESOURCE.gvr, obj, NAMESPACE)
                latest = updated["metadata"]["resourceVersion"]
            gc.freeze()
            conn.send(before)


# --- clients ------------------------------------------------------------------------------------


class Counter:
    """A handler counting calls; ``done`` is set at ``target``. Called from one thread."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.calls = 0
        self.done = threading.Event()

    def __call__(self, *_: Any) -> None:
        self.calls += 1
        if self.calls >= self.target:
            self.done.set()

    def wait(self) -> None:
        if not self.done.wait(TIMEOUT):
            raise TimeoutError(f"handler saw {self.calls} of {self.target} in {TIMEOUT} s")


class Client:
    """One informer-like client: ``start`` syncs (returning when the handler saw ``count``
    adds), ``replay`` waits for ``events`` updates from ``since``, ``stop`` ends it."""

    name = ""

    def start(self, count: int) -> None:
        raise NotImplementedError

    def replay(self, since: str, events: int) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class LeanDict(Client):
    """Paged list + watch with urllib3 and orjson into a dict (the untyped limit)."""

    def __init__(
        self, url: str, page: int, *, drop_managed: bool = False, manage_gc: bool = True
    ) -> None:
        self.name = (
            "lean dict"
            + (" -managedFields" if drop_managed else "")
            + (" (limit)" if manage_gc else ", collector left running")
        )
        self._url = url + PATH
        self._page = page
        self._pool = urllib3.PoolManager()
        self._drop = drop_managed
        self._manage_gc = manage_gc
        self.cache: dict[str, dict[str, Any]] = {}

    def _keep(self, obj: dict[str, Any]) -> str:
        meta = obj["metadata"]
        if self._drop:
            meta.pop("managedFields", None)
        key = f"{meta['namespace']}/{meta['name']}"
        self.cache[key] = obj
        return key

    def start(self, count: int) -> None:
        handler = Counter(count)
        if not self._manage_gc:
            self._list(handler)
        else:  # as kgen's reflector (ReflectorState.gc_paused_list): paused for the whole
            # list, its objects promoted before the collector resumes; promoted after it, the
            # first allocation past the pause ran a young collection over the whole list
            # (0.03 s of this row's CPU at 10,000 Foos, which the reflector never pays)
            with no_gc():
                self._list(handler)
                promote_to_oldest_generation()
        handler.wait()

    def _list(self, handler: Counter) -> None:
        fields = {"limit": str(self._page)} if self._page else {}
        while True:
            page = orjson.loads(self._pool.request("GET", self._url, fields=fields).data)
            for obj in page["items"]:
                handler(self._keep(obj))
            token = page["metadata"].get("continue")
            if not token:
                break
            fields = {"limit": str(self._page), "continue": token}

    def replay(self, since: str, events: int) -> None:
        handler = Counter(events)
        fields = {"watch": "1", "resourceVersion": since, "allowWatchBookmarks": "true"}
        response = self._pool.request("GET", self._url, fields=fields, preload_content=False)
        try:
            for line in _lines(response):
                event = orjson.loads(line)
                if event["type"] in ("ADDED", "MODIFIED"):
                    handler(self._keep(event["object"]))
                    if handler.done.is_set():
                        return
        finally:
            response.release_conn()
            response.close()
        handler.wait()

    def stop(self) -> None:
        self._pool.clear()


def _lines(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    buffer = b""
    for chunk in response.stream(65536):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        yield from (line for line in lines if line)


class Kgen(Client):
    """The generated factory's Foo informer, with an optional transform."""

    def __init__(
        self,
        url: str,
        page: int,
        transform: TransformFunc | None,
        label: str,
        *,
        freeze: bool = False,
    ) -> None:
        self.name = f"kgen typed{label}"
        self._freeze = freeze
        self._clientset = Clientset.for_config(Config(host=url, qps=0.0))
        self._page = page
        self._transform = transform
        self._stop = threading.Event()
        self._factory: SharedInformerFactory | None = None
        self._thread: threading.Thread | None = None

    def start(self, count: int) -> None:
        handler = Counter(count)
        factory = SharedInformerFactory(
            self._clientset.transport,
            namespace=NAMESPACE,
            transform=self._transform,
            reflector_options=ReflectorOptions(
                page_size=self._page, freeze_initial_list=self._freeze
            ),
        )
        factory.samplecontroller.v1alpha1.foos.informer.add_event_handler(on_add=handler)
        factory.start(self._stop)
        self._factory = factory
        handler.wait()

    def replay(self, since: str, events: int) -> None:
        """A fresh informer whose list is empty at ``since``: the watch replays ``events``."""
        handler = Counter(events)
        foos = self._clientset.samplecontroller_v1alpha1.foos(NAMESPACE)

        def list_at_since(options: ListOptions) -> Any:
            page = foos.list(ListOptions(limit=1, resource_version=since))
            page.items = []
            page.metadata.resource_version = since
            page.metadata.continue_ = None
            return page

        # Watched objects as the factory's informers get them: ListWatch.from_client asks for
        # lazily built ones where the runtime can (issue 22, round lazycache).
        watch = (functools.partial(foos.watch, lazy=True)
                 if "lazy" in inspect.signature(foos.watch).parameters else foos.watch)
        informer: SharedIndexInformer[Foo] = SharedIndexInformer(
            ListWatch(list_at_since, watch), name="replay"
        )
        if self._transform is not None:
            informer.set_transform(self._transform)
        informer.add_event_handler(on_add=handler, on_update=handler)
        self._thread = threading.Thread(target=informer.run, args=(self._stop,), daemon=True)
        self._thread.start()
        handler.wait()

    def stop(self) -> None:
        self._stop.set()
        if self._factory is not None:
            self._factory.shutdown()
        if self._thread is not None:
            self._thread.join(TIMEOUT)
        if self._freeze:
            gc.unfreeze()  # the next client starts with the collector as it found it


class ServerFloor(Client):
    """The same paged GETs, bytes only: what the server and HTTP cost every client."""

    name = "(floor: the GETs alone, bytes only)"

    def __init__(self, url: str, page: int) -> None:
        self._url = url + PATH
        self._page = page
        self._pool = urllib3.PoolManager()

    def start(self, count: int) -> None:
        fields = {"limit": str(self._page)} if self._page else {}
        while True:
            head = self._pool.request("GET", self._url, fields=fields).data[:1024]
            token = _CONTINUE.search(head)
            if token is None:
                return
            fields = {"limit": str(self._page), "continue": token[1].decode()}

    def stop(self) -> None:
        self._pool.clear()


_CONTINUE = re.compile(rb'"continue":"([^"]+)"')


_K8S_INFORMER: Any = k8s_informer  # untyped package


class KubernetesInformer(Client):
    """``kubernetes.informer.SharedInformer`` over ``CustomObjectsApi``, list call wrapped."""

    name = "kubernetes SharedInformer"

    def __init__(self, url: str) -> None:
        configuration = k8s.Configuration()
        configuration.host = url
        self._api = k8s.CustomObjectsApi(k8s.ApiClient(configuration))
        self._informer: Any = None
        self._since: str | None = None

    def _list(self, namespace: str, watch: bool = False, **kwargs: Any) -> Any:
        call: Any = self._api.list_namespaced_custom_object
        if watch:  # Watch.stream passes watch=True and wants the raw response
            return call(GROUP, VERSION, namespace, PLURAL, watch=True, **kwargs)
        if self._since is not None:  # replay: an empty list at the old version
            return SimpleNamespace(items=[], metadata=SimpleNamespace(resource_version=self._since))
        result = call(GROUP, VERSION, namespace, PLURAL, **kwargs)
        meta = SimpleNamespace(resource_version=result["metadata"]["resourceVersion"])
        return SimpleNamespace(items=result["items"], metadata=meta)

    def _run(self, handler: Counter, *events: str) -> None:
        informer: Any = _K8S_INFORMER.SharedInformer(self._list, namespace=NAMESPACE)
        for event in events:
            informer.add_event_handler(event, handler)
        self._informer = informer
        informer.start()
        handler.wait()

    def start(self, count: int) -> None:
        self._run(Counter(count), _K8S_INFORMER.ADDED)

    def replay(self, since: str, events: int) -> None:
        self._since = since
        self._run(Counter(events), _K8S_INFORMER.ADDED, _K8S_INFORMER.MODIFIED)

    def stop(self) -> None:
        """Stop once its watch is open: ``SharedInformer.stop()`` called between its list and
        its watch request hangs (the watch starts after the stop and is never interrupted)."""
        informer = self._informer
        if informer is None:
            return
        deadline = time.monotonic() + TIMEOUT
        while getattr(informer._watch, "_resp", None) is None and time.monotonic() < deadline:
            threading.Event().wait(0.01)  # the informer offers nothing to wait on
        informer.stop()


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Result:
    sync: float
    held_per_object: float


class SyncCost(NamedTuple):
    """Seconds of one sync: wall; CPU of this process (every thread); of which collector."""

    wall: float
    cpu: float
    collector: float


def sync_cost(make: Callable[[], Client], count: int) -> SyncCost:
    """What a fresh client's sync costs, from its start until its handler has seen every
    object; the collector stays enabled, as in production."""
    gc.collect()
    client = make()
    with CollectorTime() as collector:
        wall, cpu = time.perf_counter(), time.process_time()
        client.start(count)
        cost = SyncCost(time.perf_counter() - wall, time.process_time() - cpu, collector.seconds)
    client.stop()
    return cost


def held_per_object(make: Callable[[], Client], count: int) -> float:
    """Bytes a synced client keeps alive per object (after a full collection)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        client = make()
        client.start(count)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    client.stop()
    return held / count


class Replay(NamedTuple):
    """One watch replay: events per second reaching the handler, and this process's CPU
    microseconds per event (every thread; unlike the rate, not slowed by a starved server)."""

    rate: float
    cpu_us: float


def replay_rate(make: Callable[[], Client], conn: Connection) -> Replay:
    """A watch replaying ``EVENTS`` stored updates to a fresh client."""
    conn.send(("update", EVENTS))
    since = _receive(conn)
    client = make()
    start, cpu = time.perf_counter(), time.process_time()
    client.replay(since, EVENTS)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    client.stop()
    return Replay(EVENTS / elapsed, cpu / EVENTS * 1e6)


def breakdown(body: bytes, count: int) -> None:
    """Memory and time of each transform on the same list body, decoded in-process."""
    print(
        f"\ndecoded in-process, no informer ({count:,} Foos; µs/obj: decoding, or the transform "
        f"alone; best of {REPEAT}, collector paused)"
    )
    print(f"{'':<42}{'held B/obj':>12}{'µs/obj':>8}")
    typed: dict[str, TransformFunc] = {
        "kgen typed (decode only)": lambda obj: obj,
        "+intern strings (and fieldsV1 trees)": Compactor(
            share_fields_sets=False, drop_empty_extras=False
        ),
        "+compact (all three)": compact,
        "+drop_managed_fields": drop_managed_fields,
        "+drop_managed_fields +compact": _drop_and_compact,
    }

    def dicts(drop: bool) -> Callable[[], object]:
        def decode() -> object:
            items = orjson.loads(body)["items"]
            for obj in items if drop else ():
                obj["metadata"].pop("managedFields", None)
            return items

        return decode

    rows: dict[str, Callable[[], object]] = {
        "orjson dicts": dicts(False),
        "orjson dicts -managedFields": dicts(True),
    }
    for name, transform in typed.items():
        rows[name] = _decoder(transform, body)
    for name, decode in rows.items():
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept = decode()
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        del kept
        transform_us = float("nan")
        if name in typed and name != "kgen typed (decode only)":
            transform_us = _transform_time(typed[name], body) / count * 1e6
        elif name == "kgen typed (decode only)":
            transform_us = best_time(lambda: FooList.model_from_wire_json(body)) / count * 1e6
        print(f"{name:<42}{held / count:>12,.0f}{transform_us:>8.1f}", flush=True)


def _decoder(transform: TransformFunc, body: bytes) -> Callable[[], object]:
    return lambda: [transform(item) for item in FooList.model_from_wire_json(body).items]


def _transform_time(transform: TransformFunc, body: bytes) -> float:
    """Best time to transform every decoded item, the collector paused as decoding pauses it."""
    best = float("inf")
    for _ in range(REPEAT):
        items = FooList.model_from_wire_json(body).items
        with no_gc():
            start = time.perf_counter()
            for item in items:
                transform(item)
            best = min(best, time.perf_counter() - start)
    return best


def _receive(conn: Connection) -> Any:
    """The server's next answer; TimeoutError if it died or hangs."""
    if not conn.poll(TIMEOUT):
        raise TimeoutError("the API server process did not answer")
    return conn.recv()


@contextmanager
def served(count: int) -> Iterator[tuple[str, Connection]]:
    """The test API server child seeded with ``count`` Foos: its URL and the pipe that sends
    it commands (``serve``); stopped on exit."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    server = context.Process(target=serve, args=(child, count), daemon=True)
    server.start()
    try:
        yield _receive(parent), parent
    finally:
        parent.send("stop")
        server.join(30)


@dataclass(frozen=True)
class Row:
    make: Callable[[], Client]
    replay: bool = False  # measure watch replay too (10,000 only)


def rows(url: str, page: int, first: bool) -> dict[str, Row]:
    """The clients of one run; the first run also measures the transforms' variants and the
    kubernetes informer (always unpaged), and watch replay."""
    specs = [
        Row(lambda: LeanDict(url, page), replay=True),
        Row(lambda: LeanDict(url, page, manage_gc=False)),
        Row(lambda: LeanDict(url, page, drop_managed=True)),
        Row(lambda: Kgen(url, page, None, ""), replay=True),
        Row(lambda: Kgen(url, page, drop_managed_fields, " +drop_managed_fields")),
        Row(lambda: Kgen(url, page, None, " +freeze_initial_list", freeze=True)),
    ]
    if first:
        specs += [
            Row(lambda: Kgen(url, page, compact, " +compact"), replay=True),
            Row(lambda: Kgen(url, page, _drop_and_compact, " +drop_managed_fields +compact")),
            Row(lambda: KubernetesInformer(url), replay=True),
        ]
    specs.append(Row(lambda: ServerFloor(url, page)))
    return {spec.make().name: spec for spec in specs}


def _drop_and_compact(obj: Any) -> Any:
    return compact(drop_managed_fields(obj))


def run(count: int, page: int, first: bool) -> dict[str, Result]:
    results: dict[str, Result] = {}
    with served(count) as (url, parent):
        size = len(urllib3.PoolManager().request("GET", url + PATH).data) / count
        paging = f"pages of {page}" if page else "one unpaged list"
        repeat = REPEAT if count == SIZES[0] else 2
        print(
            f"\n{count:,} Foos, {size:,.0f} bytes of JSON each as listed; {paging} "
            f"(kubernetes: unpaged); sync best of {repeat}",
            flush=True,
        )
        print(
            f"{'':<42}{'sync s':>8}{'vs limit':>10}{'CPU s':>7}{'vs limit':>10}{'GC s':>6}"
            f"{'held B/obj':>12}{'replay ev/s':>13}{'vs limit':>10}{'µs/ev':>7}{'vs limit':>10}"
        )
        clients = rows(url, page, first)
        costs: dict[str, list[SyncCost]] = {name: [] for name in clients}
        for _ in range(repeat):  # interleaved: one sync of every client per round
            for name, row in clients.items():
                costs[name].append(sync_cost(row.make, count))
        replayed: dict[str, Replay] = {}
        for _ in range(REPLAYS if first else 0):  # interleaved too, best of REPLAYS
            for name, row in clients.items():
                if row.replay:
                    replay = replay_rate(row.make, parent)
                    best_so_far = replayed.get(name, replay)
                    replayed[name] = Replay(
                        max(best_so_far.rate, replay.rate), min(best_so_far.cpu_us, replay.cpu_us)
                    )
        nan = Replay(float("nan"), float("nan"))
        rates = {name: replayed.get(name, nan).rate for name in clients}
        replay_cpu = {name: replayed.get(name, nan).cpu_us for name in clients}
        limit: Result | None = None
        limit_cpu = limit_rate = limit_replay_cpu = 0.0
        for name, row in clients.items():
            wall = min(cost.wall for cost in costs[name])
            cheapest = min(costs[name], key=lambda cost: cost.cpu)
            result = results[name] = Result(wall, held_per_object(row.make, count))
            if limit is None:
                limit, limit_cpu = result, cheapest.cpu
                limit_rate, limit_replay_cpu = rates[name], replay_cpu[name]
            print(
                f"{name:<42}{result.sync:>8.2f}{result.sync / limit.sync:>9.2f}x"
                f"{cheapest.cpu:>7.2f}{cheapest.cpu / limit_cpu:>9.2f}x{cheapest.collector:>6.2f}"
                f"{result.held_per_object:>12,.0f}{rates[name]:>13,.0f}"
                f"{rates[name] / limit_rate:>9.2f}x{replay_cpu[name]:>7.1f}"
                f"{replay_cpu[name] / limit_replay_cpu:>9.2f}x",
                flush=True,
            )
        if first:
            breakdown(urllib3.PoolManager().request("GET", url + PATH).data, count)
    return results


def growth(results: dict[tuple[int, int], dict[str, Result]]) -> None:
    """How sync time and memory per object grow from the smaller to the larger size."""
    small, large = SIZES
    print(f"\ngrowth {small:,} -> {large:,} Foos ({large // small}x the objects)")
    print(f"{'':<42}{'paging':>8}{'sync x':>8}{'B/obj x':>9}")
    for page in sorted({page for _, page in results}):
        before, after = results.get((small, page)), results.get((large, page))
        if before is None or after is None:
            continue
        for name in after:
            if name in before and not name.startswith("(floor"):
                sync = after[name].sync / before[name].sync
                held = after[name].held_per_object / max(before[name].held_per_object, 1)
                print(f"{name:<42}{page or 'none':>8}{sync:>7.2f}x{held:>8.2f}x")


def sync_rounds(rounds: int) -> None:
    """The paged 10,000-Foo sync of the lean dict and of kgen only, ``rounds`` interleaved
    rounds: the CPU of each side's best and median round, and the median of the per-round
    ratios, finer than the main table's best of ``REPEAT`` printed to 10 ms."""
    count, page = CONFIGS[0]
    with served(count) as (url, _):
        sides: dict[str, Callable[[], Client]] = {
            "lean dict (limit)": lambda: LeanDict(url, page),
            "kgen typed": lambda: Kgen(url, page, None, ""),
        }
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(rounds):
            for name, make in sides.items():
                cpu[name].append(sync_cost(make, count).cpu * 1e3)
    print(f"\n{count:,} Foos, pages of {page}; {rounds} interleaved syncs each; CPU ms")
    print(f"{'':<42}{'best':>8}{'median':>8}")
    for name, times in cpu.items():
        print(f"{name:<42}{min(times):>8.1f}{statistics.median(times):>8.1f}")
    lean, kgen = cpu.values()
    ratios = [k / limit for k, limit in zip(kgen, lean, strict=True)]
    print(
        f"kgen typed / lean dict: {statistics.median(ratios):.2f}x (median of rounds; "
        f"{min(ratios):.2f}-{max(ratios):.2f}), best against best {min(kgen) / min(lean):.2f}x"
    )


def main() -> None:
    # a stopped SharedInformer logs its interrupted watch as an unexpected error
    logging.getLogger("kubernetes.informer.informer").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 Foos only")
    parser.add_argument(
        "--sync-rounds", type=int, metavar="N",
        help="only the paged sync of the lean dict and kgen, N interleaved rounds",
    )
    args = parser.parse_args()
    print_load()
    if args.sync_rounds:
        sync_rounds(args.sync_rounds)
        print_load()
        return
    configs = CONFIGS[:2] if args.quick else CONFIGS
    results = {
        (count, page): run(count, page, index == 0)
        for index, (count, page) in enumerate(configs)
    }
    growth(results)
    print_load()


if __name__ == "__main__":
    main()
