"""client-go's informer machinery (``tools/cache``).

Data flow: ListWatch → Reflector → RealFIFO → SharedIndexInformer (Indexer + handlers).
"""

from kgen_runtime.cache._backoff import ExponentialBackoff
from kgen_runtime.cache._fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopProcessFunc,
    RealFIFO,
    TransformFunc,
)
from kgen_runtime.cache._listwatch import (
    ListerWatcher,
    ListMetaLike,
    ListWatch,
    ObjectList,
    TweakListOptions,
)
from kgen_runtime.cache._reflector import (
    Reflector,
    ReflectorStore,
    WatchErrorHandler,
    WatchStalledError,
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
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaType",
    "ExponentialBackoff",
    "FIFOClosedError",
    "IndexFunc",
    "Indexer",
    "KeyFunc",
    "KeyFuncError",
    "KeyListerGetter",
    "ListMetaLike",
    "ListWatch",
    "ListerWatcher",
    "ObjectList",
    "PopProcessFunc",
    "RealFIFO",
    "Reflector",
    "ReflectorStore",
    "TransformFunc",
    "TweakListOptions",
    "WatchErrorHandler",
    "WatchStalledError",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]
