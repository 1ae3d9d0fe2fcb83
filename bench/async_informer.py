"""Async informer initial sync of 10,000 Foos: kgen's async informer against its sync informer
and against a list + watch with ``kubernetes_asyncio``.

Run: ``.venv/bin/python bench/async_informer.py`` (about 3 min; ``--quick``: paged only,
3 rounds; needs the ``bench`` extra:
``.venv/bin/pip install -e '.[bench]'``). The server, the Foos (~1.1 KB each, managedFields
included) and the measuring are ``bench/informer.py``'s, imported from it: a test API server
in a child process seeded with 10,000 Foos; **sync** is the wall time from a fresh client's
start until its handler has seen every Foo (best and median of ``REPEAT`` rounds, each
round syncing every client once in turn; collector enabled, as in production), and the CPU
time this process spent meanwhile (every thread; the server's process not counted) — on the
shared machine single wall timings move by tens of percent, CPU times much less; **held** is what
``tracemalloc`` sees allocated by the synced client after a full collection, per Foo. Each
configuration runs paged (500 per page, client-go's default) and unpaged.

Clients, each keeping a cache keyed ``namespace/name`` and calling one handler per object:

* **lean dict (the limit)**: ``informer.py``'s paged list with urllib3 + ``orjson`` into a
  dict, blocking — untyped, nothing checked; the collector handled as kgen's;
* **kgen sync** (the baseline of the 1.2x target): the generated ``SharedInformerFactory``
  (threads), typed ``Foo`` models in an indexer, default configuration;
* **kgen async**: the generated ``AsyncSharedInformerFactory`` on an event loop: the
  reflector and delta processing are tasks, the handler a plain function called in its
  listener's task; same typed models, same indexer;
* both kgen informers again with ``ReflectorOptions(freeze_initial_list=True)`` (opt-in:
  ``gc.freeze()`` after the first list, so the collector never walks the cache again);
* **kubernetes_asyncio**: what an informer amounts to with that package for a custom
  resource (it has no informer): ``CustomObjectsApi.list_namespaced_custom_object`` paged
  with ``limit``/``_continue`` (or one list), each item put in a dict and handed to the
  handler inline, then a ``watch.Watch().stream(...)`` of the same call from the list's
  resourceVersion (bookmarks on) applying ADDED/MODIFIED/DELETED to the dict, as a task. Its
  objects are ``json.loads`` dicts: no types, defaults or checks, no FIFO, indexer or
  per-handler queue, no relist on 410 or backoff (its ``Watch`` retries a 410 once, then
  raises). The sync ends with the list; the watch is opened, as kgen's is. The collector is
  handled as kgen's reflector handles it (issue 22): paused for the whole list (``no_gc``),
  the list's objects promoted to the oldest generation before it resumes (round
  ``syncmargin``), with the runtime's own calls. Its ``Watch()`` makes an ``ApiClient`` of
  its own, whose default ``Configuration`` builds an SSL context loading the system CA
  store even for an ``http://`` host (~20 ms of CPU, ~2 µs per listed Foo here): what a
  user pays per watch opened, so it stays in this row; the row **with its Watch made
  before** makes that ``Watch()`` before the sync (as its list's ``ApiClient`` is), and the
  ratio against both rows is printed (round ``asynclist`` in bench/README.md);
* **floor**: the same GETs reading bytes only — the server's and HTTP's share of every row.

Each async client runs on its own event loop, driven from the measuring thread with
``run_until_complete`` (the loop is idle between its start and stop, as are the sync
informers' threads after their sync).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import urllib3
from informer import (  # bench/ is on sys.path when this file is run
    NAMESPACE,
    PATH,
    TIMEOUT,
    Client,
    Kgen,
    LeanDict,
    ServerFloor,
    SyncCost,
    held_per_object,
    served,
    sync_cost,
)
from kubernetes_asyncio import client as k8s_aio
from kubernetes_asyncio import watch as k8s_aio_watch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "foo-crd"))
from foo_api.clientset import AsyncClientset
from foo_api.informers import AsyncSharedInformerFactory

from kgen_runtime.cache import ReflectorOptions
from kgen_runtime.meta import no_gc
from kgen_runtime.meta._memory import promote_to_oldest_generation
from kgen_runtime.rest import Config

COUNT = 10_000
PAGES = (500, 0)  # 0: one unpaged list
REPEAT = 5
QUICK_REPEAT = 3  # --quick
GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
SYNC, ASYNC, THEIRS = "kgen typed (sync)", "kgen async typed", "kubernetes_asyncio list+Watch"
THEIRS_MADE = "kubernetes_asyncio, Watch made before"
FREEZE = " +freeze_initial_list"


class AsyncCounter:
    """A handler counting calls on the loop; ``wait`` returns once it saw ``target``."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.calls = 0
        self.done = asyncio.Event()

    def __call__(self, *_: Any) -> None:
        self.calls += 1
        if self.calls >= self.target:
            self.done.set()

    async def wait(self) -> None:
        try:
            async with asyncio.timeout(TIMEOUT):
                await self.done.wait()
        except TimeoutError:
            raise TimeoutError(
                f"handler saw {self.calls} of {self.target} in {TIMEOUT} s"
            ) from None


class OnLoop(Client):
    """A client whose work runs on its own event loop, driven by the measuring thread."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def start(self, count: int) -> None:
        self._loop.run_until_complete(self._start(count))

    def stop(self) -> None:
        self._loop.run_until_complete(self._stop())
        self._loop.close()

    async def _start(self, count: int) -> None:
        raise NotImplementedError

    async def _stop(self) -> None:
        raise NotImplementedError


class KgenAsync(OnLoop):
    """The generated async factory's Foo informer (default configuration, or with
    ``freeze_initial_list``)."""

    def __init__(self, url: str, page: int, *, freeze: bool = False) -> None:
        super().__init__()
        self.name = ASYNC + (FREEZE if freeze else "")
        self._freeze = freeze
        self._clientset = AsyncClientset.for_config(Config(host=url, qps=0.0))
        self._page = page
        self._factory: AsyncSharedInformerFactory | None = None

    async def _start(self, count: int) -> None:
        handler = AsyncCounter(count)
        factory = AsyncSharedInformerFactory(
            self._clientset.transport,
            namespace=NAMESPACE,
            reflector_options=ReflectorOptions(
                page_size=self._page, freeze_initial_list=self._freeze
            ),
        )
        factory.samplecontroller.v1alpha1.foos.informer.add_event_handler(on_add=handler)
        factory.start()
        self._factory = factory
        await handler.wait()

    async def _stop(self) -> None:
        if self._factory is not None:
            await self._factory.shutdown()
        await self._clientset.aclose()
        if self._freeze:
            gc.unfreeze()  # the next client starts with the collector as it found it


class KubernetesAsyncio(OnLoop):
    """``kubernetes_asyncio`` list (paged or not) + ``Watch`` into a dict (see the module
    docstring for what it does and does not do); ``watch_made_before``: its ``Watch()`` is
    made before the sync."""

    def __init__(self, url: str, page: int, *, watch_made_before: bool = False) -> None:
        super().__init__()
        self.name = THEIRS_MADE if watch_made_before else THEIRS
        self._page = page
        self._api_client = self._loop.run_until_complete(_api_client(url))  # needs a loop
        self._api = k8s_aio.CustomObjectsApi(self._api_client)
        self._made: Any = (
            self._loop.run_until_complete(_new_watch()) if watch_made_before else None
        )
        self._watch: Any = None
        self._watching: asyncio.Task[None] | None = None
        self.cache: dict[str, dict[str, Any]] = {}

    def _keep(self, obj: dict[str, Any]) -> str:
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        self.cache[key] = obj
        return key

    async def _start(self, count: int) -> None:
        handler = AsyncCounter(count)
        with no_gc():  # as kgen's reflector (ReflectorState.gc_paused_list): paused for the
            # whole list, its objects promoted before the collector resumes (promoted after
            # it, the first allocation ran a young collection over the whole list)
            version = await self._list(handler)
            promote_to_oldest_generation()
        self._watching = asyncio.create_task(self._watch_from(version))
        await handler.wait()

    async def _list(self, handler: AsyncCounter) -> str:
        """The paged (or one) list into the dict; its resourceVersion."""
        paging: dict[str, Any] = {"limit": self._page} if self._page else {}
        call: Any = self._api.list_namespaced_custom_object
        while True:
            page = await call(GROUP, VERSION, NAMESPACE, PLURAL, **paging)
            for obj in page["items"]:
                handler(self._keep(obj))
            token = page["metadata"].get("continue")
            if not token:
                return str(page["metadata"]["resourceVersion"])
            paging = {"limit": self._page, "_continue": token}

    async def _watch_from(self, version: str) -> None:
        self._watch = watch = self._made or k8s_aio_watch.Watch()
        stream = watch.stream(
            self._api.list_namespaced_custom_object,
            GROUP,
            VERSION,
            NAMESPACE,
            PLURAL,
            resource_version=version,
            allow_watch_bookmarks=True,
        )
        async with watch:
            async for event in stream:
                kind, obj = event["type"], event["object"]
                if kind in ("ADDED", "MODIFIED"):
                    self._keep(obj)
                elif kind == "DELETED":
                    meta = obj["metadata"]
                    self.cache.pop(f"{meta['namespace']}/{meta['name']}", None)

    async def _stop(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            await asyncio.gather(self._watching, return_exceptions=True)
        if self._made is not None:
            await self._made.close()  # its ApiClient, if the watch task never ran
        await self._api_client.close()


async def _api_client(url: str) -> Any:
    return k8s_aio.ApiClient(k8s_aio.Configuration(host=url))


async def _new_watch() -> Any:
    return k8s_aio_watch.Watch()  # its ApiClient needs a running loop


def clients(url: str, page: int) -> dict[str, Callable[[], Client]]:
    makers: list[Callable[[], Client]] = [
        lambda: LeanDict(url, page),
        lambda: Kgen(url, page, None, " (sync)"),
        lambda: KgenAsync(url, page),
        lambda: KubernetesAsyncio(url, page),
        lambda: KubernetesAsyncio(url, page, watch_made_before=True),
        lambda: Kgen(url, page, None, " (sync)" + FREEZE, freeze=True),
        lambda: KgenAsync(url, page, freeze=True),
        lambda: ServerFloor(url, page),
    ]
    names = {}
    for make in makers:
        client = make()
        names[client.name] = make
        client.stop()  # closes the loop and pools it made
    return names


def run(page: int, repeat: int) -> None:
    with served(COUNT) as (url, _):
        size = len(urllib3.PoolManager().request("GET", url + PATH).data) / COUNT
        paging = f"pages of {page}" if page else "one unpaged list"
        print(
            f"\n{COUNT:,} Foos, {size:,.0f} bytes of JSON each as listed; {paging}; "
            f"{repeat} syncs each (wall: best, median; CPU: best, and the collector's share of it)",
            flush=True,
        )
        print(
            f"{'':<42}{'wall s':>8}{'vs sync':>9}{'median':>8}{'CPU s':>7}{'vs sync':>9}"
            f"{'GC s':>6}{'held B/obj':>12}"
        )
        makers = clients(url, page)
        costs: dict[str, list[SyncCost]] = {name: [] for name in makers}
        for _ in range(repeat):  # interleaved: one sync of every client per round
            for name, make in makers.items():
                costs[name].append(sync_cost(make, COUNT))
        best = {name: min(c.wall for c in runs) for name, runs in costs.items()}
        middle = {name: statistics.median(c.wall for c in runs) for name, runs in costs.items()}
        cheapest = {name: min(runs, key=lambda c: c.cpu) for name, runs in costs.items()}
        cpu_best = {name: cost.cpu for name, cost in cheapest.items()}
        for name, make in makers.items():
            held = held_per_object(make, COUNT)
            print(
                f"{name:<42}{best[name]:>8.2f}{best[name] / best[SYNC]:>8.2f}x"
                f"{middle[name]:>8.2f}{cpu_best[name]:>7.2f}"
                f"{cpu_best[name] / cpu_best[SYNC]:>8.2f}x{cheapest[name].collector:>6.2f}"
                f"{held:>12,.0f}",
                flush=True,
            )
        for variant in ("", FREEZE):
            for label, times in (("wall best", best), ("wall median", middle), ("CPU", cpu_best)):
                ours, sync = times[ASYNC + variant], times[SYNC + variant]
                print(
                    f"kgen async{variant}, {label + ':':<12} {ours / sync:.2f}x the sync "
                    f"informer (target: within 1.2x), {ours / times[THEIRS]:.2f}x "
                    "kubernetes_asyncio (target: below 1x; "
                    f"{ours / times[THEIRS_MADE]:.2f}x with its Watch made before)"
                )


def main() -> None:
    from _common import print_load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"paged only, {QUICK_REPEAT} syncs each"
    )
    args = parser.parse_args()
    print_load()
    for page in PAGES[:1] if args.quick else PAGES:
        run(page, QUICK_REPEAT if args.quick else REPEAT)
    print_load()


if __name__ == "__main__":
    main()
