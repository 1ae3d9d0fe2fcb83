"""client-go's informer machinery (``tools/cache``).

Data flow: ListWatch → Reflector → RealFIFO → SharedIndexInformer (Indexer + handlers).
"""

from kgen_runtime.cache._backoff import ExponentialBackoff
from kgen_runtime.cache._factory import (
    GenericInformer,
    InformerSynced,
    ResourceInformer,
    SharedInformerFactory,
    wait_for_cache_sync,
)
from kgen_runtime.cache._fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopProcessFunc,
    RealFIFO,
    TransformFunc,
)
from kgen_runtime.cache._informer import (
    MINIMUM_RESYNC_PERIOD,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
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
    "ClusterLister",
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
    "PopProcessFunc",
    "RealFIFO",
    "Reflector",
    "ReflectorOptions",
    "ReflectorStore",
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
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
]
