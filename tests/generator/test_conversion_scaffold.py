"""Generated conversion scaffolding: which paths the schemas decide, the generated
``conversion`` modules, and the spokes they build (Go's conversion-gen, in kgen's shape)."""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kgen import ir
from kgen.generate import generate, load_package
from kgen_runtime.webhook import Converter

from .conftest import CORPUS, MYPY_CACHE, REPO, requires_corpus
from .test_names import check_tools

GROUP = "example.com"
HUB = f"{GROUP}/v1"
SPOKE = f"{GROUP}/v2"
STASH = "conversion.kgen.io/widget-fields"


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


_STR = {"type": "string"}
_INT = {"type": "integer"}


def _crd(hub: dict[str, Any], spoke: dict[str, Any], *, kind: str = "Widget") -> dict[str, Any]:
    """A CRD whose v1 (storage: the hub) and v2 (a spoke) have the ``spec`` schemas given."""

    def version(name: str, spec: dict[str, Any], storage: bool) -> dict[str, Any]:
        return {"name": name, "served": True, "storage": storage,
                "schema": {"openAPIV3Schema": _obj(spec=spec, status=_obj(ready={
                    "type": "boolean"}))}}

    plural = f"{kind.lower()}s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "names": {"kind": kind, "plural": plural},
                 "scope": "Namespaced",
                 "versions": [version("v1", hub, True), version("v2", spoke, False)]},
    }


def _conversion(tmp_path: Path, hub: dict[str, Any], spoke: dict[str, Any]) -> ir.Conversion:
    source = tmp_path / "crd.yaml"
    source.write_text(yaml.safe_dump(_crd(hub, spoke)))
    package = load_package([source], "pkg")
    hub_gv, spoke_gv = package.group_versions
    assert hub_gv.conversions == ()
    (conversion,) = spoke_gv.conversions
    return conversion


def _paths(conversion: ir.Conversion) -> dict[str, tuple[ir.FieldPath, ...]]:
    return {name: getattr(conversion, name)
            for name in ("automatic", "hub_only", "spoke_only", "changed")}


# -- what the schemas decide ---------------------------------------------------------------------


def test_identical_versions_convert_whole_objects(tmp_path: Path) -> None:
    spec = _obj(size=_INT, nested=_obj(a=_STR, b={"type": "array", "items": _STR}))
    assert _paths(_conversion(tmp_path, spec, spec)) == {
        "automatic": (("spec",), ("status",)), "hub_only": (), "spoke_only": (), "changed": ()}


def test_added_removed_and_renamed_fields_are_undecided(tmp_path: Path) -> None:
    hub = _obj(size=_INT, legacy=_STR, oldName=_STR)
    spoke = _obj(size=_INT, extra=_STR, newName=_STR)
    assert _paths(_conversion(tmp_path, hub, spoke)) == {
        "automatic": (("spec", "size"), ("status",)),
        "hub_only": (("spec", "legacy"), ("spec", "oldName")),
        "spoke_only": (("spec", "extra"), ("spec", "newName")),
        "changed": (),
    }


def test_a_changed_type_is_undecided_but_an_enum_of_the_same_type_is_not(
    tmp_path: Path,
) -> None:
    hub = _obj(size=_INT, mode=_STR, port=_INT, ratio={"type": "number"},
               target={"x-kubernetes-int-or-string": True})
    spoke = _obj(size=_STR, mode={"type": "string", "enum": ["a", "b"]},
                 port={"type": "integer", "maximum": 9}, ratio=_INT, target=_obj(x=_STR))
    assert _paths(_conversion(tmp_path, hub, spoke)) == {
        "automatic": (("spec", "mode"), ("spec", "port"), ("status",)),
        "hub_only": (), "spoke_only": (),
        "changed": (("spec", "ratio"), ("spec", "size"), ("spec", "target")),
    }


def test_nested_objects_list_items_and_map_values_are_compared_inside(tmp_path: Path) -> None:
    def spec(item_field: str, value_type: dict[str, Any], deep: dict[str, Any]) -> dict[str, Any]:
        return _obj(
            same=_obj(a=_STR),
            outer=_obj(keep=_INT, inner=_obj(keep=_STR, deep=deep)),
            ports={"type": "array", "items": _obj(port=_INT, **{item_field: _STR})},
            labels={"type": "object", "additionalProperties": _obj(v=_STR, w=value_type)},
            names={"type": "array", "items": _STR if item_field == "old" else _INT},
        )

    hub = spec("old", _STR, _INT)
    spoke = spec("new", _INT, _STR)
    assert _paths(_conversion(tmp_path, hub, spoke)) == {
        "automatic": (
            ("spec", "labels", None, "v"),
            ("spec", "outer", "inner", "keep"),
            ("spec", "outer", "keep"),
            ("spec", "ports", None, "port"),
            ("spec", "same"),
            ("status",),
        ),
        "hub_only": (("spec", "ports", None, "old"),),
        "spoke_only": (("spec", "ports", None, "new"),),
        "changed": (
            ("spec", "labels", None, "w"),
            ("spec", "names"),
            ("spec", "outer", "inner", "deep"),
        ),
    }


def test_only_hub_only_paths_outside_lists_and_maps_are_stashable(tmp_path: Path) -> None:
    hub = _obj(gone=_STR, items={"type": "array", "items": _obj(gone=_STR, kept=_STR)})
    spoke = _obj(items={"type": "array", "items": _obj(kept=_STR)})
    conversion = _conversion(tmp_path, hub, spoke)
    assert conversion.hub_only == (("spec", "gone"), ("spec", "items", None, "gone"))
    assert conversion.stashable == (("spec", "gone"),)


def test_single_version_kinds_and_the_openapi_built_ins_have_no_conversion(
    tmp_path: Path,
) -> None:
    crd = _crd(_obj(), _obj())
    crd["spec"]["versions"][1]["served"] = False
    source = tmp_path / "crd.yaml"
    source.write_text(yaml.safe_dump(crd))
    (gv,) = load_package([source], "pkg").group_versions
    assert gv.conversions == ()
    assert not list((REPO / "runtime/kgen_runtime/api").rglob("conversion.py"))


# -- the generated module and the spokes it builds -----------------------------------------------

_HUB_SPEC = _obj(size=_INT, oldName=_STR, legacy=_STR, note=_STR)
_SPOKE_SPEC = _obj(size=_INT, newName=_STR)


@contextlib.contextmanager
def _imported(
    tmp_path: Path, hub: dict[str, Any], spoke: dict[str, Any]
) -> Iterator[tuple[Path, ModuleType, ModuleType]]:
    """A package of one Widget with v1 (hub) and v2 (spoke) ``spec`` schemas: its directory,
    the hub's models module and the spoke's conversion module."""
    name = f"kgen_conversion_{id(tmp_path)}"
    source = tmp_path / "crd.yaml"
    source.write_text(yaml.safe_dump(_crd(hub, spoke)))
    generate([source], tmp_path / name, name)
    sys.path.insert(0, str(tmp_path))
    try:
        yield (tmp_path / name, importlib.import_module(f"{name}.example.v1.models"),
               importlib.import_module(f"{name}.example.v2.conversion"))
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[tuple[Path, ModuleType, ModuleType]]:
    with _imported(tmp_path, _HUB_SPEC, _SPOKE_SPEC) as package:
        yield package


def test_the_conversion_module_lists_what_it_found(
    generated: tuple[Path, ModuleType, ModuleType],
) -> None:
    package_dir, _, conversion = generated
    text = (package_dir / "example/v2/conversion.py").read_text()
    assert text.startswith("# Code generated by kgen")
    assert ("Converted automatically (with metadata): spec.size, status.\n\n"
            "Left to to_hub/from_hub (the schemas cannot decide):\n"
            "- spec.legacy: only in v1\n- spec.newName: only in v2\n"
            "- spec.note: only in v1\n- spec.oldName: only in v1\n") in text
    assert conversion.__all__ == ["WIDGET_SCAFFOLD", "WidgetStashable", "widget_spoke"]
    assert conversion.WIDGET_SCAFFOLD.stashable == ("spec.legacy", "spec.note", "spec.oldName")
    assert not (package_dir / "example/v1/conversion.py").exists()


def test_a_spoke_with_undecided_paths_is_refused_without_its_functions(
    generated: tuple[Path, ModuleType, ModuleType],
) -> None:
    _, _, conversion = generated
    with pytest.raises(TypeError) as refused:
        conversion.widget_spoke(to_hub=lambda source, hub: None)
    assert str(refused.value) == (
        "widget_spoke: from_hub required: the schemas cannot decide spec.legacy (only in v1); "
        "spec.newName (only in v2); spec.note (only in v1); spec.oldName (only in v1)")
    with pytest.raises(TypeError) as refused:
        conversion.widget_spoke(stash=("spec.legacy", "spec.note"))
    assert str(refused.value) == (
        "widget_spoke: to_hub and from_hub required: the schemas cannot decide "
        "spec.newName (only in v2); spec.oldName (only in v1)")
    with pytest.raises(TypeError) as refused:
        conversion.widget_spoke(stash=("spec.size",))
    assert str(refused.value) == (
        "widget_spoke: cannot stash spec.size: stash takes hub-only paths outside lists and "
        "maps (spec.legacy, spec.note, spec.oldName)")


def _rename_to_hub(source: Any, hub: Any) -> None:
    if source.spec is not None and source.spec.new_name is not None:
        hub.spec.old_name = source.spec.new_name


def _rename_from_hub(source: Any, spoke: Any) -> None:
    if source.spec is not None and source.spec.old_name is not None:
        spoke.spec.new_name = source.spec.old_name


def test_the_user_writes_only_the_rename_and_stashes_the_rest(
    generated: tuple[Path, ModuleType, ModuleType],
) -> None:
    _, hub_models, conversion = generated
    spoke = conversion.widget_spoke(to_hub=_rename_to_hub, from_hub=_rename_from_hub,
                                    stash=("spec.legacy", "spec.note"))
    converter = Converter.of(hub_models.Widget, spoke)
    hub = {"apiVersion": HUB, "kind": "Widget",
           "metadata": {"name": "w", "annotations": {"team": "a"}},
           "spec": {"size": 3, "oldName": "x", "legacy": "l", "note": None},
           "status": {"ready": True}}
    there = converter.convert(dict(hub), SPOKE)
    assert there == {"apiVersion": SPOKE, "kind": "Widget",
                     "metadata": {"name": "w", "annotations": {
                         "team": "a", STASH: '{"spec.legacy":"l"}'}},
                     "spec": {"size": 3, "newName": "x"}, "status": {"ready": True}}
    back = converter.convert(there, HUB)
    assert back == {**hub, "spec": {"size": 3, "oldName": "x", "legacy": "l"}}


def test_the_spoke_converts_lists_and_maps_item_by_item(tmp_path: Path) -> None:
    ports = {"type": "array", "items": _obj(port=_INT, old=_STR)}
    spoke_ports = {"type": "array", "items": _obj(port=_INT)}
    labels = {"type": "object", "additionalProperties": _obj(v=_STR, w=_STR)}
    spoke_labels = {"type": "object", "additionalProperties": _obj(v=_STR)}
    with _imported(tmp_path, _obj(ports=ports, labels=labels),
                   _obj(ports=spoke_ports, labels=spoke_labels)) as (_, hub_models, conversion):
        dropped: list[str] = []
        spoke = conversion.widget_spoke(
            to_hub=lambda source, hub: None,
            from_hub=lambda source, spoke: dropped.extend(
                p.old for p in source.spec.ports if p.old is not None))
        converter = Converter.of(hub_models.Widget, spoke)
        hub = {"apiVersion": HUB, "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"ports": [{"port": 1, "old": "a"}, {"port": 2}],
                        "labels": {"k": {"v": "1", "w": "2"}}}}
        assert converter.convert(hub, SPOKE)["spec"] == {
            "ports": [{"port": 1}, {"port": 2}], "labels": {"k": {"v": "1"}}}
        assert dropped == ["a"]


def test_a_spoke_without_differences_needs_no_functions(tmp_path: Path) -> None:
    with _imported(tmp_path, _obj(size=_INT), _obj(size=_INT)) as (
        package_dir, hub_models, conversion,
    ):
        text = (package_dir / "example/v2/conversion.py").read_text()
        assert "stash" not in text.split("def widget_spoke(")[1]  # nothing to stash
        converter = Converter.of(hub_models.Widget, conversion.widget_spoke())
        obj = {"apiVersion": SPOKE, "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"size": 2}, "status": {"ready": False}}
        assert converter.convert(obj, HUB) == {**obj, "apiVersion": HUB}


# -- the generated code's quality ----------------------------------------------------------------


_USAGE = '''
from pkg.example.v1.models import Widget
from pkg.example.v2 import models as v2
from pkg.example.v2.conversion import widget_spoke


def to_hub(source: v2.Widget, hub: Widget) -> None:
    pass


def from_hub(source: Widget, spoke: v2.Widget) -> None:
    pass


widget_spoke(to_hub=to_hub, from_hub=from_hub, stash=("spec.legacy",))
widget_spoke(to_hub=from_hub, from_hub=from_hub, stash=("spec.size",))
'''


def test_generated_conversion_passes_mypy_strict_and_ruff_and_types_the_factory(
    tmp_path: Path,
) -> None:
    source = tmp_path / "crd.yaml"
    source.write_text(yaml.safe_dump(_crd(_HUB_SPEC, _SPOKE_SPEC)))
    generate([source], tmp_path / "pkg", "pkg")
    check_tools(tmp_path / "pkg")
    (tmp_path / "usage.py").write_text(_USAGE)
    errors = _mypy_errors(tmp_path, "usage.py")
    assert errors == [
        'Argument "to_hub" to "widget_spoke" has incompatible type "Callable[['
        'pkg.example.v1.models.Widget, pkg.example.v2.models.Widget], None]"; expected '
        '"Callable[[pkg.example.v2.models.Widget, pkg.example.v1.models.Widget], None] | None"'
        "  [arg-type]",
        'Argument "stash" to "widget_spoke" has incompatible type '
        "\"tuple[Literal['spec.size']]\"; expected "
        "\"Sequence[Literal['spec.legacy', 'spec.note', 'spec.oldName']]\"  [arg-type]",
    ]


def _mypy_errors(cwd: Path, *paths: str) -> list[str]:
    run = subprocess.run(
        [Path(sys.executable).parent / "mypy", "--strict", "--cache-dir", MYPY_CACHE, *paths],
        capture_output=True, text=True, cwd=cwd, check=False,
        env={**os.environ, "MYPYPATH": str(REPO / "runtime")},
    )
    return [line.split(": error: ")[1] for line in run.stdout.splitlines()
            if ": error: " in line]


def test_kinds_sharing_a_hub_module_import_it_once(tmp_path: Path) -> None:
    source = tmp_path / "crds.yaml"
    source.write_text(yaml.safe_dump_all([_crd(_obj(a=_INT), _obj(b=_INT)),
                                          _crd(_obj(), _obj(), kind="Gadget")]))
    generate([source], tmp_path / "pkg", "pkg")
    package = load_package([source], "pkg")
    gadget, widget = package.group_versions[1].conversions
    assert (gadget.factory, widget.factory) == ("gadget_spoke", "widget_spoke")
    assert gadget.hub_alias == widget.hub_alias == "example_v1"
    text = (tmp_path / "pkg/example/v2/conversion.py").read_text()
    assert text.count("import models as example_v1\n") == 1
    check_tools(tmp_path / "pkg")


def test_regeneration_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs from empty caches, the CRD's versions listed in opposite orders."""
    crd = _crd(_HUB_SPEC, _SPOKE_SPEC)
    for name in ("one", "two"):
        monkeypatch.setenv("KGEN_CACHE_DIR", str(tmp_path / f"cache-{name}"))
        source = tmp_path / f"{name}.yaml"
        source.write_text(yaml.safe_dump(crd))
        generate([source], tmp_path / f"{name}/pkg", "pkg")
        crd["spec"]["versions"].reverse()
    first = (tmp_path / "one/pkg/example/v2/conversion.py").read_bytes()
    assert first == (tmp_path / "two/pkg/example/v2/conversion.py").read_bytes()


# -- the corpus ----------------------------------------------------------------------------------


def _multi_version_files() -> list[Path]:
    lines = (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]
    return [CORPUS / columns[0] for columns in (line.split("\t") for line in lines)
            if "multi-version" in columns[6].split(",")]


@requires_corpus
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_every_multi_version_crd_of_the_corpus_gets_conversions_that_import_and_type_check(
    tmp_path: Path,
) -> None:
    files = _multi_version_files()
    assert len(files) >= 10
    result = generate(files, tmp_path / "multi", "multi")
    modules = [gv for gv in result.package.group_versions if gv.conversions]
    assert len(modules) >= 5
    sys.path.insert(0, str(tmp_path))
    try:
        for gv in modules:
            module = importlib.import_module(f"multi.{'.'.join(gv.module)}.conversion")
            for conversion in gv.conversions:
                scaffold = getattr(module, conversion.scaffold)
                assert scaffold.kind == conversion.kind
                factory = getattr(module, conversion.factory)
                if not (conversion.hub_only or conversion.spoke_only or conversion.changed):
                    factory()  # nothing undecided: builds without functions
                else:
                    with pytest.raises(TypeError, match="required: the schemas cannot decide"):
                        factory()
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "multi" or m.startswith("multi.")]:
            del sys.modules[name]
    paths = sorted(str(tmp_path / "multi" / "/".join(gv.module) / "conversion.py")
                   for gv in modules)
    assert _mypy_errors(tmp_path, *paths) == []


# -- round trips (hypothesis) --------------------------------------------------------------------


def test_hub_to_spoke_to_hub_is_lossless_with_the_rename_and_the_stash(
    generated: tuple[Path, ModuleType, ModuleType],
) -> None:
    _, hub_models, conversion = generated
    converter = Converter.of(hub_models.Widget, conversion.widget_spoke(
        to_hub=_rename_to_hub, from_hub=_rename_from_hub,
        stash=("spec.legacy", "spec.note")))
    text = st.text(max_size=8)
    annotations = st.dictionaries(st.sampled_from(["a", "b.io/c"]), text, min_size=1)

    @settings(max_examples=100, deadline=None)
    @given(
        metadata=st.fixed_dictionaries({"name": st.just("w")},
                                       optional={"annotations": annotations}),
        spec=st.none() | st.fixed_dictionaries({}, optional={
            "size": st.integers(), "oldName": text, "legacy": text, "note": text}),
        status=st.none() | st.fixed_dictionaries({"ready": st.booleans()}),
    )
    def round_trip(metadata: dict[str, Any], spec: dict[str, Any] | None,
                   status: dict[str, Any] | None) -> None:
        hub = {"apiVersion": HUB, "kind": "Widget", "metadata": metadata}
        hub |= {key: value for key, value in (("spec", spec), ("status", status))
                if value is not None}
        there = converter.convert(dict(hub), SPOKE)
        assert "legacy" not in there.get("spec", {})
        assert converter.convert(there, HUB) == hub

    round_trip()
