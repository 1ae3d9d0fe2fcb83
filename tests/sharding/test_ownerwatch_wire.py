"""OwnerShardedListWatch over a client's ListWatch filters on the wire: the objects of other
shards are never built, in lists (every page) and watches, sync and async, while what is
delivered stays what the typed filter delivers (tests/sharding/test_ownerwatch.py)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Self

import orjson
from pydantic import model_validator

from kgen_runtime.cache import AsyncListWatch, ListWatch
from kgen_runtime.meta import KubeList, ObjectMeta
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient, ListOptions
from kgen_runtime.rest.client import ResourceClient
from kgen_runtime.sharding import (
    AsyncOwnerShardedListWatch,
    OwnerShardedListWatch,
    controller_uid,
)
from kgen_runtime.sharding._ownerwatch import _wire_controller_uid
from kgen_runtime.watch import WatchEvent
from tests.cache._foo import FOO, Foo, foos, served
from tests.sharding.test_listwatch_unit import HIGH, LOW, LOWER
from tests.sharding.test_ownerwatch import EVERYONE, ref


class Recorded(Foo):
    """A Foo that records the name of every one built (a validator makes pydantic build it,
    and it runs once per build)."""

    built: ClassVar[list[str | None]] = []

    @model_validator(mode="after")
    def _record(self) -> Self:
        Recorded.built.append(self.metadata.name)
        return self


class RecordedList(KubeList[Recorded]):
    api_version: str = "example.com/v1"
    kind: str = "FooList"


RECORDED = Resource(group="example.com", version="v1", kind="Foo", plural="foos",
                    singular="foo", namespaced=True, model=Recorded, list_model=RecordedList)


def owned(name: str, owner_uid: str | None) -> Foo:
    refs = None if owner_uid is None else [ref(owner_uid)]
    return Foo(metadata=ObjectMeta(name=name, namespace="default", owner_references=refs))


def owners(owner_uid: str | None) -> dict[str, Any]:
    refs = None if owner_uid is None else [ref(owner_uid).model_dump(by_alias=True,
                                                                     exclude_none=True)]
    return {"metadata": {"ownerReferences": refs}}


# Listed: in-0 and in-1 have owners in LOWER; the others are other shards' or nobody's.
LISTED = [("in-0", LOW[0]), ("in-1", LOW[1]), ("orphan", None), ("out-0", HIGH[0]),
          ("out-1", HIGH[1])]
KEPT = ["in-0", "in-1"]

# Then, for the watch from the list's resourceVersion: the writes, in order ...
WRITES: list[tuple[str, str, Any]] = [
    ("create", "new-out", HIGH[2]),   # another shard's: dropped
    ("create", "new-in", LOW[2]),     # ADDED
    ("patch", "out-0", owners(HIGH[1])),  # still another shard's: dropped
    ("patch", "in-0", owners(None)),  # orphaned: leaves, delivered as DELETED
    ("patch", "orphan", owners(LOW[0])),  # adopted: MODIFIED
    ("delete", "out-1", None),        # dropped
    ("delete", "new-in", None),       # held: DELETED
    ("create", "last", LOW[0]),       # ADDED, and the end of the scenario
]
# ... and what is delivered: exactly the events whose objects are built.
DELIVERED = [("ADDED", "new-in"), ("DELETED", "in-0"), ("MODIFIED", "orphan"),
             ("DELETED", "new-in"), ("ADDED", "last")]


def test_the_wire_reading_of_the_controller_is_the_typed_one() -> None:
    # in, out, orphan, a controller after a non-controller, a reference with controller unset
    wire = [orjson.loads(o.metadata.model_dump_json()) for o in EVERYONE]
    assert [_wire_controller_uid(m) for m in wire] == [controller_uid(o.metadata)
                                                       for o in EVERYONE]
    assert [_wire_controller_uid(m) for m in wire] == [LOW[0], HIGH[0], None, HIGH[1], None]


def kinds_and_names(events: list[WatchEvent[Any]]) -> list[tuple[str, str]]:
    return [(event.type, event.object.metadata.name) for event in events]


def test_objects_of_other_shards_are_never_built() -> None:
    with served() as (_, transport):
        writer = foos(transport)
        for name, owner_uid in LISTED:
            writer.create(owned(name, owner_uid))
        reader: ResourceClient[Recorded, RecordedList] = ResourceClient(transport, RECORDED,
                                                                        "default")
        list_watch: ListWatch[Recorded] = ListWatch.from_client(reader)
        assert list_watch.accepts_keep
        lw = OwnerShardedListWatch(list_watch, [LOWER])
        Recorded.built.clear()
        listed: list[Any] = []
        options = ListOptions(limit=2)  # three pages: in-0 in-1 | orphan out-0 | out-1
        while True:
            page = lw.list(options)
            listed.extend(page.items)
            assert page.metadata is not None
            if not page.metadata.continue_:
                break
            options = ListOptions(limit=2, continue_=page.metadata.continue_)
        assert [obj.metadata.name for obj in listed] == KEPT == Recorded.built

        for verb, name, argument in WRITES:
            if verb == "create":
                writer.create(owned(name, argument))
            elif verb == "patch":
                writer.patch(name, argument)
            else:
                writer.delete(name)
        Recorded.built.clear()
        delivered = []
        watch_options = ListOptions(resource_version=page.metadata.resource_version,
                                    timeout_seconds=10)
        for event in lw.watch(watch_options):
            delivered.append(event)
            if event.object.metadata.name == "last":
                break
        assert kinds_and_names(delivered) == DELIVERED
        assert Recorded.built == [name for _, name in DELIVERED]


def test_the_async_twin_never_builds_them_either() -> None:
    async def scenario() -> None:
        with served() as (server, _):
            transport = AsyncHTTPTransport(server.config())
            try:
                writer: AsyncResourceClient[Foo, Any] = AsyncResourceClient(transport, FOO,
                                                                            "default")
                for name, owner_uid in LISTED:
                    await writer.create(owned(name, owner_uid))
                reader: AsyncResourceClient[Recorded, RecordedList] = AsyncResourceClient(
                    transport, RECORDED, "default")
                list_watch: AsyncListWatch[Recorded] = AsyncListWatch.from_client(reader)
                assert list_watch.accepts_keep
                lw = AsyncOwnerShardedListWatch(list_watch, [LOWER])
                Recorded.built.clear()
                page = await lw.list(ListOptions())
                assert [obj.metadata.name for obj in page.items] == KEPT == Recorded.built

                for verb, name, argument in WRITES:
                    if verb == "create":
                        await writer.create(owned(name, argument))
                    elif verb == "patch":
                        await writer.patch(name, argument)
                    else:
                        await writer.delete(name)
                Recorded.built.clear()
                assert page.metadata is not None
                watcher = await lw.watch(ListOptions(
                    resource_version=page.metadata.resource_version, timeout_seconds=10))
                delivered = []
                async for event in watcher:
                    delivered.append(event)
                    if event.object.metadata.name == "last":
                        watcher.stop()
                assert kinds_and_names(delivered) == DELIVERED
                assert Recorded.built == [name for _, name in DELIVERED]
            finally:
                await transport.aclose()

    asyncio.run(scenario())
