"""client-go's informer machinery (``tools/cache``): a local, indexed cache of one resource
kept current by list+watch, with event handlers.

Data flow::

    ListWatch ─► Reflector ─► RealFIFO ─► SharedIndexInformer ─► Indexer (listers read it)
                                                            └─► one thread per handler

Typical use, through a generated package's factory (or this base class directly)::

    factory = SharedInformerFactory(clientset.transport, resync_period=0)
    foos = factory.informer_for(FOO_RESOURCE)
    foos.add_event_handler(on_add=enqueue, on_update=lambda old, new: enqueue(new),
                           on_delete=enqueue)
    stop = threading.Event()
    factory.start(stop)                       # non-blocking
    factory.wait_for_cache_sync(stop, timeout=60)
    lister = NamespacedLister(foos.indexer, FOO_RESOURCE.gvr)
    lister.namespaced("default").get("example")   # read-only: deepcopy() before changing
    ...
    factory.shutdown()                        # sets stop, joins every thread

Memory: a transform runs on every object before it is cached. ``drop_managed_fields`` forgets
``metadata.managedFields``; ``compact`` interns repeated strings and shares what equal
objects repeat, without changing any value (about a third of a typed object's footprint;
numbers in bench/README.md). Without either, objects from watch events already share equal
``fieldsV1`` trees (fewer objects for the collector to walk)::

    factory = SharedInformerFactory(transport, transform=compact)

Each piece has an asyncio twin beside it (``_<module>_aio.py``): :class:`AsyncReflector`
(a task over :class:`AsyncListWatch`; every non-I/O decision shared through
``_reflector_state.py``), :class:`AsyncSharedIndexInformer` (the same FIFO, indexer,
processor and delta application; handlers plain or ``async def``) and
:class:`AsyncSharedInformerFactory` (``start()``, ``await wait_for_cache_sync()``).

Each module states its own contract; the informer's (ordering, tombstones, resync, sharing)
is in :class:`SharedIndexInformer`.
"""

from kgen_runtime.cache._backoff import ExponentialBackoff
from kgen_runtime.cache._compact import Compactor, compact
from kgen_runtime.cache._factory import (
    GenericInformer,
    InformerSynced,
    ResourceInformer,
    SharedInformerFactory,
    wait_for_cache_sync,
)
from kgen_runtime.cache._factory_aio import (
    AsyncGenericInformer,
    AsyncResourceInformer,
    AsyncSharedInformerFactory,
)
from kgen_runtime.cache._fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopBatchProcessFunc,
    PopProcessFunc,
    RealFIFO,
    ReplacedAllInfo,
    TransformFunc,
    drop_managed_fields,
)
from kgen_runtime.cache._informer import (
    MINIMUM_RESYNC_PERIOD,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from kgen_runtime.cache._informer_aio import (
    AsyncResourceEventHandler,
    AsyncResourceEventHandlerFuncs,
    AsyncSharedIndexInformer,
)
from kgen_runtime.cache._lister import (
    ClusterLister,
    GenericLister,
    NamespacedLister,
    NamespaceLister,
    SelectorLike,
)
from kgen_runtime.cache._listwatch import (
    ListerWatcher,
    ListMetaLike,
    ListWatch,
    ObjectList,
    TweakListOptions,
)
from kgen_runtime.cache._metrics import REFLECTOR_METRICS, ReflectorMetrics
from kgen_runtime.cache._processor import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from kgen_runtime.cache._reflector import (
    Reflector,
    ReflectorOptions,
    ReflectorStore,
    WatchErrorHandler,
)
from kgen_runtime.cache._reflector_aio import (
    AsyncListerWatcher,
    AsyncListWatch,
    AsyncReflector,
    AsyncWatcher,
)
from kgen_runtime.cache._reflector_state import RelistRequiredError
from kgen_runtime.cache._store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    KeyFunc,
    KeyFuncError,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)

__all__ = [
    "MINIMUM_RESYNC_PERIOD",
    "NAMESPACE_INDEX",
    "REFLECTOR_METRICS",
    "AsyncGenericInformer",
    "AsyncListWatch",
    "AsyncListerWatcher",
    "AsyncReflector",
    "AsyncResourceEventHandler",
    "AsyncResourceEventHandlerFuncs",
    "AsyncResourceInformer",
    "AsyncSharedIndexInformer",
    "AsyncSharedInformerFactory",
    "AsyncWatcher",
    "ClusterLister",
    "Compactor",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaType",
    "ExponentialBackoff",
    "FIFOClosedError",
    "FilteringResourceEventHandler",
    "GenericInformer",
    "GenericLister",
    "IndexFunc",
    "Indexer",
    "InformerSynced",
    "KeyFunc",
    "KeyFuncError",
    "KeyListerGetter",
    "ListMetaLike",
    "ListWatch",
    "ListerWatcher",
    "NamespaceLister",
    "NamespacedLister",
    "ObjectList",
    "PopBatchProcessFunc",
    "PopProcessFunc",
    "RealFIFO",
    "Reflector",
    "ReflectorMetrics",
    "ReflectorOptions",
    "ReflectorStore",
    "RelistRequiredError",
    "ReplacedAllInfo",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "ResourceInformer",
    "SelectorLike",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "TransformFunc",
    "TweakListOptions",
    "WatchErrorHandler",
    "compact",
    "drop_managed_fields",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
]
