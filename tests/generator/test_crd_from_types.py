"""``kgen crd``: CRD manifests from hand-written Python types, with every marker.

The API under test is ``crd_api/crdgen_shop`` (Widget v1 and v2 — every field marker — and a
cluster-scoped Gadget); its CRDs are compared byte for byte with ``crd_api/expected``.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from pydantic import ValidationError

from kgen.cli import main
from kgen.crdgen import HEADER, generate_crds, kind_schema, starter_api_module
from kgen.generate import load_package
from kgen_runtime.markers import Maximum, Minimum, Pattern, Required, rules_of
from kgen_runtime.meta import FieldRules, KubeModel

API = Path(__file__).parent / "crd_api"
EXPECTED = API / "expected"


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path`` and ``crd_api`` on sys.path; modules imported from them are forgotten."""
    before = set(sys.modules)
    sys.path[:0] = [str(tmp_path), str(API)]
    yield tmp_path
    del sys.path[:2]
    for name in set(sys.modules) - before:
        module = sys.modules[name]
        origin = getattr(module, "__file__", None) or ""
        if origin.startswith((str(tmp_path), str(API))):
            del sys.modules[name]


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["crd", *map(str, args)])


def shop() -> ModuleType:
    return importlib.import_module("crdgen_shop.v2")


def test_every_marker_gives_the_expected_crds(on_path: Path) -> None:
    out = on_path / "crds"
    result = run("crdgen_shop", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.output == f"{out}: 2 CRDs of 3 kind versions; 2 files written, 0 removed\n"
    expected = sorted(p.name for p in EXPECTED.iterdir())
    assert sorted(p.name for p in out.iterdir()) == expected
    for name in expected:
        assert (out / name).read_text() == HEADER + (EXPECTED / name).read_text(), name


def test_versions_of_a_kind_make_one_crd_with_one_storage_version(on_path: Path) -> None:
    result = generate_crds(["crdgen_shop.v1", "crdgen_shop.v2"], on_path / "crds")
    widgets = yaml.safe_load((on_path / "crds" / "shop.example.com_widgets.yaml").read_text())
    versions = {v["name"]: (v["served"], v["storage"]) for v in widgets["spec"]["versions"]}
    assert versions == {"v1": (True, False), "v2": (True, True)}
    assert [d.name for d in result.kinds] == [
        "crdgen_shop.v1.Widget",
        "crdgen_shop.v2.GadgetObject",
        "crdgen_shop.v2.Widget",
    ]


def test_a_file_path_imports_under_its_package_name(on_path: Path) -> None:
    out = on_path / "crds"
    result = run(API / "crdgen_shop" / "v1.py", API / "crdgen_shop" / "v2.py", "-o", out)
    assert result.exit_code == 0, result.output
    name = "shop.example.com_widgets.yaml"
    assert (out / name).read_text() == HEADER + (EXPECTED / name).read_text()


def test_the_crd_is_one_kgen_generate_reads_back(on_path: Path) -> None:
    out = on_path / "crds"
    generate_crds(["crdgen_shop"], out)
    package = load_package([out], "shop_api")
    kinds = {(gv.version, k.kind, k.namespaced) for gv in package.group_versions for k in gv.kinds}
    assert kinds == {("v1", "Widget", True), ("v2", "Widget", True), ("v1alpha1", "Gadget", False)}


def test_verify_lists_stale_and_missing_files_and_writes_nothing(on_path: Path) -> None:
    out = on_path / "crds"
    missing = run("crdgen_shop", "-o", out, "--verify")
    assert missing.exit_code == 1
    assert missing.output == (
        f"stale: {out / 'shop.example.com_gadgetry.yaml'}\n"
        f"stale: {out / 'shop.example.com_widgets.yaml'}\n"
    )
    assert not out.exists()
    assert run("crdgen_shop", "-o", out).exit_code == 0
    fresh = run("crdgen_shop", "-o", out, "--verify")
    assert (fresh.exit_code, fresh.output) == (0, f"{out}: up to date (2 CRDs, 3 kind versions)\n")
    widgets = out / "shop.example.com_widgets.yaml"
    widgets.write_text(widgets.read_text().replace("maximum: 10", "maximum: 11"))
    (out / "old_things.yaml").write_text(HEADER + "kind: CustomResourceDefinition\n")
    (out / "kustomization.yaml").write_text("resources: []\n")  # not generated: left alone
    stale = run("crdgen_shop", "-o", out, "--verify")
    assert stale.exit_code == 1
    assert stale.output == (
        f"stale: {widgets}\nnot generated any more: {out / 'old_things.yaml'}\n"
    )
    assert "maximum: 11" in widgets.read_text()
    rewritten = run("crdgen_shop", "-o", out)
    assert rewritten.output == f"{out}: 2 CRDs of 3 kind versions; 1 files written, 1 removed\n"
    assert sorted(p.name for p in out.iterdir()) == [
        "kustomization.yaml",
        "shop.example.com_gadgetry.yaml",
        "shop.example.com_widgets.yaml",
    ]


def write_api(root: Path, name: str, body: str) -> str:
    header = (
        "from __future__ import annotations\n"
        "from typing import Annotated, Any\n"
        "from kgen_runtime.markers import MaxLength, Minimum, resource\n"
        "from kgen_runtime.meta import KubeModel, KubeObject\n"
    )
    (root / f"{name}.py").write_text(header + textwrap.dedent(body))
    return name


BAD_INPUTS = {
    "no_kind_decorator": (
        """
        class Thing(KubeObject):
            size: int | None = None
        """,
        "no_kind_decorator.Thing: error: a KubeObject subclass without @resource(group, "
        "version): kgen crd cannot tell its group and version",
    ),
    "two_storage_versions": (
        """
        @resource("x.io", "v1", kind="Thing", storage=True)
        class ThingV1(KubeObject):
            pass

        @resource("x.io", "v2", kind="Thing", storage=True)
        class ThingV2(KubeObject):
            pass
        """,
        "two_storage_versions.ThingV1: error: Thing.x.io needs exactly one storage version "
        "(@resource(..., storage=True)), found two_storage_versions.ThingV1, "
        "two_storage_versions.ThingV2",
    ),
    "no_storage_version": (
        """
        @resource("x.io", "v1", kind="Thing")
        class ThingV1(KubeObject):
            pass

        @resource("x.io", "v2", kind="Thing")
        class ThingV2(KubeObject):
            pass
        """,
        "no_storage_version.ThingV1: error: Thing.x.io needs exactly one storage version "
        "(@resource(..., storage=True)), found none",
    ),
    "scopes_disagree": (
        """
        @resource("x.io", "v1", kind="Thing")
        class ThingV1(KubeObject):
            pass

        @resource("x.io", "v2", kind="Thing", scope="Cluster", storage=True)
        class ThingV2(KubeObject):
            pass
        """,
        "scopes_disagree.ThingV2: error: scope 'Cluster' differs from 'Namespaced' of "
        "scopes_disagree.ThingV1: every version of a kind shares it",
    ),
    "unsupported_type": (
        """
        class Spec(KubeModel):
            ids: set[str] | None = None

        @resource("x.io", "v1")
        class Thing(KubeObject):
            spec: Spec | None = None
        """,
        "unsupported_type: Spec.ids: error: unsupported type set[str]; use str, int, float, "
        "bool, Literal[...], int | str, list[T], dict[str, T], Any, datetime or a KubeModel "
        "subclass",
    ),
    "marker_on_wrong_type": (
        """
        @resource("x.io", "v1")
        class Thing(KubeObject):
            size: Annotated[int, MaxLength(3)] | None = None
        """,
        "marker_on_wrong_type: Thing.size: error: MaxLength applies to string values, "
        "not integer",
    ),
    "marker_on_list_items": (
        """
        @resource("x.io", "v1")
        class Thing(KubeObject):
            sizes: list[Annotated[str, Minimum(1)]] | None = None
        """,
        "marker_on_list_items: Thing.sizes.items: error: Minimum applies to integer, number "
        "values, not string",
    ),
    "recursive_type": (
        """
        class Node(KubeModel):
            children: list[Node] | None = None

        @resource("x.io", "v1")
        class Tree(KubeObject):
            root: Node | None = None
        """,
        "recursive_type: Node.children.items: error: recursive type Node → Node: a CRD "
        "schema cannot refer to itself",
    ),
    "dict_with_int_keys": (
        """
        @resource("x.io", "v1")
        class Thing(KubeObject):
            counts: dict[int, str] | None = None
        """,
        "dict_with_int_keys: Thing.counts: error: mapping keys must be str, not int",
    ),
    "import_fails": (
        "raise RuntimeError('no cluster here')\n",
        "import_fails: error: cannot import: RuntimeError: no cluster here",
    ),
    "no_kinds": (
        "X = 1\n",
        "no_kinds: error: no kind found: declare one with @resource(group, version)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_clear_line_and_nothing_is_written(on_path: Path, case: str) -> None:
    body, message = BAD_INPUTS[case]
    write_api(on_path, case, body)
    out = on_path / "crds"
    result = run(case, "-o", out)
    assert (result.exit_code, result.output) == (2, message + "\n")
    assert not out.exists()


def test_markers_are_checked_when_python_constructs_a_model(on_path: Path) -> None:
    api = shop()
    spec = {"name": "web", "owner": "me", "comment": ""}
    assert api.Widget(spec=spec).spec.replicas == 1
    with pytest.raises(ValidationError) as caught:
        api.Widget(
            spec={
                **spec,
                "replicas": 0,
                "name": "Web",
                "mode": "slow",  # a plain Literal: pydantic refuses it itself
                "level": "mid",
                "tags": [],
                "labels": {},
                "ports": [{"name": "http", "number": 0}],
            }
        )
    assert sorted((e["loc"], e["type"]) for e in caught.value.errors()) == [
        (("spec", "mode"), "literal_error"),
    ]
    with pytest.raises(ValidationError) as caught:
        api.WidgetSpec(
            **spec | {"replicas": 0, "name": "Web", "level": "mid", "tags": [], "labels": {}},
            ports=[{"name": "http", "number": 0}],
        )
    assert sorted((e["loc"], e["type"]) for e in caught.value.errors()) == [
        (("labels",), "too_short"),
        (("level",), "literal_error"),
        (("name",), "string_pattern_mismatch"),
        (("ports", 0, "number"), "greater_than"),
        (("replicas",), "greater_than_equal"),
        (("tags",), "too_short"),
    ]
    with pytest.raises(ValidationError) as caught:
        api.WidgetSpec(name="web", comment="")
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [(("owner",), "missing")]


def test_decoding_stays_lenient(on_path: Path) -> None:
    api = shop()
    wire = {"spec": {"name": "Web", "replicas": 99, "tags": [], "owner": None, "comment": "c"}}
    widget = api.Widget.model_validate(wire)
    assert (widget.spec.name, widget.spec.replicas, widget.spec.tags) == ("Web", 99, [])


def test_rules_of_reads_markers_through_optional_and_literal() -> None:
    from typing import Annotated, Literal

    assert rules_of(Annotated[int, Minimum(1), Maximum(5, exclusive=True)] | None) == FieldRules(
        minimum=1, maximum=5, exclusive_maximum=True
    )
    assert rules_of(Annotated[str | None, Required(), Pattern("^a")]) == FieldRules(
        required=True, pattern="^a"
    )
    assert rules_of(Literal["a", "b"] | str | None) == FieldRules(enum=("a", "b"))
    assert rules_of(int | None) is None


def test_a_class_writing_its_own_rules_table_keeps_it() -> None:
    from typing import Annotated, ClassVar

    class Generated(KubeModel):
        __kgen_rules__: ClassVar[dict[str, FieldRules]] = {"size": FieldRules(maximum=3)}
        size: Annotated[int, Minimum(1)] | None = None

    assert Generated.__kgen_rules__ == {"size": FieldRules(maximum=3)}


def test_subclasses_inherit_and_extend_marker_rules() -> None:
    from typing import Annotated

    class Base(KubeModel):
        size: Annotated[int, Minimum(1)] | None = None

    class Child(Base):
        name: Annotated[str, Pattern("^[a-z]+$")] | None = None

    assert Child.__kgen_rules__ == {
        "size": FieldRules(minimum=1),
        "name": FieldRules(pattern="^[a-z]+$"),
    }
    with pytest.raises(ValidationError):
        Child(size=0)


def test_kind_schema_of_a_declared_kind_matches_its_crd(on_path: Path) -> None:
    widgets = yaml.safe_load((EXPECTED / "shop.example.com_widgets.yaml").read_text())
    v2: dict[str, Any] = widgets["spec"]["versions"][1]
    assert kind_schema(shop().Widget) == v2["schema"]["openAPIV3Schema"]


def test_resource_sets_the_type_fields_a_constructed_object_dumps(on_path: Path) -> None:
    gadget = shop().GadgetObject(spec={"colour": "red"})
    assert gadget.model_dump() == {
        "apiVersion": "shop.example.com/v1alpha1",
        "kind": "Gadget",
        "metadata": {},
        "spec": {"colour": "red"},
    }


def test_the_starter_api_module_makes_a_crd_kgen_generate_reads(on_path: Path) -> None:
    source = starter_api_module("example.com", "v1alpha1", "Widget", module_hint="api.py")
    (on_path / "starter_api.py").write_text(source)
    out = on_path / "crds"
    result = generate_crds([str(on_path / "starter_api.py")], out)
    assert result.files == ("example.com_widgets.yaml",)
    crd = yaml.safe_load((out / "example.com_widgets.yaml").read_text())
    version = crd["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["replicas"] == {
        "default": 1,
        "description": "How many replicas to run.",
        "maximum": 100,
        "minimum": 0,
        "type": "integer",
    }
    package = load_package([out], "widget_api")
    assert [k.kind for gv in package.group_versions for k in gv.kinds] == ["Widget"]
    with pytest.raises(ValueError, match="'not a kind' is not a valid kind name"):
        starter_api_module("example.com", "v1", "not a kind")


def test_markers_public_names() -> None:
    from kgen_runtime import markers

    assert set(markers.__all__) == {
        "Default",
        "EmbeddedResource",
        "Enum",
        "Format",
        "IntOrString",
        "KindMarkers",
        "ListMapKeys",
        "ListType",
        "MapType",
        "Marker",
        "MaxItems",
        "MaxLength",
        "MaxProperties",
        "Maximum",
        "MinItems",
        "MinLength",
        "MinProperties",
        "Minimum",
        "Nullable",
        "Optional",
        "Pattern",
        "PreserveUnknownFields",
        "PrinterColumn",
        "Required",
        "ScaleSubresource",
        "SplitAnnotation",
        "XValidation",
        "kind_markers",
        "literal_values",
        "object_markers",
        "resource",
        "rules_of",
        "split_annotation",
    }
    for name in markers.__all__:
        assert getattr(markers, name) is not None


def test_the_test_api_server_serves_the_crd_and_applies_its_schema(on_path: Path) -> None:
    from kgen_runtime.testing import TestAPIServer
    from tests.testing._support import Api

    out = on_path / "crds"
    generate_crds(["crdgen_shop"], out)
    manifest = yaml.safe_load((out / "shop.example.com_widgets.yaml").read_text())
    api = shop()
    widget = api.Widget(spec={"name": "web", "owner": "me", "comment": "", "ports": []})
    widget.metadata.name = "web"
    path = "/apis/shop.example.com/v2/namespaces/default/widgets"
    with TestAPIServer() as server:
        server.install_crd(manifest)
        status, created = Api(server).post(path, widget.model_dump())
        assert status == 201, created["message"]
        assert created["spec"] == {  # the server filled in the schema's defaults
            "comment": "",
            "enabled": False,
            "extra": {},
            "level": "low",
            "name": "web",
            "note": "none",
            "owner": "me",
            "ports": [],
            "replicas": 1,
        }
        wire = {**widget.model_dump(), "metadata": {"name": "big"}}
        wire["spec"]["replicas"] = 11  # decoding is lenient: the server is the authority
        status, error = Api(server).post(path, api.Widget.model_validate(wire).model_dump())
        assert (status, [c["field"] for c in error["details"]["causes"]]) == (
            422,
            ["spec.replicas"],
        )
