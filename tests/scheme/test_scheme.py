"""Scheme (kind ⇄ class) and RESTMapper (resource ⇄ kind) lookups and their errors."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest
from pydantic import Field

from kgen_runtime.groupversion import GroupVersionKind, GroupVersionResource
from kgen_runtime.meta import FieldRules, KubeList, KubeModel, KubeObject, Status, Unstructured
from kgen_runtime.resource import Resource
from kgen_runtime.scheme import (
    AlreadyRegisteredError,
    AmbiguousResourceError,
    NoResourceMatchError,
    NotRegisteredError,
    RESTMapper,
    Scheme,
    Scope,
)

GROUP = "samplecontroller.k8s.io"
FOO_V1 = GroupVersionKind(GROUP, "v1alpha1", "Foo")
FOO_V2 = GroupVersionKind(GROUP, "v1beta1", "Foo")


class Foo(KubeObject):
    __kgen_rules__: ClassVar = {"spec": FieldRules(required=True)}
    api_version: str = Field(
        default=f"{GROUP}/v1alpha1", validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "Foo"
    spec: dict[str, Any] | None = None


class FooList(KubeList[Foo]):
    kind: str = "FooList"


class Bar(KubeObject):
    kind: str = "Bar"


class BarList(KubeList[Bar]):
    kind: str = "BarList"


def resource(
    group: str = GROUP,
    version: str = "v1alpha1",
    kind: str = "Foo",
    plural: str = "foos",
    model: type[KubeModel] = Foo,
    list_model: type[KubeModel] = FooList,
    namespaced: bool = True,
    short_names: tuple[str, ...] = ("fo",),
) -> Resource[Any]:
    return Resource(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        model=model,
        list_model=list_model,
        short_names=short_names,
    )


FOO = resource()


@pytest.fixture
def scheme() -> Scheme:
    s = Scheme()
    s.add_resource(FOO)
    return s


def test_new_scheme_knows_status() -> None:
    s = Scheme()
    status_gvk = GroupVersionKind("", "v1", "Status")
    assert s.class_for(status_gvk) is Status
    assert s.object_kind(Status()) == status_gvk
    assert s.all_known_types() == {status_gvk: Status}


def test_add_resource_registers_kind_and_list_kind(scheme: Scheme) -> None:
    foo_list = GroupVersionKind(GROUP, "v1alpha1", "FooList")
    assert scheme.class_for(FOO_V1) is Foo
    assert scheme.class_for(foo_list) is FooList
    assert scheme.object_kind(Foo) == FOO_V1
    assert scheme.object_kind(Foo(spec={})) == FOO_V1
    assert scheme.object_kind(FooList()) == foo_list
    assert scheme.recognizes(FOO_V1) and not scheme.recognizes(FOO_V2)
    assert scheme.resources() == [FOO]
    assert list(scheme.all_known_types()) == [
        GroupVersionKind("", "v1", "Status"),
        FOO_V1,
        foo_list,
    ]


def test_adding_the_same_things_again_is_a_no_op(scheme: Scheme) -> None:
    before = scheme.all_known_types()
    scheme.add_resource(resource())
    scheme.add_known_type(FOO_V1, Foo)
    assert scheme.all_known_types() == before
    assert scheme.resources() == [FOO]


def test_new_builds_an_empty_object_without_construction_rules(scheme: Scheme) -> None:
    scheme.add_known_type(FOO_V2, Foo)
    obj = scheme.new(FOO_V2)
    assert type(obj) is Foo
    assert obj.model_dump() == {"apiVersion": f"{GROUP}/v1beta1", "kind": "Foo", "metadata": {}}
    with pytest.raises(NotRegisteredError):
        scheme.new(GroupVersionKind(GROUP, "v1", "Nope"))


def test_class_registered_under_two_versions(scheme: Scheme) -> None:
    scheme.add_known_type(FOO_V2, Foo)
    assert scheme.object_kind(Foo) == FOO_V1
    assert scheme.object_kind(Foo(api_version=f"{GROUP}/v1beta1", spec={})) == FOO_V2
    assert scheme.object_kind(Foo(api_version="other/v9", spec={})) == FOO_V1


def test_unstructured_objects_name_their_own_kind(scheme: Scheme) -> None:
    obj = Unstructured(api_version="x.io/v1", kind="Thing")
    assert scheme.object_kind(obj) == GroupVersionKind("x.io", "v1", "Thing")
    with pytest.raises(NotRegisteredError, match=r"Unstructured is not registered.*no apiVersion"):
        scheme.object_kind(Unstructured(kind="Thing"))
    with pytest.raises(NotRegisteredError, match="type Unstructured is not registered"):
        scheme.object_kind(Unstructured)


def test_unregistered_class_error_names_it(scheme: Scheme) -> None:
    with pytest.raises(NotRegisteredError) as info:
        scheme.object_kind(Bar)
    assert info.value.cls is Bar
    assert str(info.value) == "type Bar is not registered in the scheme"


def test_not_registered_error_lists_the_group(scheme: Scheme) -> None:
    missing = GroupVersionKind(GROUP, "v1alpha1", "Fooo")
    with pytest.raises(NotRegisteredError) as info:
        scheme.class_for(missing)
    assert info.value.gvk == missing
    assert str(info.value) == (
        f"no kind is registered for {GROUP}/v1alpha1, Kind=Fooo; registered in group "
        f'"{GROUP}": {GROUP}/v1alpha1, Kind=Foo; {GROUP}/v1alpha1, Kind=FooList'
    )
    with pytest.raises(NotRegisteredError, match=r'registered in group "empty\.io": nothing'):
        scheme.class_for(GroupVersionKind("empty.io", "v1", "X"))
    with pytest.raises(NotRegisteredError, match="in the core group: v1, Kind=Status"):
        scheme.class_for(GroupVersionKind("", "v1", "Pod"))


def test_registration_conflicts(scheme: Scheme) -> None:
    with pytest.raises(AlreadyRegisteredError, match="already registered as Foo, not Bar"):
        scheme.add_known_type(FOO_V1, Bar)
    with pytest.raises(AlreadyRegisteredError, match="different resource"):
        scheme.add_resource(resource(plural="foosies"))
    conflicting_list = resource(version="v2", model=Bar, list_model=FooList)
    scheme.add_known_type(GroupVersionKind(GROUP, "v2", "FooList"), BarList)
    with pytest.raises(AlreadyRegisteredError):
        scheme.add_resource(conflicting_list)
    assert not scheme.recognizes(GroupVersionKind(GROUP, "v2", "Foo")), "no partial registration"
    assert scheme.resources() == [FOO]


def test_registration_rejects_non_objects() -> None:
    s = Scheme()
    with pytest.raises(TypeError, match="represents any kind"):
        s.add_known_type(GroupVersionKind("x", "v1", "Thing"), Unstructured)
    with pytest.raises(TypeError, match="not an APIObject"):
        s.add_known_type(GroupVersionKind("x", "v1", "Thing"), KubeModel)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="incomplete kind"):
        s.add_known_type(GroupVersionKind("x", "", "Thing"), Bar)
    with pytest.raises(TypeError, match="must be APIObject classes"):
        s.add_resource(resource(list_model=KubeModel))


def test_all_known_types_is_a_snapshot(scheme: Scheme) -> None:
    snapshot = scheme.all_known_types()
    snapshot.clear()
    assert scheme.recognizes(FOO_V1)


def test_concurrent_registration_and_lookup() -> None:
    s = Scheme()
    kinds = [GroupVersionKind(f"g{i % 7}.io", f"v{i % 3 + 1}", f"Kind{i}") for i in range(400)]
    classes = [type(f"Kind{i}", (KubeObject,), {}) for i in range(400)]
    errors: list[BaseException] = []
    done = threading.Event()

    def register(offset: int) -> None:
        try:
            for gvk, cls in zip(kinds[offset::8], classes[offset::8], strict=True):
                s.add_known_type(gvk, cls)
                assert s.class_for(gvk) is cls
                assert s.object_kind(cls) == gvk
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def read() -> None:
        try:
            while not done.is_set():
                for gvk in s.all_known_types():
                    s.class_for(gvk)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    writers = [threading.Thread(target=register, args=(i,)) for i in range(8)]
    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(timeout=20)
    done.set()
    for t in readers:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in writers + readers)
    assert errors == []
    assert len(s.all_known_types()) == 401
    assert all(s.class_for(gvk) is cls for gvk, cls in zip(kinds, classes, strict=True))


# RESTMapper ------------------------------------------------------------------------------


def mapper() -> RESTMapper:
    return RESTMapper(
        [
            FOO,
            resource(version="v1beta1"),
            resource(group="", version="v1", kind="Pod", plural="pods", short_names=("po",)),
            resource(group="other.io", version="v1", kind="Pod", plural="pods", short_names=()),
            resource(
                group="a.io",
                version="v1",
                kind="Bar",
                plural="bars",
                namespaced=False,
                short_names=(),
            ),
            resource(group="b.io", version="v1", kind="Bar", plural="bars", short_names=("b",)),
        ]
    )


@pytest.mark.parametrize(
    "name", ["foos", "foo", "fo", "Foo", "FOOS", f"foos.{GROUP}", f"fo.v1alpha1.{GROUP}"]
)
def test_find_by_any_name(name: str) -> None:
    assert mapper().find(name) == FOO


def test_find_with_version_and_group_in_the_name() -> None:
    m = mapper()
    assert m.find(f"foos.v1beta1.{GROUP}").version == "v1beta1"
    assert m.find("pods.v1.other.io").group == "other.io"
    with pytest.raises(NoResourceMatchError, match=r"in group 'v9\.other\.io'"):
        m.find("pods.v9.other.io")


def test_kind_for_prefers_the_first_version_added() -> None:
    m = mapper()
    assert m.kind_for(GroupVersionResource(GROUP, "", "foos")) == FOO_V1
    assert m.kind_for(GroupVersionResource("", "", "foos")) == FOO_V1
    assert m.kind_for(GroupVersionResource(GROUP, "v1beta1", "foos")) == FOO_V2
    assert m.find("foo", version="v1beta1").gvk == FOO_V2


def test_core_group_wins_for_an_empty_group() -> None:
    m = mapper()
    assert m.find("pods").group == ""
    assert m.find("po").group == ""
    assert m.find("pods", group="other.io").group == "other.io"
    assert m.find("pods.other.io").group == "other.io"


def test_ambiguous_names() -> None:
    with pytest.raises(AmbiguousResourceError) as info:
        mapper().find("bars")
    assert [r.group for r in info.value.candidates] == ["a.io", "b.io"]
    assert str(info.value) == "'bars' matches several resources: a.io/v1, Resource=bars; " + (
        "b.io/v1, Resource=bars"
    )
    assert mapper().find("b").group == "b.io"


def test_no_match_errors() -> None:
    m = mapper()
    with pytest.raises(NoResourceMatchError, match="no resource named 'nopes'"):
        m.find("nopes")
    with pytest.raises(NoResourceMatchError, match=r"'foos' in group 'x\.io' at version 'v1'"):
        m.kind_for(GroupVersionResource("x.io", "v1", "foos"))
    with pytest.raises(NoResourceMatchError, match="no resource is known for"):
        m.resource_for(GroupVersionKind(GROUP, "v9", "Foo"))


def test_resource_for_and_scope() -> None:
    m = mapper()
    assert m.resource_for(FOO_V1) == FOO
    assert m.resource_for(FOO_V2).version == "v1beta1"
    assert m.resource_for(GroupVersionKind(GROUP, "", "Foo")) == FOO, "preferred version"
    with pytest.raises(NoResourceMatchError, match="no resource is known for"):
        m.resource_for(GroupVersionKind("nope.io", "", "Foo"))
    assert m.scope_for(FOO_V1) is Scope.NAMESPACED
    assert m.scope_for(GroupVersionKind("a.io", "v1", "Bar")) is Scope.CLUSTER
    assert [r.gvr.resource for r in m.resources()][:2] == ["foos", "foos"]


def test_mapper_add_conflict_and_idempotence() -> None:
    m = RESTMapper([FOO])
    m.add(resource())
    with pytest.raises(AlreadyRegisteredError, match="already mapped to resource"):
        m.add(resource(plural="foosies"))
    assert m.resources() == [FOO]


def test_mapper_from_scheme(scheme: Scheme) -> None:
    assert RESTMapper(scheme.resources()).find("fo") == FOO
