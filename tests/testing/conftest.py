"""Fixtures: the plugin's ``api_server``, a raw HTTP client for it, the Foo CRD installed,
and a webhook server with its certificates (``server``, ``certs``)."""

from __future__ import annotations

import copy

import pytest

from kgen_runtime.testing import TestAPIServer
from kgen_runtime.testing.pytest_plugin import api_server
from tests._webhooks import certs, module_certs, registry, server
from tests.testing._support import FOO_CRD, Api

__all__ = [
    "api", "api_server", "certs", "crd_api", "module_certs", "registry", "server",
]


@pytest.fixture
def api(api_server: TestAPIServer) -> Api:
    return Api(api_server)


@pytest.fixture
def crd_api(api_server: TestAPIServer, api: Api) -> Api:
    """``api`` with the Foo CRD installed."""
    status, _ = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                         copy.deepcopy(FOO_CRD))
    assert status == 201
    return api
