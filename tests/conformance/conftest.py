"""The ``backend`` fixture: every conformance test runs once per backend.

``fake`` and ``server`` always run, each also with the async clients (``fake-async``,
``server-async``: the same assertions); ``cluster`` (and ``cluster-async``) runs when
``$KGEN_TEST_KUBECONFIG`` names a kubeconfig (otherwise it is skipped).
``@pytest.mark.gap(("fake", "server"), reason)`` marks a test a backend (sync and async
alike) knowingly fails: it runs there as a strict xfail, so closing the gap shows up.

Against a cluster: ``KGEN_TEST_KUBECONFIG=~/.kube/config .venv/bin/pytest tests/conformance``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_EXAMPLE = str(Path(__file__).parents[2] / "examples" / "foo-crd")
if _EXAMPLE not in sys.path:
    sys.path.insert(0, _EXAMPLE)

from tests._webhooks import certs, module_certs, registry, server  # noqa: E402
from tests.conformance._backends import (  # noqa: E402 (foo_api needs the path above)
    ASYNC,
    BACKENDS,
    CLUSTER_ENV,
    Backend,
    cluster_session,
    open_backend,
)

__all__ = ["backend", "certs", "cluster", "module_certs", "registry", "server"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gap(backends, reason): a known shortfall of these backends (strict xfail)"
    )


@pytest.fixture(scope="session")
def cluster() -> Iterator[Backend | None]:
    """The real cluster's backend for the whole session, or ``None`` without one."""
    kubeconfig = os.environ.get(CLUSTER_ENV)
    if not kubeconfig:
        yield None
        return
    with cluster_session(kubeconfig) as backend:
        yield backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, cluster: Backend | None) -> Iterator[Backend]:
    """A backend with the Foo CRD served and an empty namespace of its own."""
    name: str = request.param
    base = name.removesuffix(ASYNC)
    if base == "cluster" and cluster is None:
        pytest.skip(f"{CLUSTER_ENV} is not set")
    gap = request.node.get_closest_marker("gap")
    if gap is not None and base in gap.args[0]:
        request.applymarker(pytest.mark.xfail(reason=gap.args[1], strict=True))
    with open_backend(name, cluster) as opened:
        yield opened
