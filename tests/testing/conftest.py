"""Fixtures: the plugin's ``api_server``, a raw HTTP client for it, the Foo CRD installed
(on the server, or on either the server or a fake clientset), and a webhook server with its
certificates (``server``, ``certs``) and recording webhooks on it (``recorder``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import orjson
import pytest

from kgen_runtime.testing import APIServerCore, FakeClientsetBase, TestAPIServer
from kgen_runtime.testing.pytest_plugin import api_server
from tests._webhooks import certs, module_certs, recorder, registry, server
from tests.testing._support import FOO_CRD, Api, FakeApi

__all__ = [
    "FooFake",
    "Served",
    "api",
    "api_server",
    "certs",
    "crd_api",
    "module_certs",
    "recorder",
    "registry",
    "served",
    "server",
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


class FooFake(FakeClientsetBase):
    """A fake clientset serving the Foo CRD."""

    crds = (orjson.dumps(FOO_CRD).decode(),)


@dataclass(frozen=True)
class Served:
    """Raw calls to a core with the Foo CRD installed, and that core."""

    api: Api
    core: APIServerCore


@pytest.fixture(params=["server", "fake"])
def served(request: pytest.FixtureRequest) -> Served:
    """The Foo CRD installed, over HTTP on the test server or in process through a fake
    clientset: the two run the same core, admission chain included."""
    if request.param == "server":
        server: TestAPIServer = request.getfixturevalue("api_server")
        return Served(request.getfixturevalue("crd_api"), server.core)
    fake = FooFake()
    return Served(FakeApi(fake), fake.core)
