"""Generated apply configurations and merge metadata: their shape and names, unset versus
null, and one per kind of every generated package, the built-ins included."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import kgen_runtime.api
from kgen.generate import generate
from kgen_runtime.apply import (
    UNSET,
    ApplyConfiguration,
    LabelSelectorApplyConfiguration,
    ObjectApplyConfiguration,
    ObjectMetaApplyConfiguration,
)
from kgen_runtime.meta import MergeRules, ObjectMeta, map_type, merge_rules

from .conftest import MYPY_CACHE, REPO, crd
from .test_names import check_names, check_tools, generated

sys.path.insert(0, str(REPO / "examples" / "foo-crd"))
from foo_api.samplecontroller.v1alpha1 import applyconfigurations as foo_apply
from foo_api.samplecontroller.v1alpha1.models import Foo


def test_foo_apply_configurations_declare_the_models_fields_with_their_wire_names() -> None:
    assert foo_apply.__all__ == [
        "FooApplyConfiguration", "FooSpecApplyConfiguration", "FooStatusApplyConfiguration",
        "extract_foo"]
    assert foo_apply.FooSpecApplyConfiguration.__kgen_fields__ == {
        "deployment_name": "deploymentName", "replicas": "replicas"}
    assert foo_apply.FooApplyConfiguration.__kgen_fields__ == {
        "api_version": "apiVersion", "kind": "kind", "metadata": "metadata",
        "spec": "spec", "status": "status"}
    assert issubclass(foo_apply.FooApplyConfiguration, ObjectApplyConfiguration)


def test_unset_fields_are_left_out_and_none_is_sent_as_null() -> None:
    spec = foo_apply.FooSpecApplyConfiguration(replicas=None)
    assert spec.model_dump() == {"replicas": None}
    assert spec.deployment_name is UNSET
    spec.deployment_name = "d"
    spec.replicas = UNSET
    assert spec.model_dump() == {"deploymentName": "d"}
    del spec.deployment_name
    assert spec.model_dump() == {}
    config = foo_apply.FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace="ns"),
        spec=foo_apply.FooSpecApplyConfiguration(replicas=2))
    assert config.model_dump() == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "a", "namespace": "ns"}, "spec": {"replicas": 2}}
    assert foo_apply.FooApplyConfiguration.model_validate(config.model_dump()) == config


def test_a_field_the_class_does_not_declare_is_refused_but_a_wire_key_is_kept() -> None:
    with pytest.raises(AttributeError, match="FooSpecApplyConfiguration has no field 'replica'"):
        foo_apply.FooSpecApplyConfiguration(replica=1)
    read = foo_apply.FooSpecApplyConfiguration.model_validate({"replicas": 1, "newField": "x"})
    assert read.replicas == 1
    assert read.model_dump() == {"replicas": 1, "newField": "x"}


def test_extract_reads_only_the_managers_apply_entry() -> None:
    foo = Foo.model_validate({
        "metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x", "tier": "y"},
                     "managedFields": [
                         {"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1",
                          "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
                                       "f:spec": {"f:replicas": {}}}},
                         {"manager": "m", "operation": "Update", "fieldsType": "FieldsV1",
                          "fieldsV1": {"f:spec": {"f:deploymentName": {}}}},
                         {"manager": "m", "operation": "Apply", "subresource": "status",
                          "fieldsType": "FieldsV1",
                          "fieldsV1": {"f:status": {"f:availableReplicas": {}}}}]},
        "spec": {"deploymentName": "d", "replicas": 3}, "status": {"availableReplicas": 1}})

    assert foo_apply.extract_foo(foo, "m").model_dump() == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x"}},
        "spec": {"replicas": 3}}
    assert foo_apply.extract_foo(foo, "m", "status").model_dump()["status"] == {
        "availableReplicas": 1}
    assert foo_apply.extract_foo(foo, "other").model_dump()["metadata"] == {
        "name": "a", "namespace": "ns"}


_MERGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "properties": {
                      "port": {"type": "integer"}, "protocol": {"type": "string"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                 "items": {"type": "string"}},
        "ref": {"type": "object", "x-kubernetes-map-type": "atomic",
                "properties": {"name": {"type": "string"}}},
        "plain": {"type": "string"},
    }}},
}


def test_crd_list_and_map_types_become_the_models_merge_metadata(
    generate_package: Any,
) -> None:
    module = generate_package(crd("Widget", _MERGE_SCHEMA))
    spec = module.models.WidgetSpec

    assert merge_rules(spec) == {
        "ports": MergeRules(list_type="map", list_map_keys=("port", "protocol")),
        "tags": MergeRules(list_type="set"),
        "ref": MergeRules(map_type="atomic"),
    }
    assert map_type(module.models.WidgetSpecRef) == "atomic"
    assert merge_rules(module.models.Widget) == {}


def test_builtin_models_carry_list_types_and_patch_directives() -> None:
    from kgen_runtime.api.apps.v1.models import DeploymentSpec
    from kgen_runtime.api.core.v1.models import LocalObjectReference, PodSpec

    rules = merge_rules(PodSpec)
    assert rules["containers"] == MergeRules(
        list_type="map", list_map_keys=("name",), patch_strategy="merge",
        patch_merge_key="name")
    assert rules["volumes"].patch_strategy == "merge,retainKeys"
    assert rules["node_selector"] == MergeRules(map_type="atomic")
    assert rules["tolerations"] == MergeRules(list_type="atomic")
    assert map_type(LocalObjectReference) == "atomic"
    assert map_type(ObjectMeta) is None
    assert merge_rules(DeploymentSpec)["strategy"] == MergeRules(patch_strategy="retainKeys")


def _builtin_modules() -> list[tuple[ModuleType, ModuleType, ModuleType]]:
    """(register, models, applyconfigurations) of every built-in group/version with kinds."""
    found = []
    root = Path(kgen_runtime.api.__file__).parent
    for info in pkgutil.walk_packages([str(root)], "kgen_runtime.api."):
        if info.name.endswith(".register"):
            base = info.name.rsplit(".", 1)[0]
            found.append(tuple(importlib.import_module(f"{base}.{m}")
                               for m in ("register", "models", "applyconfigurations")))
    return found  # type: ignore[return-value]


def test_every_builtin_kind_has_an_apply_configuration_and_an_extract_function() -> None:
    modules = _builtin_modules()
    assert len(modules) == 22
    kinds = 0
    for register, _, apply in modules:
        classes = [v for v in vars(apply).values()
                   if isinstance(v, type) and issubclass(v, ApplyConfiguration)
                   and v.__module__ == apply.__name__]
        assert {c.__name__ for c in classes} <= set(apply.__all__)
        for cls in classes:  # every annotation resolves, across group/versions too
            cls.model_validate({})
            assert cls._converters() is not None
        for resource in register.RESOURCES:
            kinds += 1
            config = getattr(apply, f"{resource.model.__name__}ApplyConfiguration")
            extract = [getattr(apply, name) for name in apply.__all__
                       if name.startswith("extract_")
                       and getattr(apply, name).__annotations__["obj"].endswith(
                           f"_models.{resource.model.__name__}")]
            assert len(extract) == 1, resource.kind
            obj = resource.model.model_validate({"metadata": {"name": "x"}})
            assert (config.__kgen_api_version__, config.__kgen_kind__) == (
                obj.api_version, resource.kind)
            extracted = extract[0](obj, "m")
            assert type(extracted) is config
            assert extracted.model_dump() == {
                "apiVersion": obj.api_version, "kind": resource.kind,
                "metadata": {"name": "x"}}
    assert kinds == 68


def test_nested_builtin_apply_configurations_are_typed_from_the_wire() -> None:
    from kgen_runtime.api.apps.v1.applyconfigurations import DeploymentApplyConfiguration
    from kgen_runtime.api.core.v1.applyconfigurations import ContainerApplyConfiguration

    config = DeploymentApplyConfiguration.model_validate({
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}})

    assert isinstance(config.metadata, ObjectMetaApplyConfiguration)
    spec: Any = config.spec
    assert spec.selector == LabelSelectorApplyConfiguration(match_labels={"a": "b"})
    assert spec.template.spec.containers == [ContainerApplyConfiguration(name="c", image="i")]


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
def test_apply_names_collide_with_nothing(tmp_path: Path) -> None:
    """``Object`` would be the runtime's base class (``ObjectMeta`` is the model
    ``ObjectMeta_``) and ``URLMap``/``UrlMap`` share ``extract_url_map``: the IR gives each
    its own name, and the package is clean."""
    kinds = ["Object", "ObjectMeta", "URLMap", "UrlMap", "Foo", "FooApplyConfiguration"]
    with generated(tmp_path, kinds) as (package_dir, package):
        [gv] = package.group_versions
        assert {k.kind: (k.apply_class, k.extract_function) for k in gv.kinds} == {
            "Object": ("ObjectApplyConfiguration_", "extract_object"),
            "ObjectMeta": ("ObjectMeta_ApplyConfiguration", "extract_object_meta"),
            "URLMap": ("URLMapApplyConfiguration", "extract_url_map"),
            "UrlMap": ("UrlMapApplyConfiguration", "extract_url_map_"),
            "Foo": ("FooApplyConfiguration", "extract_foo"),
            "FooApplyConfiguration": (
                "FooApplyConfigurationApplyConfiguration", "extract_foo_apply_configuration"),
        }
        check_names(package_dir, package)
        apply = importlib.import_module(f"{package_dir.name}.example.v1.applyconfigurations")
        assert apply.ObjectApplyConfiguration_.__bases__ == (ObjectApplyConfiguration,)
        assert apply.extract_url_map_.__annotations__["obj"] == "_models.UrlMap"
        check_tools(package_dir)


_USAGE = '''
from foo_api.clientset import Clientset
from foo_api.samplecontroller.v1alpha1.applyconfigurations import (
    FooApplyConfiguration, FooSpecApplyConfiguration, extract_foo)
from kgen_runtime.apply import UNSET, ObjectMetaApplyConfiguration

def use(cs: Clientset) -> None:
    config = FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace="ns"),
        spec=FooSpecApplyConfiguration(replicas=3, deployment_name=None))
    foo = cs.samplecontroller_v1alpha1.foos("ns").apply(config, field_manager="m")
    mine = extract_foo(foo, "m")
    if isinstance(mine.spec, FooSpecApplyConfiguration):
        mine.spec.replicas = UNSET
    FooSpecApplyConfiguration(replicas="three")
    FooSpecApplyConfiguration(replica=3)
'''


def test_mypy_checks_keyword_construction_and_the_clients_apply(tmp_path: Path) -> None:
    (tmp_path / "usage.py").write_text(_USAGE)
    run = subprocess.run(
        [Path(sys.executable).parent / "mypy", "--strict", "--cache-dir", MYPY_CACHE,
         "usage.py"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
        env={**os.environ, "MYPYPATH": f"{REPO / 'runtime'}:{REPO / 'examples' / 'foo-crd'}"},
    )
    errors = [line.split(": error: ")[1] for line in run.stdout.splitlines()
              if ": error: " in line]
    assert errors == [
        'Argument "replicas" to "FooSpecApplyConfiguration" has incompatible type "str"; '
        'expected "int | Unset | None"  [arg-type]',
        'Unexpected keyword argument "replica" for "FooSpecApplyConfiguration"; did you mean '
        '"replicas"?  [call-arg]',
    ], run.stdout + run.stderr


def test_a_kind_without_fields_imports_only_what_its_apply_configuration_uses(
    tmp_path: Path,
) -> None:
    source = tmp_path / "bare.yaml"
    source.write_text(yaml.safe_dump(crd("Bare")))
    generate([source], tmp_path / "bare_pkg", "bare_pkg")
    text = (tmp_path / "bare_pkg/example/v1/applyconfigurations.py").read_text()
    assert "from kgen_runtime.apply import (\n    ObjectApplyConfiguration,\n)" in text
    check_tools(tmp_path / "bare_pkg")
