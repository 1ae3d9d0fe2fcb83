"""The ``target`` fixture: every fidelity test runs against the test API server and, when
``$KGEN_TEST_KUBECONFIG`` names a kubeconfig, against that real cluster with the same
assertions. ``@pytest.mark.gap(reason)`` marks a known difference of the test server from
kube-apiserver v1.36: a strict xfail on ``server``, so closing it shows up.

``replay_target`` and ``replay_runs`` serve test_replay (the recorded transcripts replayed),
whose counts :func:`pytest_terminal_summary` prints.
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

from tests.conformance._backends import CLUSTER_ENV, cluster_session  # noqa: E402 (foo_api needs the path)
from tests.fidelity._targets import Target, open_target  # noqa: E402
from tests.fidelity.replay.runs import Runs  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gap(reason): a known difference of the test server (strict xfail there)")


@pytest.fixture(scope="session")
def cluster_kubeconfig() -> Iterator[str | None]:
    """``$KGEN_TEST_KUBECONFIG`` once its cluster serves the Foo CRD, or None."""
    kubeconfig = os.environ.get(CLUSTER_ENV)
    if not kubeconfig:
        yield None
        return
    with cluster_session(kubeconfig):
        yield kubeconfig


@pytest.fixture(params=("server", "cluster"))
def target(request: pytest.FixtureRequest, tmp_path: Path,
           cluster_kubeconfig: str | None) -> Iterator[Target]:
    """An API server with the Foo CRD served and an empty namespace of this test's own."""
    name: str = request.param
    kubeconfig = cluster_kubeconfig
    if name == "cluster" and not kubeconfig:
        pytest.skip(f"{CLUSTER_ENV} is not set")
    gap = request.node.get_closest_marker("gap")
    if gap is not None and name == "server":
        request.applymarker(pytest.mark.xfail(reason=gap.args[0], strict=True))
    with open_target(name, tmp_path, kubeconfig) as opened:
        yield opened


_RUNS = pytest.StashKey[Runs]()


@pytest.fixture(params=("server", "cluster"))
def replay_target(request: pytest.FixtureRequest) -> str:
    """Where test_replay sends the recorded requests (``cluster`` only with a kubeconfig)."""
    if request.param == "cluster" and not os.environ.get(CLUSTER_ENV):
        pytest.skip(f"{CLUSTER_ENV} is not set")
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def replay_runs(request: pytest.FixtureRequest) -> Iterator[Runs]:
    """The session's replays (each scenario once per target), kept for the summary."""
    runs = request.config.stash[_RUNS] = Runs()
    yield runs
    runs.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The replay's counts (identical / same status / total), per scenario."""
    runs = terminalreporter.config.stash.get(_RUNS, None)
    if runs is None:
        return
    terminalreporter.section("fidelity replay (../shared/fidelity/transcripts)")
    for line in runs.summary():
        terminalreporter.write_line(line)
