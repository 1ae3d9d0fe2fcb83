"""client-go's informer machinery (``tools/cache``).

Data flow: ListWatch → Reflector → RealFIFO → SharedIndexInformer (Indexer + handlers).
"""

from kgen_runtime.cache._fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    KeyListerGetter,
    PopProcessFunc,
    RealFIFO,
    TransformFunc,
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
    "FIFOClosedError",
    "IndexFunc",
    "Indexer",
    "KeyFunc",
    "KeyFuncError",
    "KeyListerGetter",
    "PopProcessFunc",
    "RealFIFO",
    "TransformFunc",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "split_meta_namespace_key",
]
