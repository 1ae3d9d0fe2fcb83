"""The runtime half of generated conversion scaffolding: copy plans over wire objects,
stashing into and out of the conversion annotation, and the build-time refusals."""

from __future__ import annotations

from typing import Any

import pytest

from kgen_runtime.meta import KubeObject, ObjectMeta
from kgen_runtime.webhook import EACH, SpokeScaffold, format_path, stash_fields
from kgen_runtime.webhook._conversion import take_stashed

KEY = "conversion.kgen.io/thing-fields"


class Hub(KubeObject):
    api_version: str = "example.com/v1"
    kind: str = "Thing"
    spec: dict[str, Any] | None = None


class Other(KubeObject):
    api_version: str = "example.com/v2"
    kind: str = "Thing"
    spec: dict[str, Any] | None = None


def test_paths_read_as_in_messages() -> None:
    assert format_path(("spec", "ports", EACH, "port")) == "spec.ports[*].port"
    assert format_path(("spec", "grid", EACH, EACH)) == "spec.grid[*][*]"
    assert repr(EACH) == "EACH"


def test_the_plan_copies_only_what_it_names_through_lists_of_lists_and_maps() -> None:
    scaffold = SpokeScaffold(kind="Thing", automatic=(
        ("spec", "grid", EACH, EACH, "x"),
        ("spec", "byName", EACH, "v"),
        ("spec", "whole"),
        ("spec", "whole", "inside"),  # inside a path copied whole already: no narrowing
        ("spec", "nulls"),
    ))
    spoke = scaffold.spoke(Other, Hub, to_hub=None, from_hub=None)
    hub = spoke.to_hub(Other.model_validate({
        "metadata": {"name": "t", "labels": {"a": "b"}},
        "spec": {"grid": [[{"x": 1, "y": 2}], [], None], "byName": {"k": {"v": 1, "w": 2}},
                 "whole": {"inside": 1, "other": 2}, "nulls": None, "dropped": 3}}))
    assert hub.model_dump(mode="json") == {
        "apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "labels": {"a": "b"}},
        "spec": {"grid": [[{"x": 1}], [], None], "byName": {"k": {"v": 1}},
                 "whole": {"inside": 1, "other": 2}, "nulls": None}}


def test_stashing_adds_to_what_the_annotation_keeps_and_taking_leaves_the_rest() -> None:
    thing = Hub(metadata=ObjectMeta(name="t", annotations={KEY: '{"a":1}', "team": "x"}))
    stash_fields(thing, "Thing", {"b": [2], "c": None})
    assert thing.metadata is not None and thing.metadata.annotations == {
        KEY: '{"a":1,"b":[2]}', "team": "x"}
    wire = thing.model_dump(mode="json")
    assert take_stashed(wire, "Thing", ["b", "missing"]) == {"b": [2]}
    assert wire["metadata"]["annotations"] == {KEY: '{"a":1}', "team": "x"}
    assert take_stashed(wire, "Thing", ["a"]) == {"a": 1}
    assert wire["metadata"]["annotations"] == {"team": "x"}
    alone = {"metadata": {"name": "t", "annotations": {KEY: '{"a":1}'}}}
    assert take_stashed(alone, "Thing", ["a"]) == {"a": 1}
    assert alone == {"metadata": {"name": "t"}}
    assert take_stashed({"metadata": {}}, "Thing", ["a"]) == {}


def test_stashed_hub_only_paths_survive_a_round_trip_and_make_missing_parents() -> None:
    scaffold = SpokeScaffold(kind="Thing", automatic=(("spec", "size"),),
                             hub_only=(("spec", "deep", "gone"), ("spec", "items", EACH, "x")))
    with pytest.raises(TypeError, match=r"spec\.items\[\*\]\.x \(only in v1\)"):
        scaffold.spoke(Other, Hub, to_hub=None, from_hub=None, stash=["spec.deep.gone"])
    spoke = scaffold.spoke(Other, Hub, to_hub=lambda s, h: None, from_hub=lambda h, s: None,
                           stash=["spec.deep.gone"])
    there = spoke.from_hub(Hub.model_validate(
        {"metadata": {"name": "t"}, "spec": {"size": 1, "deep": {"gone": {"v": [1]}}}}))
    assert there.model_dump(mode="json")["metadata"] == {
        "name": "t", "annotations": {KEY: '{"spec.deep.gone":{"v":[1]}}'}}
    there.spec = None  # a spoke without a spec still gives the stashed field back
    assert spoke.to_hub(there).model_dump(mode="json") == {
        "apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
        "spec": {"deep": {"gone": {"v": [1]}}}}
