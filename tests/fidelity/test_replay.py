"""The differential fidelity test: every recorded kube-apiserver exchange replayed.

Each exchange of ../shared/fidelity/transcripts is its own test (``scenario:seq:step``):
its scenario is replayed once, request by request, against a fresh test server (and against
the cluster of ``$KGEN_TEST_KUBECONFIG`` when set), and each answer must match the recorded
one after the README's normalisation: status code, media type, Warning values and body (or
watch events). The known differences are named in replay/known_gaps.toml and run as strict
xfails on the test server, so one that gets fixed fails until its line is removed. The
counts are printed in pytest's terminal summary.
"""

from __future__ import annotations

import re

import pytest

from tests.fidelity.replay.gaps import known_gaps
from tests.fidelity.replay.runs import Runs
from tests.fidelity.replay.transcripts import SCENARIOS, TRANSCRIPTS, Exchange, load
from tests.shared import requires_shared

pytestmark = requires_shared(TRANSCRIPTS)


def _id(exchange: Exchange) -> str:
    step = re.sub(r"[^a-z0-9]+", "-", exchange.step.lower()).strip("-")[:48].rstrip("-")
    return f"{exchange.key}:{step}"


EXCHANGES = [exchange for scenario in SCENARIOS if TRANSCRIPTS.exists()
             for exchange in load(scenario)]


@pytest.mark.parametrize("exchange", EXCHANGES, ids=_id)
def test_exchange_matches_the_recording(replay_target: str, replay_runs: Runs,
                                        exchange: Exchange, request: pytest.FixtureRequest,
                                        ) -> None:
    reason = known_gaps().get(exchange.key)
    if reason is not None and replay_target == "server":
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    outcome = replay_runs.outcome(replay_target, exchange.scenario, exchange.seq)
    if not outcome.identical:
        pytest.fail("\n".join([f"{exchange.request['method']} {exchange.request['path']} "
                               f"({exchange.step})", *outcome.differences]), pytrace=False)


def test_known_gaps_name_recorded_exchanges() -> None:
    """Every line of known_gaps.toml names an exchange of the transcripts."""
    keys = {exchange.key for exchange in EXCHANGES}
    assert sorted(set(known_gaps()) - keys) == []
