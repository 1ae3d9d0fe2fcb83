"""featuregate: maturity, defaults, locking, --feature-gates parsing and its errors."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from kgen_runtime.util import FeatureGate, FeatureGateError, FeatureSpec, PreRelease


@pytest.fixture
def gate() -> FeatureGate:
    return FeatureGate({
        "FastResync": FeatureSpec(default=False),
        "BetterCache": FeatureSpec(default=True, pre_release=PreRelease.BETA),
        "ServerSideApply": FeatureSpec(
            default=True, pre_release=PreRelease.GA, lock_to_default=True
        ),
        "OldPath": FeatureSpec(default=True, pre_release=PreRelease.DEPRECATED),
    })


def test_defaults(gate: FeatureGate) -> None:
    assert gate.enabled("FastResync") is False
    assert gate.enabled("BetterCache") is True
    assert gate.enabled("ServerSideApply") is True


def test_set_parses_the_flag(gate: FeatureGate) -> None:
    gate.set(" FastResync = true ,, BetterCache=F,")
    assert gate.enabled("FastResync") is True
    assert gate.enabled("BetterCache") is False
    gate.set("FastResync=0")
    assert gate.enabled("FastResync") is False
    gate.set("")
    assert gate.enabled("BetterCache") is False


def test_unknown_feature_is_named_with_a_suggestion(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError) as caught:
        gate.set("FastResinc=true")
    assert str(caught.value) == "unrecognized feature gate: FastResinc (did you mean FastResync?)"
    with pytest.raises(FeatureGateError, match=r"^unrecognized feature gate: Zzz$"):
        gate.set_from_map({"Zzz": True})


def test_locked_feature_cannot_change(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError) as caught:
        gate.set("ServerSideApply=false")
    assert str(caught.value) == (
        "cannot set feature gate ServerSideApply to false, feature is locked to true"
    )
    gate.set("ServerSideApply=true")  # setting the locked value is allowed
    assert gate.enabled("ServerSideApply") is True


def test_every_problem_is_reported_and_nothing_changes(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError) as caught:
        gate.set("FastResync=true,Nope=true,BetterCache,OldPath=maybe,ServerSideApply=false")
    assert str(caught.value) == "; ".join([
        "missing bool value for BetterCache",
        "invalid value of OldPath=maybe, want true or false",
        "unrecognized feature gate: Nope",
        "cannot set feature gate ServerSideApply to false, feature is locked to true",
    ])
    assert gate.enabled("FastResync") is False


def test_setting_ga_or_deprecated_warns(
    gate: FeatureGate, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "kgen_runtime.featuregate"):
        gate.set("OldPath=false,ServerSideApply=true,FastResync=true")
    assert [r.getMessage() for r in caplog.records] == [
        "Setting deprecated feature gate OldPath=False. It will be removed in a future release.",
        "Setting GA feature gate ServerSideApply=True. It will be removed in a future release.",
    ]


def test_all_alpha_and_all_beta_set_the_features_without_a_value(gate: FeatureGate) -> None:
    gate.add({
        "Shiny": FeatureSpec(default=False),
        "Pinned": FeatureSpec(default=False, lock_to_default=True),
        "Beta2": FeatureSpec(default=True, pre_release=PreRelease.BETA),
    })
    gate.set("Shiny=false")
    gate.set("AllAlpha=true,AllBeta=false,Beta2=true")
    assert gate.enabled("AllAlpha") is True
    assert gate.enabled("FastResync") is True  # alpha, unset: follows AllAlpha
    assert gate.enabled("Shiny") is False  # set before: keeps its value
    assert gate.enabled("Pinned") is False  # locked: untouched
    assert gate.enabled("BetterCache") is False  # beta, unset: follows AllBeta
    assert gate.enabled("Beta2") is True  # set in the same call: wins
    assert gate.enabled("ServerSideApply") is True  # GA: untouched


def test_enabled_of_an_unregistered_feature_raises(gate: FeatureGate) -> None:
    with pytest.raises(FeatureGateError, match="'Nope' is not registered"):
        gate.enabled("Nope")


def test_add_rejects_a_different_spec_for_a_known_name(gate: FeatureGate) -> None:
    gate.add({"FastResync": FeatureSpec(default=False)})  # same spec: fine
    with pytest.raises(FeatureGateError, match="'FastResync' with different spec"):
        gate.add({"FastResync": FeatureSpec(default=True), "New": FeatureSpec(default=True)})
    with pytest.raises(FeatureGateError):
        gate.enabled("New")  # nothing added
    gate.add({"New": FeatureSpec(default=True)})
    assert gate.enabled("New")


def test_known_features_lists_settable_pre_ga_ones(gate: FeatureGate) -> None:
    assert gate.known_features() == [
        "AllAlpha=true|false (ALPHA - default=false)",
        "AllBeta=true|false (BETA - default=false)",
        "BetterCache=true|false (BETA - default=true)",
        "FastResync=true|false (ALPHA - default=false)",
    ]


def test_concurrent_writers_lose_no_update() -> None:
    names = [f"Feature{i}" for i in range(8)]
    gate = FeatureGate({name: FeatureSpec(default=True) for name in names})
    errors: list[BaseException] = []

    def write(name: str) -> None:
        try:
            for i in range(300):
                gate.set_from_map({name: i % 2 == 0})  # the last write (i = 299) is False
                gate.enabled(names[0])
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=write, args=(name,)) for name in names]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the writers as much as possible
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert [gate.enabled(name) for name in names] == [False] * 8
