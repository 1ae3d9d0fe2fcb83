"""pytest fixtures for tests against the in-process API server.

Enable in the root ``conftest.py``::

    pytest_plugins = ["kgen_runtime.testing.pytest_plugin"]

then ask for ``api_server``::

    def test_create(api_server: TestAPIServer) -> None:
        api_server.install_crd(FOO_CRD)
        clientset = Clientset.for_config(api_server.config())
        ...

Each test gets its own started server (fresh store, no faults), stopped after the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgen_runtime.testing._server import TestAPIServer

__all__ = ["api_server"]


@pytest.fixture
def api_server() -> Iterator[TestAPIServer]:
    """A started :class:`TestAPIServer`, stopped when the test ends."""
    with TestAPIServer() as server:
        yield server
