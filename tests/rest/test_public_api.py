"""The public surface of kgen_runtime.rest, pinned."""

from __future__ import annotations

import pytest

import kgen_runtime.rest as rest
from kgen_runtime.rest import BaseClientset, Config, HTTPTransport, Request
from tests.rest.conftest import StubServer


def test_public_names() -> None:
    assert sorted(rest.__all__) == [
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
        "REST_CLIENT_METRICS",
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
    for name in rest.__all__:
        assert getattr(rest, name) is not None


def test_for_config_owns_and_closes_its_transport(server: StubServer) -> None:
    with BaseClientset.for_config(Config(host=server.url)) as clientset:
        assert isinstance(clientset.transport, HTTPTransport)
        assert clientset.transport.send(Request("GET", "/x")).status == 200
    with pytest.raises(ConnectionError, match="closed"):
        clientset.transport.send(Request("GET", "/x"))
