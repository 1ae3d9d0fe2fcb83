"""The test server's ``shardSelector`` (KEP-5866) against a brute-force FNV-1a partition:
with the gate on every object lands in exactly one of N shards, on lists and watches, and
lists echo the selector in ``shardInfo``; malformed selectors get kube-apiserver v1.36.2's
500; with the gate off the parameter is ignored (../shared/REAL-CLUSTER.md)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.rest import ListOptions
from kgen_runtime.rest.transport import HTTPTransport
from kgen_runtime.sharding import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
)
from kgen_runtime.testing import ShardRequest, TestAPIServer
from tests.cache._foo import FOO, foo, foos

SHARDS = 4
STEP = HASH_SPACE // SHARDS


def shard_ranges(count: int = SHARDS) -> list[HashRange]:
    step = HASH_SPACE // count
    return [HashRange(i * step, HASH_SPACE if i == count - 1 else (i + 1) * step)
            for i in range(count)]


def owner(value: str, ranges: list[HashRange]) -> int:
    """The brute-force answer: the index of the one range holding ``value``'s hash."""
    holding = [i for i, hash_range in enumerate(ranges) if fnv1a64(value) in hash_range]
    assert len(holding) == 1
    return holding[0]


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer(bookmark_interval=0.2, sharded_list_and_watch=True) as started:
        started.register(FOO)
        yield started


@pytest.fixture
def transport(server: TestAPIServer) -> Iterator[HTTPTransport]:
    opened = HTTPTransport(server.config())
    try:
        yield opened
    finally:
        opened.close()


def create_foos(transport: HTTPTransport, count: int, namespaces: int = 1) -> dict[str, str]:
    """Create ``count`` Foos (in ``default``, or spread over ``ns-<i>``); uids by name."""
    names = ["default"] if namespaces == 1 else [f"ns-{ns}" for ns in range(namespaces)]
    client = [foos(transport, name) for name in names]
    uids = {}
    for index in range(count):
        ns = index % namespaces
        created = client[ns].create(foo(f"foo-{index}", names[ns]))
        uids[created.metadata.name or ""] = created.metadata.uid or ""
    return uids


def test_lists_partition_the_collection_by_uid(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    uids = create_foos(transport, 60)
    ranges = shard_ranges()
    seen: list[set[str]] = []
    for hash_range in ranges:
        selector = format_selector([hash_range])
        page = foos(transport).list(ListOptions(shard_selector=selector))
        assert page.metadata is not None and page.metadata.shard_info is not None
        assert page.metadata.shard_info.selector == selector
        seen.append({item.metadata.name or "" for item in page.items})
    for index, names in enumerate(seen):
        assert names == {name for name, uid in uids.items() if owner(uid, ranges) == index}
    assert sorted(name for names in seen for name in names) == sorted(uids)


def test_ranges_are_ored_and_the_selector_echoed_as_sent(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    uids = create_foos(transport, 40)
    ranges = shard_ranges()
    selector = (f"shardRange(object.metadata.uid, '{ranges[3].start:#018x}', "
                f"'0x10000000000000000')  ||  {ranges[0].selector()}")
    page = foos(transport).list(ListOptions(shard_selector=selector))
    assert page.metadata is not None and page.metadata.shard_info is not None
    assert page.metadata.shard_info.selector == selector
    assert {item.metadata.name for item in page.items} == {
        name for name, uid in uids.items() if owner(uid, ranges) in (0, 3)}


def test_namespace_sharding_keeps_namespaces_whole(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    create_foos(transport, 30, namespaces=6)
    ranges = shard_ranges(2)
    all_foos = foos(transport, "")
    for index, hash_range in enumerate(ranges):
        page = all_foos.list(ListOptions(
            shard_selector=format_selector([hash_range], ShardField.NAMESPACE)))
        namespaces = {item.metadata.namespace or "" for item in page.items}
        assert namespaces == {f"ns-{n}" for n in range(6) if owner(f"ns-{n}", ranges) == index}
        assert len(page.items) == 5 * len(namespaces)


def test_paged_sharded_list_has_no_remaining_count_and_every_page_is_echoed(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    uids = create_foos(transport, 40)
    selector = format_selector([shard_ranges(2)[0]])
    client = foos(transport)
    names: list[str] = []
    options = ListOptions(limit=3, shard_selector=selector)
    while True:
        page = client.list(options)
        assert page.metadata is not None and page.metadata.shard_info is not None
        assert page.metadata.shard_info.selector == selector
        assert page.metadata.remaining_item_count is None
        names.extend(item.metadata.name or "" for item in page.items)
        if not page.metadata.continue_:
            break
        options = ListOptions(limit=3, continue_=page.metadata.continue_,
                              shard_selector=selector)
    assert sorted(names) == sorted(n for n, uid in uids.items()
                                   if owner(uid, shard_ranges(2)) == 0)


def test_watches_deliver_only_their_shards_events(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    client = foos(transport)
    rv = client.list().metadata.resource_version
    ranges = shard_ranges()
    watches = [client.watch(ListOptions(resource_version=rv, timeout_seconds=20,
                                        shard_selector=format_selector([r])))
               for r in ranges]
    uids = create_foos(transport, 40)
    for name in uids:
        client.delete(name)
    for index, watcher in enumerate(watches):
        expected = {name for name, uid in uids.items() if owner(uid, ranges) == index}
        events: list[tuple[str, str]] = []
        deleted: set[str] = set()
        for event in watcher:
            name = event.object.metadata.name or ""
            events.append((event.type, name))
            if event.type == "DELETED":
                deleted.add(name)
            if deleted == expected:
                break
        watcher.stop()
        # every creation precedes every deletion, so all ADDED events of any shard came first
        assert sorted(events) == sorted([("ADDED", n) for n in expected]
                                        + [("DELETED", n) for n in expected])


def raw_get(server: TestAPIServer, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
    url = f"{server.url}/apis/example.com/v1/namespaces/default/foos?" + urllib.parse.urlencode(
        query)
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("watch", [False, True])
@pytest.mark.parametrize(
    ("selector", "message"),
    [
        # ../shared/REAL-CLUSTER.md, recorded on kube-apiserver v1.36.2
        ("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
         'invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got '
         '"0x0" (did you mean "0x0000000000000000"?)'),
        ("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
         'invalid shard selector: unsupported field path "object.metadata.name"; supported: '
         "object.metadata.uid, object.metadata.namespace"),
    ],
)
def test_malformed_selectors_get_the_servers_500(
    server: TestAPIServer, selector: str, message: str, watch: bool
) -> None:
    query = {"shardSelector": selector, **({"watch": "1"} if watch else {})}
    status, body = raw_get(server, query)
    # ErrorToAPIStatus of a plain error: the message as it is, no reason field
    assert (status, body) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "code": 500})


def test_gate_off_ignores_the_selector_and_sends_no_shard_info() -> None:
    with TestAPIServer() as server:
        server.register(FOO)
        status, body = raw_get(server, {"shardSelector": "not even CEL ("})
        assert status == 200 and "shardInfo" not in body["metadata"]
        transport = HTTPTransport(server.config())
        uids = create_foos(transport, 10)
        page = foos(transport).list(ListOptions(
            shard_selector=format_selector([shard_ranges()[0]])))
        transport.close()
        assert page.metadata is not None and page.metadata.shard_info is None
        assert sorted(item.metadata.name or "" for item in page.items) == sorted(uids)
        assert server.sharding_requests()[-1] == ShardRequest(
            "list", "example.com", "foos", "default", format_selector([shard_ranges()[0]]),
            applied=False)


def test_request_log_names_each_list_and_watch(
    server: TestAPIServer, transport: HTTPTransport
) -> None:
    client = foos(transport)
    selector = format_selector([shard_ranges()[1]])
    client.list()
    rv = client.list(ListOptions(shard_selector=selector)).metadata.resource_version
    client.watch(ListOptions(resource_version=rv, shard_selector=selector,
                             timeout_seconds=1)).stop()
    raw_get(server, {"shardSelector": "shardRange(object.metadata.uid, '0x0', '0x1')"})
    assert server.sharding_requests() == [
        ShardRequest("list", "example.com", "foos", "default", None, applied=False),
        ShardRequest("list", "example.com", "foos", "default", selector, applied=True),
        ShardRequest("watch", "example.com", "foos", "default", selector, applied=True),
        ShardRequest("list", "example.com", "foos", "default",
                     "shardRange(object.metadata.uid, '0x0', '0x1')", applied=False),
    ]
