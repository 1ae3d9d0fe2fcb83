"""Lists (selectors, paging, resourceVersion semantics) and watches over raw HTTP."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from kgen_runtime.rest import Request
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.testing.apiserver.storage._continue import decode_continue, encode_continue
from tests.testing._support import FOO_CRD, FOOS, Api, foo, take

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


def make(api: Api, name: str, **labels: str) -> dict[str, Any]:
    body = foo(name)
    body["metadata"]["labels"] = labels
    status, created = api.post(FOOS, body)
    assert status == 201
    result: dict[str, Any] = created
    return result


@pytest.mark.parametrize(("selector", "expected"), [
    ("tier=web", ["a", "c"]),
    ("tier==web", ["a", "c"]),
    ("tier!=web", ["b", "d"]),
    ("tier in (web,db)", ["a", "b", "c"]),
    ("tier notin (web)", ["b", "d"]),
    ("env", ["c"]),
    ("!env", ["a", "b", "d"]),
    ("tier=web,env=prod", ["c"]),
    ("", ["a", "b", "c", "d"]),
])
def test_label_selectors(crd_api: Api, selector: str, expected: list[str]) -> None:
    make(crd_api, "a", tier="web")
    make(crd_api, "b", tier="db")
    make(crd_api, "c", tier="web", env="prod")
    make(crd_api, "d")
    status, body = crd_api.get(FOOS, labelSelector=selector)
    assert status == 200 and body["kind"] == "FooList"
    assert names(body) == expected


def test_field_selectors_and_bad_selectors(crd_api: Api) -> None:
    make(crd_api, "a")
    make(crd_api, "b")
    assert names(crd_api.get(FOOS, fieldSelector="metadata.name=b")[1]) == ["b"]
    assert names(crd_api.get(FOOS, fieldSelector="metadata.name!=b")[1]) == ["a"]
    all_foos = "/apis/samplecontroller.k8s.io/v1alpha1/foos"
    assert names(crd_api.get(all_foos, fieldSelector="metadata.namespace=ns")[1]) == ["a", "b"]
    assert names(crd_api.get(all_foos, fieldSelector="metadata.namespace=other")[1]) == []
    status, body = crd_api.get(FOOS, fieldSelector="spec.replicas=1")
    assert (status, body["reason"]) == (400, "BadRequest")
    assert crd_api.get(FOOS, labelSelector="a in (")[0] == 400
    assert crd_api.get(FOOS, limit="many")[0] == 400


def test_paging_with_continue_tokens(crd_api: Api) -> None:
    for name in "edcba":
        make(crd_api, name)
    page = crd_api.get(FOOS, limit=2)[1]
    assert names(page) == ["a", "b"]
    assert page["metadata"]["remainingItemCount"] == 3
    list_rv = page["metadata"]["resourceVersion"]
    crd_api.delete(f"{FOOS}/c")  # pages keep reading the snapshot of the first one
    make(crd_api, "bb")
    page = crd_api.get(FOOS, limit=2, **{"continue": page["metadata"]["continue"]})[1]
    assert names(page) == ["c", "d"]
    assert page["metadata"]["resourceVersion"] == list_rv
    page = crd_api.get(FOOS, limit=2, **{"continue": page["metadata"]["continue"]})[1]
    assert names(page) == ["e"] and page["metadata"]["continue"] == ""  # unstructured list
    assert crd_api.get(FOOS, **{"continue": "garbage"})[0] == 400


def test_resource_version_semantics(crd_api: Api) -> None:
    first = make(crd_api, "a")["metadata"]["resourceVersion"]
    make(crd_api, "b")
    assert names(crd_api.get(FOOS, resourceVersion="0")[1]) == ["a", "b"]
    assert names(crd_api.get(FOOS, resourceVersion=first)[1]) == ["a", "b"]  # NotOlderThan
    exact = crd_api.get(FOOS, resourceVersion=first, resourceVersionMatch="Exact")[1]
    assert names(exact) == ["a"] and exact["metadata"]["resourceVersion"] == first
    status, body = crd_api.get(FOOS, resourceVersion="999")
    assert (status, body["reason"]) == (504, "Timeout")
    assert body["message"].startswith("Timeout: Too large resource version: 999, current: ")


def test_compaction_expires_old_versions(api_server: TestAPIServer, crd_api: Api) -> None:
    first = make(crd_api, "a")["metadata"]["resourceVersion"]
    make(crd_api, "b")
    page = crd_api.get(FOOS, limit=1)[1]
    make(crd_api, "c")
    api_server.compact()
    status, body = crd_api.get(FOOS, resourceVersion=first, resourceVersionMatch="Exact")
    assert (status, body["reason"], body["code"]) == (410, "Expired", 410)
    status, body = crd_api.get(FOOS, **{"continue": page["metadata"]["continue"]})
    assert (status, body["reason"]) == (410, "Expired")


def test_watch_from_a_resource_version_replays_and_follows(crd_api: Api) -> None:
    start = make(crd_api, "a")["metadata"]["resourceVersion"]
    crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 2}})
    crd_api.delete(f"{FOOS}/a")
    events = crd_api.watch(FOOS, resourceVersion=start, timeoutSeconds=2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in
            [next(events), next(events)]] == [("MODIFIED", "a"), ("DELETED", "a")]
    make(crd_api, "b")
    live = next(events)
    assert (live["type"], live["object"]["metadata"]["name"]) == ("ADDED", "b")
    assert live["object"]["kind"] == "Foo"


def test_watch_applies_selectors_as_transitions(crd_api: Api) -> None:
    start = make(crd_api, "a", tier="db")["metadata"]["resourceVersion"]
    crd_api.patch(f"{FOOS}/a", {"metadata": {"labels": {"tier": "web"}}})
    crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 3}})
    crd_api.patch(f"{FOOS}/a", {"metadata": {"labels": {"tier": "db"}}})
    make(crd_api, "b", tier="db")
    make(crd_api, "z", tier="web")  # the sentinel: nothing may come between
    events = crd_api.watch(FOOS, resourceVersion=start, labelSelector="tier=web")
    assert take(events, 4) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a"),
                               ("ADDED", "z")]


def test_watch_without_version_starts_with_current_state(crd_api: Api) -> None:
    make(crd_api, "b")
    make(crd_api, "a")
    events = crd_api.watch(FOOS)
    assert take(events, 2) == [("ADDED", "a"), ("ADDED", "b")]
    make(crd_api, "c")
    assert take(events, 1) == [("ADDED", "c")]


@pytest.mark.parametrize("value", ["true", "True", "TRUE", "1", "yes"])
def test_any_watch_value_but_false_or_0_opens_a_watch(crd_api: Api, value: str) -> None:
    """kube-apiserver's bool query parameters: only absent, "0" and "false" (any case) are
    false; kubernetes_asyncio sends ``watch=True``."""
    make(crd_api, "a")
    events = crd_api.watch(FOOS, watch=value, timeoutSeconds=2)
    assert take(events, 1) == [("ADDED", "a")]
    events.close()


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "0"])
def test_watch_false_or_0_lists(crd_api: Api, value: str) -> None:
    make(crd_api, "a")
    status, body = crd_api.get(FOOS, watch=value)
    assert (status, body["kind"], names(body)) == (200, "FooList", ["a"])


def test_watch_initial_events_end_with_an_annotated_bookmark(crd_api: Api) -> None:
    make(crd_api, "a")
    rv = make(crd_api, "b")["metadata"]["resourceVersion"]
    events = crd_api.watch(FOOS, sendInitialEvents="true", allowWatchBookmarks="true",
                           resourceVersionMatch="NotOlderThan", timeoutSeconds=2)
    first = [next(events) for _ in range(3)]
    assert [e["type"] for e in first] == ["ADDED", "ADDED", "BOOKMARK"]
    assert first[2]["object"] == {
        "kind": "Foo", "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "metadata": {"resourceVersion": rv,
                     "annotations": {"k8s.io/initial-events-end": "true"}}}


@pytest.mark.parametrize("allow", ["true", "True"])
def test_watch_bookmarks_when_allowed(allow: str) -> None:
    with TestAPIServer(bookmark_interval=0.05) as server:
        api = Api(server)
        created = api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
        version = created[1]["metadata"]["resourceVersion"]
        events = api.watch("/api/v1/namespaces/default/configmaps", resourceVersion=version,
                           allowWatchBookmarks=allow, timeoutSeconds=5)
        bookmark = next(events)
        assert bookmark == {"type": "BOOKMARK", "object": {
            "kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": version}}}
        events.close()


def test_watch_from_a_compacted_version_is_gone(api_server: TestAPIServer,
                                                crd_api: Api) -> None:
    start = make(crd_api, "a")["metadata"]["resourceVersion"]
    last = make(crd_api, "b")["metadata"]["resourceVersion"]
    api_server.compact()
    from_last = crd_api.watch(FOOS, resourceVersion=last)
    make(crd_api, "c")
    assert take(from_last, 1) == [("ADDED", "c")]
    events = list(crd_api.watch(FOOS, resourceVersion=start))
    assert events == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"too old resource version: {start} ({last})", "reason": "Expired",
        "code": 410}}]


def test_history_window_expires_old_versions() -> None:
    with TestAPIServer(history_size=3, system_objects=False) as server:
        api = Api(server)
        path = "/api/v1/namespaces/default/configmaps"
        for name in "abcde":
            api.post(path, {"metadata": {"name": name}})
        events = list(api.watch(path, resourceVersion="1"))
        assert events[0]["object"]["code"] == 410
        assert take(api.watch(path, resourceVersion="2"), 3) == [
            ("ADDED", "c"), ("ADDED", "d"), ("ADDED", "e")]


def test_watch_of_another_version_sees_shared_storage(crd_api: Api) -> None:
    make(crd_api, "a")
    events = crd_api.watch("/apis/samplecontroller.k8s.io/v1alpha1/foos")
    assert next(events)["object"]["metadata"]["namespace"] == "ns"


def test_list_options_are_validated(crd_api: Api) -> None:
    status, body = crd_api.get(FOOS, resourceVersionMatch="Exact")
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided")
    assert crd_api.get(FOOS, resourceVersion="1", resourceVersionMatch="Newest")[0] == 422
    assert crd_api.get(FOOS, resourceVersion="0", resourceVersionMatch="Exact")[0] == 422
    assert crd_api.get(FOOS, resourceVersion="abc")[0] == 400


def test_watch_from_a_future_version_skips_older_writes(api_server: TestAPIServer,
                                                        crd_api: Api) -> None:
    current = int(make(crd_api, "a")["metadata"]["resourceVersion"])
    query = (("watch", "true"), ("resourceVersion", str(current + 2)))
    stream = api_server.core.handle(Request("GET", FOOS, query), read_timeout=5)
    for name in ("b", "c", "d"):  # versions current+1 .. current+3, written after the watch
        make(crd_api, name)
    event = orjson.loads(next(iter(stream.iter_lines())))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "d")
    stream.close()


def test_expired_reads_answer_with_the_recorded_bodies(api_server: TestAPIServer,
                                                       crd_api: Api) -> None:
    """crd.jsonl #68-#70: etcd3 ``interpretListError``'s 410s and ``DecodeContinue``'s 400."""
    first = make(crd_api, "a")["metadata"]["resourceVersion"]
    make(crd_api, "b")
    page = crd_api.get(FOOS, limit=1)[1]
    token = page["metadata"]["continue"]
    assert decode_continue(token) == (int(page["metadata"]["resourceVersion"]), "a\x00")
    make(crd_api, "c")
    api_server.compact()
    status, body = crd_api.get(FOOS, resourceVersion=first, resourceVersionMatch="Exact")
    assert (status, body) == (410, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "The resourceVersion for the provided list is too old.",
        "reason": "Expired", "code": 410})
    status, body = crd_api.get(FOOS, limit=1, **{"continue": token})
    assert (status, body["reason"], body["metadata"]) == (
        410, "Expired", {"continue": encode_continue(-1, "a\x00")})
    assert body["message"].startswith("The provided continue parameter is too old to "
                                      "display a consistent list result. You can start a new "
                                      "list without the continue parameter, or use the "
                                      "continue token in this response")
    rest = crd_api.get(FOOS, limit=5, **{"continue": body["metadata"]["continue"]})[1]
    assert names(rest) == ["b", "c"]  # rv -1: the remainder at the latest version
    status, body = crd_api.get(FOOS, limit=2, **{"continue": "not-a-token"})
    assert (status, body["message"]) == (400, "invalid continue token: continue key is not "
                                         "valid: invalid character '\\u009e' looking for "
                                         "beginning of value")


def test_the_recorded_continue_token_format_is_read() -> None:
    """The token crd.jsonl #69 sent: ``{"v":"meta.k8s.io/v1","rv":2,"start":"foo-b\\u0000"}``
    and the one the real server handed back with its 410."""
    assert decode_continue(
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Miwic3RhcnQiOiJmb28tYlx1MDAwMCJ9") == (2, "foo-b\x00")
    assert encode_continue(-1, "foo-b\x00") == (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiZm9vLWJcdTAwMDAifQ")


def test_a_custom_resource_watch_cache_starts_when_its_crd_is_served(api: Api) -> None:
    """crd.jsonl #71: a watch from before the CRD's storage began is 410, naming the
    resourceVersion the cache starts at; a status-only CRD write keeps the cache."""
    before = api.post("/api/v1/namespaces", {"metadata": {"name": "ns"}})[1]
    api.post(CRDS, copy.deepcopy(FOO_CRD))
    established = api.get(f"{CRDS}/{FOO_CRD['metadata']['name']}")[1]
    start = established["metadata"]["resourceVersion"]
    events = list(api.watch(FOOS, resourceVersion=before["metadata"]["resourceVersion"]))
    assert events == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"too old resource version: {before['metadata']['resourceVersion']} "
                   f"({start})", "reason": "Expired", "code": 410}}]
    following = api.watch(FOOS, resourceVersion=start)
    make(api, "a")
    assert take(following, 1) == [("ADDED", "a")]
