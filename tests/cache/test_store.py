"""The thread-safe indexer: keys, indices, replace, add_indexers and concurrency."""

from __future__ import annotations

import threading

import pytest

from kgen_runtime.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    KeyFuncError,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from tests.cache._fakes import Obj, obj


def by_label_app(o: Obj) -> list[str]:
    return [o.metadata.labels["app"]] if o.metadata.labels and "app" in o.metadata.labels else []


def new_indexer() -> Indexer[Obj]:
    return Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "app": by_label_app})


def test_keys() -> None:
    assert meta_namespace_key_func(obj("a", "ns")) == "ns/a"
    assert meta_namespace_key_func(obj("a", None)) == "a"
    assert meta_namespace_key_func(DeletedFinalStateUnknown("x/y", None)) == "x/y"
    with pytest.raises(KeyFuncError, match=r"no metadata\.name"):
        meta_namespace_key_func(obj("", "ns"))
    with pytest.raises(KeyFuncError, match="no metadata"):
        meta_namespace_key_func(object())
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    for bad in ("a/b/c", "", "ns/"):
        with pytest.raises(KeyFuncError, match="unexpected key format"):
            split_meta_namespace_key(bad)


def test_add_update_delete_keep_indices_current() -> None:
    store = new_indexer()
    a1 = obj("a", "n1", labels={"app": "web"})
    b1 = obj("b", "n1", labels={"app": "db"})
    c2 = obj("c", "n2", labels={"app": "web"})
    for o in (a1, b1, c2):
        store.add(o)
    assert store.get_by_key("n1/a") is a1
    assert sorted(store.list_keys()) == ["n1/a", "n1/b", "n2/c"]
    assert sorted(store.index_keys(NAMESPACE_INDEX, "n1")) == ["n1/a", "n1/b"]
    assert sorted(store.index_keys("app", "web")) == ["n1/a", "n2/c"]
    assert {o.metadata.name for o in store.index("app", a1)} == {"a", "c"}

    a1_db = obj("a", "n1", labels={"app": "db"})
    store.update(a1_db)
    assert store.get(a1) is a1_db
    assert store.index_keys("app", "web") == ["n2/c"]
    assert sorted(store.index_keys("app", "db")) == ["n1/a", "n1/b"]

    store.delete(DeletedFinalStateUnknown("n2/c", c2))
    assert "web" not in store.list_index_func_values("app")
    assert sorted(store.list_index_func_values(NAMESPACE_INDEX)) == ["n1"]
    store.delete(c2)  # deleting a missing key is fine
    assert len(store) == 2
    assert "n1/a" in store


def test_unknown_index_raises() -> None:
    store = new_indexer()
    with pytest.raises(KeyError, match="index 'nope' does not exist"):
        store.by_index("nope", "x")


def test_failing_index_function_changes_nothing() -> None:
    def explode(o: Obj) -> list[str]:
        if o.spec == "bad":
            raise RuntimeError("boom")
        return [o.spec]

    store: Indexer[Obj] = Indexer(indexers={"spec": explode})
    good = obj("a", spec="good")
    store.add(good)
    with pytest.raises(RuntimeError, match="boom"):
        store.update(obj("a", spec="bad"))
    assert store.get_by_key("ns/a") is good
    assert store.index_keys("spec", "good") == ["ns/a"]
    with pytest.raises(RuntimeError, match="boom"):  # a new key as well
        store.add(obj("b", spec="bad"))
    assert "ns/b" not in store
    assert store.list_index_func_values("spec") == ["good"]


def test_put_and_delete_by_key_file_under_the_given_key() -> None:
    store = new_indexer()
    a1 = obj("a", "n1", labels={"app": "web"})
    assert store.put_by_key("n1/a", a1) is None
    a2 = obj("a", "n1", labels={"app": "db"})
    assert store.put_by_key("n1/a", a2) is a1
    assert store.get(a1) is a2
    assert store.index_keys("app", "db") == ["n1/a"] and store.index_keys("app", "web") == []
    store.delete_by_key("n1/a")
    store.delete_by_key("n1/a")  # a missing key is fine
    assert len(store) == 0 and store.list_index_func_values("app") == []


def test_replace_rebuilds_everything() -> None:
    store = new_indexer()
    store.add(obj("old", "n1", labels={"app": "web"}))
    store.replace([obj("new", "n2", labels={"app": "db"})], "42")
    assert store.list_keys() == ["n2/new"]
    assert store.by_index("app", "web") == []
    assert [o.metadata.name for o in store.by_index("app", "db")] == ["new"]


def test_add_indexers_after_objects_exist() -> None:
    store: Indexer[Obj] = Indexer()
    store.add(obj("a", labels={"app": "web"}))
    store.add(obj("b", labels={"app": "db"}))
    store.add_indexers({"app": by_label_app})
    assert store.index_keys("app", "web") == ["ns/a"]
    store.add(obj("c", labels={"app": "web"}))
    assert sorted(store.index_keys("app", "web")) == ["ns/a", "ns/c"]
    with pytest.raises(ValueError, match="indexer conflict: app"):
        store.add_indexers({"app": by_label_app})
    assert set(store.get_indexers()) == {"app"}


def test_concurrent_writers_and_readers_keep_index_consistent() -> None:
    store = new_indexer()
    errors: list[BaseException] = []
    start = threading.Barrier(9)

    def writer(w: int) -> None:
        start.wait()
        for i in range(400):
            name = f"o{i % 50}"
            app = "web" if (i + w) % 2 else "db"
            if i % 7 == 0:
                store.delete(obj(name, f"n{w % 2}"))
            else:
                store.update(obj(name, f"n{w % 2}", labels={"app": app}))

    def reader() -> None:
        start.wait()
        for _ in range(400):
            try:
                for key in store.index_keys("app", "web"):
                    got = store.get_by_key(key)
                    assert got is None or got.metadata.labels is not None
                for o in store.by_index(NAMESPACE_INDEX, "n0"):
                    assert o.metadata.namespace == "n0"
            except BaseException as err:  # pragma: no cover - reported below
                errors.append(err)
                return

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
        assert not t.is_alive()
    assert errors == []
    # The indices agree exactly with the stored objects.
    items = {meta_namespace_key_func(o): o for o in store.list()}
    for app in ("web", "db"):
        expected = {k for k, o in items.items() if by_label_app(o) == [app]}
        assert set(store.index_keys("app", app)) == expected
    for ns in ("n0", "n1"):
        assert set(store.index_keys(NAMESPACE_INDEX, ns)) == {
            k for k, o in items.items() if o.metadata.namespace == ns
        }


def index_contents(indexer: Indexer[Obj], name: str) -> dict[str, list[str]]:
    return {
        value: sorted(indexer.index_keys(name, value))
        for value in indexer.list_index_func_values(name)
    }


def test_the_namespace_index_read_from_keys_files_as_the_object_says() -> None:
    """A store keyed by namespace/name reads its namespace index from the key: every write
    leaves it as filing by the objects themselves (through another function) leaves it."""
    from_keys: Indexer[Obj] = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    by_object: Indexer[Obj] = Indexer(
        indexers={NAMESPACE_INDEX: lambda o: meta_namespace_index_func(o)}
    )
    first = [obj("a", "ns1"), obj("b", "ns2"), obj("node", None), obj("c", "ns1")]
    steps = [
        lambda s: s.replace(first),
        lambda s: s.add(obj("d", "ns3")),
        lambda s: s.update(obj("a", "ns1", rv="2")),
        lambda s: s.delete(obj("b", "ns2")),
        lambda s: s.delete_by_key("node"),
        lambda s: s.put_by_key("other", obj("other", None)),
        lambda s: s.replace_by_keys({"ns4/e": obj("e", "ns4"), "cluster": obj("cluster", None)}),
    ]
    for step in steps:
        step(from_keys)
        step(by_object)
        assert index_contents(from_keys, NAMESPACE_INDEX) == index_contents(
            by_object, NAMESPACE_INDEX
        )
    assert index_contents(from_keys, NAMESPACE_INDEX) == {"": ["cluster"], "ns4": ["ns4/e"]}


def test_the_namespace_index_of_a_store_keyed_otherwise_reads_the_objects() -> None:
    indexer: Indexer[Obj] = Indexer(
        lambda o: o.metadata.name, {NAMESPACE_INDEX: meta_namespace_index_func}
    )
    indexer.replace([obj("a", "ns1"), obj("b", "ns2"), obj("c", None)])
    assert index_contents(indexer, NAMESPACE_INDEX) == {"": ["c"], "ns1": ["a"], "ns2": ["b"]}


def test_indexers_added_while_the_content_is_replaced_index_the_new_content() -> None:
    """``replace_by_keys`` builds its indices outside the lock; indexers added meanwhile are
    built over the new content before it is swapped in, never left out."""
    indexer: Indexer[Obj] = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    contents = [
        {f"ns{n % 3}/o{i}": obj(f"o{i}", f"ns{n % 3}", spec=str(i % 5)) for i in range(200)}
        for n in range(4)
    ]
    done = threading.Event()

    def replace() -> None:
        n = 0
        while not done.is_set():
            indexer.replace_by_keys(dict(contents[n % 4]))
            n += 1

    writer = threading.Thread(target=replace)
    writer.start()
    try:
        for i in range(50):
            indexer.add_indexers({f"spec{i}": lambda o: [o.spec]})
    finally:
        done.set()
        writer.join(10)
    assert not writer.is_alive()
    keys = indexer.list_keys()
    for i in range(50):
        filed = index_contents(indexer, f"spec{i}")
        assert sorted(k for ks in filed.values() for k in ks) == sorted(keys)
    namespace = keys[0].partition("/")[0]
    assert index_contents(indexer, NAMESPACE_INDEX) == {namespace: sorted(keys)}
