"""The manager's informer cache, a :class:`Reader` over shared informers started on demand
(controller-runtime's ``cache`` package: ``informerCache`` + ``multiNamespaceCache``).

::

    cache = InformerCache(transport, kinds, CacheOptions(
        namespaces=["team-a", "team-b"],                       # DefaultNamespaces
        by_object={Secret: ByObject(labels={"app": "foo"})},   # ByObject
    ))
    cache.start(stop)
    cache.get(Foo, "team-a", "x")       # first read of Foo: starts its informers, waits for sync
    cache.get(Foo, "team-c", "x")       # NamespaceNotCachedError: not a watched namespace

Contract:

* **One informer per kind and namespace**: a kind is watched in every namespace of its
  ``ByObject.namespaces`` (else the cache's ``namespaces``; none means all), with its label
  and field selectors; cluster-scoped kinds are watched cluster-wide. Nothing else is ever
  listed or watched.
* **Lazy**: an informer is made the first time a kind is read or handed to a controller.
  Made before :meth:`start`, it starts with the cache; made after, it starts at once, and a
  read waits for it to sync (at most ``CacheOptions.sync_timeout``, then ``TimeoutError``).
  Reading before :meth:`start` raises :class:`CacheNotStartedError`.
* **Reads** return deep copies, sorted by namespace and name. Reading a namespace the cache
  does not watch raises :class:`NamespaceNotCachedError` (no request is made). Objects a
  selector excludes are simply absent.
* Thread-safe. :meth:`shutdown` stops every informer and joins its threads.

The informers and the reads are :class:`~.cache_reads.CacheReads`' (generated from its async
twin); this class runs them on threads: started with a ``stop`` event, waited for by blocking.
"""

from __future__ import annotations

import builtins
import threading
from typing import Any, TypeVar

from kgen_runtime.cache import (
    ListerWatcher,
    SharedIndexInformer,
    SharedInformerFactory,
    wait_for_cache_sync,
)
from kgen_runtime.controller._cluster.cache_core import CacheOptions
from kgen_runtime.controller._cluster.cache_reads import CacheReads
from kgen_runtime.controller._cluster.kinds import Kinds
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import Transport
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["InformerCache"]

T = TypeVar("T", bound=KubeObject)


class InformerCache(CacheReads):
    """Shared informers per kind and namespace behind a :class:`Reader` (module docstring).

    Implements what a :class:`~kgen_runtime.controller.Manager` runs of an informer factory
    (``start``, ``wait_for_cache_sync``, ``shutdown``).
    """

    def __init__(
        self,
        transport: Transport,
        kinds: Kinds,
        options: CacheOptions | None = None,
        *,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        super().__init__(transport, kinds, options, clock)
        self._stop: threading.Event | None = None

    def start(self, stop: threading.Event) -> None:
        """Start the informers made so far (later ones start when made); returns at once."""
        with self._lock:
            if self._shut_down:
                return
            self._stop = stop
            self._started = True
            factories = list(self._factories.values())
        for factory in factories:
            factory.start(stop)

    def wait_for_cache_sync(
        self, stop: threading.Event, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for the started informers to sync; the outcome per resource."""
        result: dict[GroupVersionResource, bool] = {}
        for factory in self._factories_now():
            for gvr, ok in factory.wait_for_cache_sync(stop, timeout).items():
                result[gvr] = result.get(gvr, True) and ok
        return result

    def shutdown(self) -> None:
        """Stop every informer and join its threads; later informers never start."""
        with self._lock:
            self._shut_down = True
            factories = list(self._factories.values())
        for factory in factories:
            factory.shutdown()

    def _start(self, factory: SharedInformerFactory) -> None:
        assert self._stop is not None  # set before the cache counts as started
        factory.start(self._stop)

    def _wrap(self, kind: type[Any], list_watch: ListerWatcher[Any]) -> ListerWatcher[Any]:
        return self.shards.wrap(kind, list_watch)

    def _wait_synced(
        self, informers: builtins.list[SharedIndexInformer[T]], resource: Resource[T]
    ) -> None:
        assert self._stop is not None
        timeout = self.options.sync_timeout
        synced = (i.has_synced for i in informers)
        if not wait_for_cache_sync(self._stop, *synced, timeout=timeout, clock=self._clock):
            raise TimeoutError(f"the cache of {resource.plural} did not sync within {timeout}s")
