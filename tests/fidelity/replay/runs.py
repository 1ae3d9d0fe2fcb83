"""The replays of one pytest session: each (target, scenario) replayed once, when its first
exchange's test asks, and the counts printed in the terminal summary."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from pathlib import Path

from kgen_runtime.rest import Config
from kgen_runtime.rest._policy import tls_context
from kgen_runtime.testing import TestAPIServer
from tests.fidelity.replay.replay import Outcome, Webhooks, replay
from tests.fidelity.replay.transcripts import SCENARIOS
from tests.fidelity.replay.webhook import serve_webhooks
from tests.fidelity.replay.wire import Endpoint

__all__ = ["Runs", "cluster_endpoint", "server_outcomes"]


def server_outcomes(scenario: str, webhooks: Webhooks | None) -> list[Outcome]:
    """``scenario`` replayed against a fresh test server set up as the recording one was: a
    bare kube-apiserver (namespace lifecycle admission, no namespace controller) with the
    default admission plugins, ServiceAccount included."""
    with TestAPIServer(namespace_lifecycle=True, namespace_controller=False,
                       disabled_admission_plugins=()) as server:
        return replay(scenario, Endpoint(server.url), webhooks)


def cluster_endpoint(kubeconfig: str) -> Endpoint:
    """The API server of ``kubeconfig``, with its TLS settings and credentials."""
    config = Config.from_kubeconfig(kubeconfig)
    context = tls_context(config) if config.host.startswith("https") else None
    headers = dict(config.auth()) if config.auth is not None else {}
    return Endpoint(config.host.rstrip("/"), context, headers)


class Runs:
    """Outcomes per (target, scenario), computed on first use; closes its webhooks."""

    def __init__(self) -> None:
        self._outcomes: dict[tuple[str, str], dict[int, Outcome]] = {}
        self._stack = ExitStack()
        self._webhooks: Webhooks | None = None

    def outcome(self, target: str, scenario: str, seq: int) -> Outcome:
        if (target, scenario) not in self._outcomes:
            outcomes = self._replay(target, scenario)
            self._outcomes[(target, scenario)] = {item.exchange.seq: item for item in outcomes}
        return self._outcomes[(target, scenario)][seq]

    def _replay(self, target: str, scenario: str) -> list[Outcome]:
        webhooks = self.webhooks() if scenario == "webhooks" else None
        if target == "server":
            return server_outcomes(scenario, webhooks)
        return replay(scenario, cluster_endpoint(os.environ["KGEN_TEST_KUBECONFIG"]), webhooks)

    def webhooks(self) -> Webhooks:
        if self._webhooks is None:
            directory = Path(self._stack.enter_context(tempfile.TemporaryDirectory()))
            self._webhooks = Webhooks(*self._stack.enter_context(serve_webhooks(directory)))
        return self._webhooks

    def close(self) -> None:
        self._stack.close()

    def summary(self) -> list[str]:
        """One line per replayed (target, scenario): identical / same status / total."""
        lines = []
        for target in ("server", "cluster"):
            totals = [0, 0, 0]
            for scenario in SCENARIOS:
                outcomes = self._outcomes.get((target, scenario))
                if outcomes is None:
                    continue
                counts = (sum(item.identical for item in outcomes.values()),
                          sum(item.same_status for item in outcomes.values()), len(outcomes))
                totals = [total + count for total, count in zip(totals, counts, strict=True)]
                lines.append(f"{target} {scenario}: {counts[0]}/{counts[2]} identical, "
                             f"{counts[1]}/{counts[2]} same status")
            if totals[2]:
                lines.append(f"{target} total: {totals[0]}/{totals[2]} identical, "
                             f"{totals[1]}/{totals[2]} same status")
        return lines
