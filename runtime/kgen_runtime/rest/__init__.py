"""REST transport and clients (client-go's rest, dynamic and generic typed client packages).

Layers, bottom up: :class:`Config` (where and how to connect) → :class:`HTTPTransport`
(throttling, retries, streaming; any :class:`Transport` will do) → :class:`ResourceClient`
(typed verbs of one resource, subclassed by generated clients) and :class:`DynamicClient`
(any resource, unstructured) → :class:`BaseClientset` (one transport for a generated
clientset). Typed errors live in :mod:`kgen_runtime.rest.errors`.

Each piece has an asyncio twin named ``Async<Name>`` in a ``<module>_aio`` module beside it
(:class:`AsyncHTTPTransport` in ``transport_aio.py``, :class:`AsyncResourceClient` in
``client_aio.py``, ...), sharing every decision that is not I/O with the blocking one.
"""

from kgen_runtime.rest._call import Request, cancel_on, cancellation
from kgen_runtime.rest._metrics import REST_CLIENT_METRICS, RestClientMetrics
from kgen_runtime.rest._request import Response, Transport
from kgen_runtime.rest._request_aio import AsyncResponse, AsyncTransport
from kgen_runtime.rest._watch import StreamWatcher
from kgen_runtime.rest._watch_aio import AsyncStreamWatcher
from kgen_runtime.rest.client import (
    FieldValidation,
    PatchBody,
    PatchType,
    Preconditions,
    PropagationPolicy,
    ResourceClient,
    ScaleClientMixin,
    StatusClientMixin,
    watch_read_timeout,
)
from kgen_runtime.rest.client_aio import (
    AsyncResourceClient,
    AsyncScaleClientMixin,
    AsyncStatusClientMixin,
)
from kgen_runtime.rest.clientset import BaseClientset, GroupVersionClient
from kgen_runtime.rest.clientset_aio import AsyncBaseClientset, AsyncGroupVersionClient
from kgen_runtime.rest.config import AuthProvider, Config, ConfigError
from kgen_runtime.rest.dynamic import DynamicClient, DynamicResourceClient
from kgen_runtime.rest.dynamic_aio import AsyncDynamicClient, AsyncDynamicResourceClient
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.rest.scale import Scale, ScaleSpec, ScaleStatus
from kgen_runtime.rest.transport import HTTPTransport
from kgen_runtime.rest.transport_aio import AsyncHTTPTransport

__all__ = [
    "REST_CLIENT_METRICS",
    "AsyncBaseClientset",
    "AsyncDynamicClient",
    "AsyncDynamicResourceClient",
    "AsyncGroupVersionClient",
    "AsyncHTTPTransport",
    "AsyncResourceClient",
    "AsyncResponse",
    "AsyncScaleClientMixin",
    "AsyncStatusClientMixin",
    "AsyncStreamWatcher",
    "AsyncTransport",
    "AuthProvider",
    "BaseClientset",
    "Config",
    "ConfigError",
    "DynamicClient",
    "DynamicResourceClient",
    "FieldValidation",
    "GroupVersionClient",
    "HTTPTransport",
    "ListOptions",
    "PatchBody",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "Request",
    "ResourceClient",
    "Response",
    "RestClientMetrics",
    "Scale",
    "ScaleClientMixin",
    "ScaleSpec",
    "ScaleStatus",
    "StatusClientMixin",
    "StreamWatcher",
    "Transport",
    "cancel_on",
    "cancellation",
    "watch_read_timeout",
]
