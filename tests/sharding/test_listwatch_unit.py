"""ShardedListWatch's decisions over a scripted lister-watcher: when it trusts the server,
what its client-side filter lets through, and how a change of ranges ends a watch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kgen_runtime.meta import ListMeta, ObjectMeta, ShardInfo
from kgen_runtime.rest import ListOptions
from kgen_runtime.sharding import (
    HASH_SPACE,
    HashRange,
    ShardedListWatch,
    ShardRangesChangedError,
    fnv1a64,
    format_selector,
)
from kgen_runtime.watch import WatchEvent

LOWER = HashRange(0, HASH_SPACE // 2)
UPPER = HashRange(HASH_SPACE // 2, HASH_SPACE)


@dataclass
class Obj:
    metadata: ObjectMeta


def obj(uid: str) -> Obj:
    return Obj(ObjectMeta(name=uid, uid=uid, resource_version="7"))


# uids on either side of the middle of the hash space (shaped like real ones: FNV-1a's top
# bit barely varies over short strings with a common prefix, e.g. "uid-0".."uid-999")
UIDS = [f"{i:08d}-aaaa-bbbb-cccc-dddddddddddd" for i in range(40)]
LOW = [uid for uid in UIDS if fnv1a64(uid) in LOWER][:3]
HIGH = [uid for uid in UIDS if fnv1a64(uid) in UPPER][:3]


@dataclass
class Page:
    metadata: ListMeta
    items: list[Obj]


@dataclass
class ScriptedWatch:
    events: list[WatchEvent[Any]]
    stopped: bool = False

    def __iter__(self) -> Iterator[WatchEvent[Any]]:
        for event in self.events:
            if self.stopped:
                return
            yield event

    def stop(self) -> None:
        self.stopped = True


@dataclass
class Scripted:
    """Answers lists with ``pages`` (in turn) and watches with ``events``; logs the options."""

    pages: list[Page]
    events: list[WatchEvent[Any]] = field(default_factory=list)
    calls: list[tuple[str, ListOptions]] = field(default_factory=list)

    def list(self, options: ListOptions) -> Page:
        self.calls.append(("list", options))
        return self.pages.pop(0)

    def watch(self, options: ListOptions) -> ScriptedWatch:
        self.calls.append(("watch", options))
        return ScriptedWatch(list(self.events))


def page(items: list[Obj], selector: str | None = None, continue_: str | None = None) -> Page:
    info = ShardInfo(selector=selector) if selector is not None else None
    return Page(ListMeta(resource_version="7", continue_=continue_, shard_info=info), items)


EVERYTHING = [obj(uid) for uid in LOW + HIGH]


def names(items: Any) -> list[str]:
    return [item.metadata.name for item in items]


def test_an_echoed_list_is_trusted_as_it_is() -> None:
    selector = format_selector([LOWER])
    # a server that filtered is believed, even about an item a client would not keep
    source = Scripted([page(EVERYTHING, selector)])
    lw = ShardedListWatch(source, [LOWER])
    assert names(lw.list(ListOptions(limit=5)).items) == LOW + HIGH
    assert lw.server_sharded
    assert source.calls == [("list", ListOptions(limit=5, shard_selector=selector))]


@pytest.mark.parametrize("echo", [None, format_selector([UPPER])])
def test_a_list_without_the_echo_is_filtered_here(echo: str | None) -> None:
    lw = ShardedListWatch(Scripted([page(EVERYTHING, echo)]), [LOWER])
    listed = lw.list(ListOptions())
    assert names(listed.items) == LOW
    assert listed.metadata is not None and listed.metadata.resource_version == "7"
    assert not lw.server_sharded


def test_client_side_watch_filter_keeps_bookmarks_and_errors() -> None:
    bookmark = WatchEvent("BOOKMARK", Obj(ObjectMeta(resource_version="9")))
    error = WatchEvent("ERROR", {"kind": "Status", "code": 410})
    events = [WatchEvent("ADDED", obj(HIGH[0])), WatchEvent("ADDED", obj(LOW[0])),
              bookmark, WatchEvent("MODIFIED", obj(HIGH[1])),
              WatchEvent("DELETED", obj(LOW[1])), error]
    source = Scripted([page(EVERYTHING)], events)
    lw = ShardedListWatch(source, [LOWER])
    lw.list(ListOptions())
    delivered = list(lw.watch(ListOptions(resource_version="7")))
    assert delivered == [events[1], bookmark, events[4], error]
    assert source.calls[-1] == ("watch", ListOptions(resource_version="7",
                                                     shard_selector=format_selector([LOWER])))


def test_a_server_sharded_watch_is_not_filtered_again() -> None:
    events = [WatchEvent("ADDED", obj(HIGH[0]))]
    lw = ShardedListWatch(Scripted([page([], format_selector([LOWER]))], events), [LOWER])
    lw.list(ListOptions())
    assert list(lw.watch(ListOptions())) == events


def test_set_ranges_ends_an_open_watch_with_a_relist_request() -> None:
    events = [WatchEvent("ADDED", obj(LOW[0])), WatchEvent("ADDED", obj(LOW[1]))]
    lw = ShardedListWatch(Scripted([page([])], events), [LOWER])
    lw.list(ListOptions())
    watcher = iter(lw.watch(ListOptions()))
    assert next(watcher) == events[0]
    lw.set_ranges([UPPER])
    with pytest.raises(ShardRangesChangedError):
        next(watcher)
    assert lw.ranges == (UPPER,) and lw.selector == format_selector([UPPER])


def test_a_watch_after_a_list_of_other_ranges_asks_for_a_relist() -> None:
    source = Scripted([page([]), page([])])
    lw = ShardedListWatch(source, [LOWER])
    lw.list(ListOptions())
    lw.set_ranges([UPPER])
    with pytest.raises(ShardRangesChangedError):
        lw.watch(ListOptions())
    lw.list(ListOptions())
    lw.watch(ListOptions())
    assert [(verb, o.shard_selector) for verb, o in source.calls] == [
        ("list", format_selector([LOWER])), ("list", format_selector([UPPER])),
        ("watch", format_selector([UPPER]))]


def test_a_continued_list_keeps_its_first_pages_selector() -> None:
    source = Scripted([page([obj(LOW[0])], continue_="next"), page([obj(LOW[1])])])
    lw = ShardedListWatch(source, [LOWER])
    lw.list(ListOptions(limit=1))
    lw.set_ranges([UPPER])
    lw.list(ListOptions(limit=1, continue_="next"))
    assert [o.shard_selector for _, o in source.calls] == [format_selector([LOWER])] * 2
    with pytest.raises(ShardRangesChangedError):
        lw.watch(ListOptions())


def test_same_ranges_change_nothing() -> None:
    events = [WatchEvent("ADDED", obj(LOW[0]))]
    lw = ShardedListWatch(Scripted([page([])], events), [LOWER, UPPER])
    lw.list(ListOptions())
    watcher = lw.watch(ListOptions())
    lw.set_ranges([HashRange(0, HASH_SPACE)])
    assert list(watcher) == events
