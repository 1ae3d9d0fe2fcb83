"""One informer per resource per process: client-go's ``SharedInformerFactory``.

Generated packages subclass :class:`SharedInformerFactory` only to add typed accessors
(``factory.samplecontroller.v1alpha1.foos``); each accessor is a :class:`ResourceInformer`
subclass naming its resource and lister::

    class FooInformer(ResourceInformer[Foo, FooLister]):
        resource = FOO_RESOURCE
        lister_class = FooLister

Contract:

* ``informer_for`` returns the same informer for the same resource (and object class) every
  time, so every controller of the process shares one watch and one cache.
* Options apply to every informer the factory makes: ``namespace`` (``None``: all),
  ``tweak_list_options`` (e.g. a label selector), the default ``resync_period`` and
  ``transform``; ``resync_periods``/``transforms`` override them per resource.
* ``start(stop)`` is non-blocking and idempotent: it starts, each in its own thread, the
  informers not started yet; informers requested later need another ``start``.
* ``wait_for_cache_sync`` blocks until the started informers synced (or stop / timeout).
* ``shutdown()`` sets every stop event given to ``start`` (stopping all informers), joins all
  their threads, and makes later ``start`` calls do nothing.

All methods are thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from kgen_runtime.cache._fifo import TransformFunc
from kgen_runtime.cache._informer import SharedIndexInformer
from kgen_runtime.cache._lister import GenericLister
from kgen_runtime.cache._listwatch import ListerWatcher, ListWatch, TweakListOptions
from kgen_runtime.cache._reflector import ReflectorOptions
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeObject, Unstructured
from kgen_runtime.resource import Resource
from kgen_runtime.rest._request import Transport
from kgen_runtime.rest.client import ResourceClient
from kgen_runtime.rest.dynamic import DynamicClient
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = [
    "GenericInformer",
    "InformerSynced",
    "ResourceInformer",
    "SharedInformerFactory",
    "wait_for_cache_sync",
]

T = TypeVar("T")
L = TypeVar("L")
ObjT = TypeVar("ObjT", bound=KubeObject)

InformerSynced = Callable[[], bool]
"""A ``has_synced`` function (of an informer or a handler registration)."""

_SYNC_POLL_SECONDS = 0.01
"""How often :func:`wait_for_cache_sync` checks; informers offer no sync notification."""


def wait_for_cache_sync(
    stop: threading.Event,
    *synced: InformerSynced,
    timeout: float | None = None,
    clock: Clock = REAL_CLOCK,
) -> bool:
    """Block until every ``synced()`` is true; False if ``stop`` is set or ``timeout`` passes.

    client-go's ``cache.WaitForCacheSync``. Checks every 10 ms of ``clock`` time.
    """
    deadline = None if timeout is None else clock.now() + timeout
    while True:
        if all(fn() for fn in synced):
            return True
        if stop.is_set():
            return False
        if deadline is not None and clock.now() >= deadline:
            return False
        if clock.sleep(stop, _SYNC_POLL_SECONDS):
            return all(fn() for fn in synced)


_Key = tuple[GroupVersionResource, type]


class SharedInformerFactory:
    """Makes and runs shared informers over one transport (see the module docstring).

    ``reflector_options`` apply to every informer's reflector (see :class:`ReflectorOptions`);
    ``wrap_list_watch`` wraps every informer's list-watch (e.g. in a
    :class:`~kgen_runtime.sharding.ShardedListWatch`).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        resync_period: float = 0.0,
        namespace: str | None = None,
        tweak_list_options: TweakListOptions | None = None,
        transform: TransformFunc | None = None,
        resync_periods: Mapping[GroupVersionResource, float] | None = None,
        transforms: Mapping[GroupVersionResource, TransformFunc] | None = None,
        clock: Clock = REAL_CLOCK,
        reflector_options: ReflectorOptions | None = None,
        wrap_list_watch: Callable[[ListerWatcher[Any]], ListerWatcher[Any]] | None = None,
    ) -> None:
        self.transport = transport
        self.namespace = namespace or None
        self._resync_period = resync_period
        self._tweak = tweak_list_options
        self._transform = transform
        self._resync_periods = dict(resync_periods or {})
        self._transforms = dict(transforms or {})
        self._clock = clock
        self._reflector_options = reflector_options
        self._wrap = wrap_list_watch
        self._lock = threading.Lock()
        self._informers: dict[_Key, SharedIndexInformer[Any]] = {}
        self._threads: dict[_Key, threading.Thread] = {}
        self._stops: list[threading.Event] = []
        self._shutting_down = False

    # --- making informers ------------------------------------------------------------------

    def informer_for(self, resource: Resource[ObjT]) -> SharedIndexInformer[ObjT]:
        """The factory's informer for a typed resource, made on first request."""
        client: ResourceClient[ObjT, Any] = ResourceClient(self.transport, resource, self.namespace)
        return self._informer((resource.gvr, resource.model), client)

    def for_resource(self, gvr: GroupVersionResource) -> GenericInformer[Unstructured]:
        """An informer and lister for any resource, through the dynamic client.

        Objects are :class:`~kgen_runtime.meta.Unstructured`.
        """
        dynamic = DynamicClient(self.transport).resource(gvr)
        client = dynamic.namespace(self.namespace) if self.namespace else dynamic
        informer: SharedIndexInformer[Unstructured] = self._informer((gvr, Unstructured), client)
        return GenericInformer(informer, GenericLister(informer.indexer, gvr))

    def _informer(self, key: _Key, client: Any) -> SharedIndexInformer[Any]:
        with self._lock:
            informer = self._informers.get(key)
            if informer is not None:
                return informer
            gvr = key[0]
            list_watch: ListerWatcher[Any] = ListWatch.from_client(client, tweak=self._tweak)
            if self._wrap is not None:
                list_watch = self._wrap(list_watch)
            informer = SharedIndexInformer(
                list_watch,
                resync_period=self._resync_periods.get(gvr, self._resync_period),
                name=f"{gvr.resource}.{gvr.group}" if gvr.group else gvr.resource,
                clock=self._clock,
                reflector_options=self._reflector_options,
            )
            transform = self._transforms.get(gvr, self._transform)
            if transform is not None:
                informer.set_transform(transform)
            self._informers[key] = informer
            return informer

    # --- running ---------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start every informer not started yet, each in its own thread; returns at once."""
        with self._lock:
            if self._shutting_down:
                return
            if stop not in self._stops:
                self._stops.append(stop)
            for key, informer in self._informers.items():
                if key in self._threads:
                    continue
                thread = threading.Thread(
                    target=informer.run,
                    args=(stop,),
                    name=f"informer-{informer.name}",
                    daemon=True,
                )
                thread.start()
                self._threads[key] = thread

    def wait_for_cache_sync(
        self, stop: threading.Event, timeout: float | None = None
    ) -> dict[GroupVersionResource, bool]:
        """Wait for the started informers to sync; return the outcome per resource.

        A resource with both a typed and a dynamic informer counts as synced when both are.
        ``timeout`` bounds the wait of each informer.
        """
        with self._lock:
            started = [(k, self._informers[k]) for k in self._threads]
        result: dict[GroupVersionResource, bool] = {}
        for (gvr, _), informer in started:
            ok = wait_for_cache_sync(stop, informer.has_synced, timeout=timeout, clock=self._clock)
            result[gvr] = result.get(gvr, True) and ok
        return result

    def shutdown(self) -> None:
        """Stop every informer (sets the stop events given to ``start``) and join them all."""
        with self._lock:
            self._shutting_down = True
            stops = list(self._stops)
            threads = list(self._threads.values())
        for stop in stops:
            stop.set()
        for thread in threads:
            thread.join()


@dataclass(frozen=True, slots=True)
class GenericInformer(Generic[T]):
    """An informer with a generic lister (client-go's ``GenericInformer``)."""

    informer: SharedIndexInformer[T]
    lister: GenericLister[T]


class ResourceInformer(Generic[T, L]):
    """Base of generated per-kind informers: ``.informer`` and ``.lister`` from a factory.

    Subclasses set ``resource`` and ``lister_class``; the informer is the factory's shared one.
    """

    resource: ClassVar[Resource[Any]]
    lister_class: ClassVar[Callable[..., Any]]

    def __init__(self, factory: SharedInformerFactory) -> None:
        self._factory = factory

    @property
    def informer(self) -> SharedIndexInformer[T]:
        """The shared informer (registered with the factory on first access)."""
        return cast(SharedIndexInformer[T], self._factory.informer_for(self.resource))

    @property
    def lister(self) -> L:
        """A lister over the shared informer's cache."""
        return cast(L, self.lister_class(self.informer.indexer))
