"""The public surface of kgen_runtime.cache, labels and fields is pinned here."""

from __future__ import annotations

from kgen_runtime import cache, fields, labels

CACHE_API = {
    "AsyncGenericInformer",
    "AsyncListWatch",
    "AsyncResourceEventHandler",
    "AsyncResourceInformer",
    "AsyncResourceEventHandlerFuncs",
    "AsyncSharedIndexInformer",
    "AsyncSharedInformerFactory",
    "AsyncListerWatcher",
    "AsyncReflector",
    "AsyncWatcher",
    "MINIMUM_RESYNC_PERIOD",
    "NAMESPACE_INDEX",
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
    "ReplacedAllInfo",
    "REFLECTOR_METRICS",
    "Reflector",
    "ReflectorMetrics",
    "ReflectorOptions",
    "ReflectorStore",
    "RelistRequiredError",
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
}


def test_cache_public_names() -> None:
    assert set(cache.__all__) == CACHE_API
    for name in cache.__all__:
        assert getattr(cache, name) is not None


def test_selector_modules_public_names() -> None:
    assert set(labels.__all__) == {
        "Operator",
        "Requirement",
        "Selector",
        "SelectorError",
        "as_selector",
        "everything",
        "label_selector_as_selector",
        "nothing",
        "parse",
        "selector_from_label_selector",
        "selector_from_set",
        "validate_label_key",
        "validate_label_value",
    }
    assert set(fields.__all__) == {
        "FieldSelectorError",
        "Selector",
        "Term",
        "escape_value",
        "everything",
        "object_fields",
        "one_term_equal_selector",
        "parse",
        "selector_from_set",
    }
