"""decode / decode_all / encode / encode_yaml through a scheme: round trips and errors."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]
from pydantic import Field

from kgen_runtime.codec import DecodeError, decode, decode_all, encode, encode_yaml
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import (
    KubeList,
    KubeModel,
    KubeObject,
    ObjectMeta,
    Status,
    Unstructured,
    UnstructuredList,
)
from kgen_runtime.scheme import NotRegisteredError, Scheme
from tests.shared import EXAMPLES as EXAMPLES_DIR
from tests.shared import requires_shared

requires_examples = requires_shared(EXAMPLES_DIR)
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.yaml"))
API_VERSION = "samplecontroller.k8s.io/v1alpha1"
FOO = GroupVersionKind("samplecontroller.k8s.io", "v1alpha1", "Foo")


class FooSpec(KubeModel):
    deployment_name: str | None = Field(
        default=None, validation_alias="deploymentName", serialization_alias="deploymentName"
    )
    replicas: int | None = None


class Foo(KubeObject):
    api_version: str = Field(
        default=API_VERSION, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "Foo"
    spec: FooSpec | None = None


class FooList(KubeList[Foo]):
    api_version: str = Field(
        default=API_VERSION, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "FooList"


class Bare(KubeObject):
    """A registered class without apiVersion/kind defaults: encode must fill them."""


@pytest.fixture
def scheme() -> Scheme:
    s = Scheme()
    s.add_known_type(FOO, Foo)
    s.add_known_type(GroupVersionKind(FOO.group, FOO.version, "FooList"), FooList)
    s.add_known_type(GroupVersionKind("bare.io", "v1", "Bare"), Bare)
    return s


FOO_DOC: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": "Foo",
    "metadata": {"name": "a", "labels": None, "creationTimestamp": "2024-05-01T12:00:00Z"},
    "spec": {"deploymentName": None, "replicas": 2, "unknown": {"deep": [1, None, "x"]}},
    "status": None,
}


def test_typed_json_round_trip(scheme: Scheme) -> None:
    raw = orjson.dumps(FOO_DOC)
    obj = decode(raw, scheme)
    assert type(obj) is Foo
    assert obj.spec == FooSpec.model_validate(FOO_DOC["spec"])
    assert orjson.loads(encode(obj, scheme)) == FOO_DOC
    assert decode(raw.decode(), scheme) == obj


def test_type_keys_after_a_long_body_still_decode_typed(scheme: Scheme) -> None:
    late = {"spec": {"deploymentName": "d" * 1000}, "kind": "Foo", "apiVersion": API_VERSION}
    obj = decode(orjson.dumps(late), scheme)
    assert type(obj) is Foo
    assert orjson.loads(encode(obj, scheme)) == {**late, "metadata": {}}


def test_whole_document_wins_over_the_peeked_prefix(scheme: Scheme) -> None:
    raw = b'{"apiVersion": "bare.io/v1", "kind": "Foo", "kind": "Bare"}'
    assert type(decode(raw, scheme)) is Bare


def test_typed_list(scheme: Scheme) -> None:
    data = {
        "apiVersion": API_VERSION,
        "kind": "FooList",
        "metadata": {"resourceVersion": "9"},
        "items": [{"apiVersion": API_VERSION, "kind": "Foo", "metadata": {"name": "a"}}],
    }
    foos = decode(orjson.dumps(data), scheme)
    assert isinstance(foos, FooList) and type(foos.items[0]) is Foo
    assert orjson.loads(encode(foos, scheme)) == data


def test_unknown_kinds_decode_unstructured_losslessly(scheme: Scheme) -> None:
    thing = {"kind": "Thing", "apiVersion": "x.io/v1", "spec": {"a": None}, "metadata": {}}
    obj = decode(orjson.dumps(thing), scheme)
    assert type(obj) is Unstructured
    assert orjson.loads(encode(obj, scheme)) == thing
    things = {"apiVersion": "x.io/v1", "kind": "ThingList", "metadata": {}, "items": [thing]}
    lst = decode(orjson.dumps(things), scheme)
    assert type(lst) is UnstructuredList and type(lst.items[0]) is Unstructured
    assert orjson.loads(encode(lst, scheme)) == things


def test_unstructured_list_items_get_the_list_type(scheme: Scheme) -> None:
    pods = {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {},
        "items": [{"metadata": {"name": "a"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": {}}],
    }
    lst = decode(orjson.dumps(pods), scheme)
    assert isinstance(lst, UnstructuredList)
    assert [(i.api_version, i.kind) for i in lst.items] == [("v1", "Pod"), ("v1", "Pod")]
    assert orjson.loads(encode(lst, scheme))["items"][0] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a"},
    }


def test_status_is_known_by_default() -> None:
    raw = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":404}'
    status = decode(raw, Scheme())
    assert isinstance(status, Status) and status.code == 404


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"metadata": {}}', "missing apiVersion and kind (every object must say its type)"),
        (b'{"apiVersion": "v1"}', "missing kind (every object must say its type)"),
        (b'{"kind": "Foo", "apiVersion": ""}', "missing apiVersion (every object"),
        (b'{"kind": "Foo", "apiVersion": 3}', "missing apiVersion (every object"),
        (b'{"kind": "Foo", "apiVersion": "a/b/c"}', "apiVersion: malformed apiVersion 'a/b/c'"),
        (b"- 1\n- 2\n", "expected a mapping at the top level, found a list"),
        (b"just text", "expected a mapping at the top level, found a string"),
    ],
)
def test_missing_or_malformed_type(raw: bytes, message: str, scheme: Scheme) -> None:
    with pytest.raises(DecodeError) as info:
        decode(raw, scheme)
    assert message in str(info.value)


def test_malformed_json_has_a_position(scheme: Scheme) -> None:
    with pytest.raises(DecodeError) as info:
        decode(b'{"apiVersion": "x.io/v1",\n  "kind": "Thing",\n  "spec": }', scheme)
    assert (info.value.line, info.value.column) == (3, 11)
    assert str(info.value).startswith("line 3, column 11: malformed JSON")


def test_malformed_json_after_a_good_prefix_has_a_position(scheme: Scheme) -> None:
    raw = orjson.dumps(FOO_DOC)[:-1] + b",}"
    with pytest.raises(DecodeError) as info:
        decode(raw, scheme)
    assert info.value.line == 1 and info.value.reason.startswith("malformed JSON")


def test_wrong_value_types_name_the_field(scheme: Scheme) -> None:
    raw = b'{"apiVersion": "%s", "kind": "Foo", "spec": {"replicas": "many"}}' % (
        API_VERSION.encode()
    )
    with pytest.raises(DecodeError) as info:
        decode(raw, scheme)
    assert info.value.path == "spec.replicas"
    assert str(info.value) == (
        "spec.replicas: decoding Foo: Input should be a valid integer, "
        "unable to parse string as an integer"
    )
    with pytest.raises(DecodeError, match=r"metadata\.labels\.a: decoding Unstructured"):
        decode(b'{"apiVersion": "x/v1", "kind": "T", "metadata": {"labels": {"a": 1}}}', scheme)


def test_yaml_type_errors_point_at_the_value(scheme: Scheme) -> None:
    text = (
        "apiVersion: x/v1\nkind: A\n---\n"
        f"apiVersion: {API_VERSION}\nkind: Foo\nspec:\n  deploymentName: d\n  replicas: many\n"
    )
    with pytest.raises(DecodeError) as info:
        decode_all(text, scheme)
    assert (info.value.document, info.value.line, info.value.column) == (1, 8, 13)
    assert info.value.loc == ("spec", "replicas")
    assert str(info.value).startswith("document 1, line 8, column 13: spec.replicas: decoding Foo")
    bad_items = "apiVersion: x/v1\nkind: TList\nitems:\n- metadata: {labels: {a: 1}}\n"
    with pytest.raises(DecodeError) as info:
        decode(bad_items, scheme)
    assert info.value.loc == ("items", 0, "metadata", "labels", "a")
    assert (info.value.line, info.value.column) == (4, 26)


def test_yaml_reads_like_kubernetes(scheme: Scheme) -> None:
    text = """
apiVersion: x.io/v1
kind: Thing
metadata:
  name: t
  creationTimestamp: 2024-05-01T12:00:00Z
spec:
  on: yes
  1: one
  date: 2024-05-01
  quoted: "on"
  nothing: ~
"""
    obj = decode(text, scheme)
    assert obj.model_dump() == {
        "apiVersion": "x.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "creationTimestamp": "2024-05-01T12:00:00Z"},
        "spec": {"true": True, "1": "one", "date": "2024-05-01", "quoted": "on", "nothing": None},
    }


@requires_examples
def test_yaml_typed_decode(scheme: Scheme) -> None:
    path = EXAMPLES_DIR / "kubernetes__sample-controller__foos__example-foo.yaml"
    obj = decode(path.read_bytes(), scheme)
    assert obj == Foo(
        metadata=ObjectMeta(name="example-foo"),
        spec=FooSpec(deployment_name="example-foo", replicas=1),
    )


def test_malformed_yaml_has_a_position(scheme: Scheme) -> None:
    with pytest.raises(DecodeError) as info:
        decode("apiVersion: v1\nkind: Thing\nspec: a: b\n", scheme)
    assert (info.value.line, info.value.column, info.value.document) == (3, 8, 0)
    with pytest.raises(DecodeError, match="found a list as a key"):
        decode("? [a]\n: b\n", scheme)
    assert "malformed YAML: mapping values are not allowed" in str(info.value)


def test_decode_wants_exactly_one_document(scheme: Scheme) -> None:
    with pytest.raises(DecodeError, match="found 2 documents"):
        decode("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n", scheme)
    with pytest.raises(DecodeError, match="found no document"):
        decode("# only a comment\n", scheme)


def test_decode_all_skips_empty_documents_and_locates_errors(scheme: Scheme) -> None:
    text = "---\napiVersion: x/v1\nkind: A\n---\n# nothing\n---\n\n---\napiVersion: x/v1\nkind: B\n"
    assert [o.kind for o in decode_all(text, scheme)] == ["A", "B"]
    bad = "apiVersion: x/v1\nkind: A\n---\napiVersion: x/v1\nkind: B\n---\nmetadata: {}\n"
    with pytest.raises(DecodeError) as info:
        decode_all(bad, scheme)
    assert (info.value.document, info.value.line) == (2, 7)
    assert str(info.value) == (
        "document 2, line 7: missing apiVersion and kind (every object must say its type)"
    )
    assert [type(o) for o in decode_all(orjson.dumps(FOO_DOC), scheme)] == [Foo]


def test_encode_fills_type_from_the_scheme(scheme: Scheme) -> None:
    bare = Bare(metadata=ObjectMeta(name="b"))
    expected = {"apiVersion": "bare.io/v1", "kind": "Bare", "metadata": {"name": "b"}}
    assert orjson.loads(encode(bare, scheme)) == expected
    assert list(orjson.loads(encode(bare, scheme))) == ["apiVersion", "kind", "metadata"]
    assert bare.api_version == "" and bare.kind == "", "encode never mutates its argument"
    assert yaml.safe_load(encode_yaml(bare, scheme)) == expected
    with pytest.raises(NotRegisteredError):
        encode(Unstructured(kind="Thing"), scheme)


def test_encode_yaml_quotes_what_yaml_would_misread(scheme: Scheme) -> None:
    obj = Unstructured.model_validate(
        {
            "apiVersion": "x.io/v1",
            "kind": "Thing",
            "metadata": {"creationTimestamp": "2024-05-01T12:00:00Z"},
            "data": {
                "a": "on",
                "b": "1",
                "c": "null",
                "long": "word " * 99 + "word",
                "d": "2024-05-01",
            },
        }
    )
    text = encode_yaml(obj, scheme)
    assert text.startswith("apiVersion: x.io/v1\nkind: Thing\nmetadata:\n")
    assert "long: " + "word " * 99 + "word\n" in text, "long strings are not folded"
    assert yaml.safe_load(text) == obj.model_dump()
    assert decode(text, scheme) == obj


@requires_examples
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_real_examples_round_trip_losslessly_as_unstructured(path: Path) -> None:
    scheme = Scheme()
    text = path.read_text()
    reference = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    objects = decode_all(text, scheme)
    assert [type(o) for o in objects] == [Unstructured] * len(reference)
    assert [orjson.loads(encode(o, scheme)) for o in objects] == reference
    assert decode_all("---\n".join(encode_yaml(o, scheme) for o in objects), scheme) == objects


def test_concurrent_decoding_is_consistent(scheme: Scheme) -> None:
    documents = [orjson.dumps({**FOO_DOC, "metadata": {"name": f"n{i}"}}) for i in range(50)]
    results: dict[int, list[str | None]] = {}
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            names = []
            for raw in documents:
                obj = decode(raw, scheme)
                assert isinstance(obj, Foo)
                names.append(obj.metadata.name)
            results[worker] = names
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert errors == [] and not any(t.is_alive() for t in threads)
    assert all(names == [f"n{i}" for i in range(50)] for names in results.values())
    assert len(results) == 16
