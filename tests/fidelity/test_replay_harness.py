"""The replay harness itself: its webhook stand-ins answer what the recorded webhooks
answered, and its normalisation keeps volatile values a bijection."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.fidelity.replay.normalise import normalise
from tests.fidelity.replay.transcripts import TRANSCRIPTS
from tests.fidelity.replay.volatile import Volatiles, walk_pairs
from tests.fidelity.replay.webhook import answer
from tests.shared import requires_shared

CALLS = TRANSCRIPTS / "webhooks.calls.jsonl"


def _comparable(review: dict[str, Any]) -> dict[str, Any]:
    response = dict(review["response"])
    if "patch" in response:
        response["patch"] = json.loads(base64.b64decode(response["patch"]))
    return {**review, "response": response}


@requires_shared(CALLS)
def test_the_webhook_stand_ins_answer_every_recorded_call_as_recorded() -> None:
    calls = [json.loads(line) for line in CALLS.read_text().splitlines()]
    assert len(calls) > 60
    for call in calls:
        assert _comparable(answer(call["path"], call["review"])) == _comparable(call["answer"])


def _pair(volatiles: Volatiles, recorded: Any, replayed: Any) -> tuple[Any, Any]:
    for kind, left, right in walk_pairs(recorded, replayed):
        volatiles.pair(kind, left, right)
    return (normalise(recorded, volatiles, replayed=False),
            normalise(replayed, volatiles, replayed=True))


def _object(uid: str, version: str) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": "a", "uid": uid, "resourceVersion": version,
                                              "creationTimestamp": "2026-11-28T02:01:52Z"}}


def test_volatile_values_compare_by_their_pairing() -> None:
    volatiles = Volatiles()
    recorded, replayed = _pair(volatiles, _object("u-1", "5477"), _object("x-9", "3"))
    assert recorded == replayed
    assert volatiles.replayed_value("5477") == "3"  # later requests are rewritten


@pytest.mark.parametrize(("recorded_version", "replayed_version", "same"), [
    ("5477", "3", True),   # unchanged on both sides
    ("5478", "4", True),   # both moved
    ("5477", "4", False),  # the replay moved, the recording kept it (a no-op update)
    ("5478", "3", False),  # the recording moved, the replay kept it
])
def test_a_resource_version_change_must_happen_on_both_sides(
        recorded_version: str, replayed_version: str, same: bool) -> None:
    volatiles = Volatiles()
    _pair(volatiles, _object("u-1", "5477"), _object("x-9", "3"))
    recorded, replayed = _pair(volatiles, _object("u-1", recorded_version),
                               _object("x-9", replayed_version))
    assert (recorded == replayed) is same


def test_times_compare_by_format_only() -> None:
    volatiles = Volatiles()
    seconds = _object("u", "1")
    micro = {**seconds, "metadata": {**seconds["metadata"],
                                     "creationTimestamp": "2026-11-28T02:01:52.123456Z"}}
    later = {**seconds, "metadata": {**seconds["metadata"],
                                     "creationTimestamp": "2030-01-01T00:00:00Z"}}
    recorded, replayed = _pair(volatiles, seconds, later)
    assert recorded == replayed
    recorded, replayed = _pair(Volatiles(), seconds, micro)
    assert recorded != replayed
