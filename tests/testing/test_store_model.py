"""Property: any sequence of writes is reflected consistently by lists, past reads and watches.

Hypothesis drives creates, updates, label changes, finalizer deletes and plain deletes
against the core; a plain dict model tracks what should exist after each write. Then:
an ``Exact`` list at every recorded version equals the model's snapshot at that version, and
replaying a watch from the first version rebuilds the final state, one event per write.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore

CMS = "/api/v1/namespaces/default/configmaps"
NAMES = st.sampled_from(["a", "b", "c"])
OPERATIONS = st.lists(st.tuples(st.sampled_from(["create", "update", "label", "delete",
                                                 "hold", "release"]), NAMES,
                                st.integers(0, 3)), max_size=25)


def call(core: APIServerCore, method: str, path: str, body: Any = None,
         content_type: str = "application/json", **query: str) -> tuple[int, Any]:
    response = core.handle(Request(method, path, tuple(query.items()),
                                   None if body is None else orjson.dumps(body), content_type))
    return response.status, orjson.loads(response.read())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_lists_past_reads_and_watches_agree(operations: list[tuple[str, str, int]]) -> None:
    core = APIServerCore()
    start = call(core, "POST", CMS, {"metadata": {"name": "start"}})[1]  # rv 1, watched after
    model: dict[str, dict[str, Any]] = {"start": start}
    snapshots: dict[str, dict[str, dict[str, Any]]] = {}
    merge = "application/merge-patch+json"
    for verb, name, value in operations:
        path = f"{CMS}/{name}"
        if verb == "create":
            status, obj = call(core, "POST", CMS, {"metadata": {"name": name},
                                                   "data": {"v": str(value)}})
        elif verb == "update":
            status, obj = call(core, "PATCH", path, {"data": {"v": str(value)}}, merge)
        elif verb == "label":
            status, obj = call(core, "PATCH", path, {"metadata": {"labels": {"l": str(value)}}},
                               merge)
        elif verb == "hold":
            status, obj = call(core, "PATCH", path, {"metadata": {"finalizers": ["x/hold"]}},
                               merge)
        elif verb == "release":
            status, obj = call(core, "PATCH", path, {"metadata": {"finalizers": None}}, merge)
        else:
            status, obj = call(core, "DELETE", path)
        if status >= 300:
            assert status in (404, 409, 422)
            continue
        if obj.get("kind") == "Status" or (verb in ("delete", "release") and obj["metadata"].get(
                "deletionTimestamp") and not obj["metadata"].get("finalizers")):
            model.pop(name, None)  # gone for good
        else:
            model[name] = obj
        version = str(call(core, "GET", CMS)[1]["metadata"]["resourceVersion"])
        snapshots[version] = {n: o for n, o in model.items()}
    listed = call(core, "GET", CMS)[1]
    assert {o["metadata"]["name"]: o for o in listed["items"]} == untyped(model)
    for version, expected in snapshots.items():
        status, past = call(core, "GET", CMS, resourceVersion=version,
                            resourceVersionMatch="Exact")
        assert status == 200
        assert {o["metadata"]["name"]: o for o in past["items"]} == untyped(expected)
    final = int(listed["metadata"]["resourceVersion"])
    watch = core.handle(Request("GET", CMS, (("watch", "true"), ("resourceVersion", "1"))),
                        read_timeout=5)
    rebuilt = {"start": start}
    lines = watch.iter_lines()
    seen = 1
    while seen < final:  # every write after version 1 is one event, in order
        event = orjson.loads(next(lines))
        obj = event["object"]
        seen += 1
        assert int(obj["metadata"]["resourceVersion"]) == seen
        if event["type"] == "DELETED":
            del rebuilt[obj["metadata"]["name"]]
        else:
            rebuilt[obj["metadata"]["name"]] = obj
    watch.close()
    assert rebuilt == model


def untyped(objects: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``objects`` as a built-in list's items show them: without kind and apiVersion."""
    return {name: {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            for name, obj in objects.items()}
