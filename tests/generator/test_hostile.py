"""Schema text is data, never code: hostile schemas generate packages that compile, import,
contain no statement the templates did not write, and expose every value verbatim.

Hypothesis builds CRDs whose kind, group and version names, property names, descriptions,
enum values and defaults are made of the text most likely to break generated Python:
quotes and triple quotes, backslashes, newlines, NULs, bidirectional overrides, template
syntax, and names of keywords, builtins, pydantic and kgen internals. Inputs are written as
JSON so that every string reaches the generator exactly as drawn.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import itertools
import os
import sys
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from kgen.diagnostics import GenerateError
from kgen.generate import generate
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeModel

_counter = itertools.count()

NASTY = [
    '"""',
    "'''",
    '"',
    "'",
    "\\",
    '\\"""',
    '""""',
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\x00",
    "\x0b\x0c",
    "\x1c",
    "\x85",
    "\u2028",
    "\u202e",
    "\ufeff",
    "\U0001f600",
    '"""\nimport os; os._exit(3)\n"""',
    "'''); __import__('os')._exit(3); ('",
    "{{ 1 + 1 }}",
    "{% if x %}",
    "{#",
    "\\N{BULLET}",
    "\\u0041",
    "\\x41",
    "%s",
    "{0}",
    "# noqa",
    "# type: ignore",
]
PYTHON_NAMES = [
    "class",
    "def",
    "import",
    "None",
    "True",
    "self",
    "cls",
    "str",
    "int",
    "list",
    "dict",
    "object",
    "type",
    "print",
    "exec",
    "__import__",
    "__class__",
    "__dict__",
    "__init__",
    "_private",
    "Any",
    "Self",
    "Field",
    "Literal",
    "ClassVar",
    "FieldRules",
    "KubeModel",
    "KubeObject",
    "ObjectMeta",
    "model_dump",
    "model_config",
    "model_fields",
    "__kgen_rules__",
    "__pydantic_extra__",
    "deepcopy",
    "copy",
    "schema",
    "items",
    "fields",
    "spec",
    "status",
    "metadata",
    "apiVersion",
    "kind",
    "fooBar",
    "foo_bar",
    "FooBar",
    "foo-bar",
    "",
]
# Kind names must be identifiers (the loader rejects others); these are the dangerous ones.
KIND_NAMES = [
    "Widget",
    "Self",
    "Field",
    "Literal",
    "ClassVar",
    "Any",
    "KubeObject",
    "KubeList",
    "ObjectMeta",
    "Resource",
    "GroupVersion",
    "FieldRules",
    "None",
    "True",
    "class",
    "import",
    "str",
    "object",
    "type",
    "print",
    "__import__",
    "_x",
    "WidgetList",
    "Scheme",
    "Clientset",
]
# Groups must be DNS subdomains and versions DNS labels; their first labels become modules.
GROUPS = [
    "example.com",
    "class.example.com",
    "import.io",
    "none.dev",
    "typing.io",
    "pydantic.dev",
    "kgen-runtime.io",
    "1password.com",
    "self.x",
]
VERSIONS = ["v1", "v1alpha1", "v2beta3", "class", "import", "none", "1x", "list"]
# Plural, singular, short names and categories must be DNS labels: these become attributes.
LABELS = [
    "widgets",
    "class",
    "import",
    "none",
    "self",
    "items",
    "list",
    "get",
    "transport",
    "factory",
    "model-dump",
    "x",
]

_chars = st.characters(exclude_categories=["Cs"])  # JSON cannot carry lone surrogates
text = st.lists(st.one_of(st.sampled_from(NASTY), st.text(_chars, max_size=12)), max_size=4).map(
    "".join
)


property_names = st.one_of(st.sampled_from(PYTHON_NAMES), text)
integers = st.integers(min_value=-(2**63), max_value=2**63 - 1)
floats = st.floats(allow_nan=False, allow_infinity=False)


@dataclass(frozen=True)
class Prop:
    """One property of the ``spec`` object: its schema and a wire value for it."""

    schema: dict[str, Any]
    value: Any


def _with_description(schema: dict[str, Any], description: str | None) -> dict[str, Any]:
    return schema if description is None else {**schema, "description": description}


@st.composite
def scalar_props(draw: st.DrawFn) -> Prop:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean"]))
    values = {"string": text, "integer": integers, "number": floats, "boolean": st.booleans()}
    schema: dict[str, Any] = {"type": kind}
    if kind in ("string", "integer") and draw(st.booleans()):
        schema["enum"] = draw(st.lists(values[kind], min_size=1, max_size=4, unique=True))
    if draw(st.booleans()):
        schema["default"] = draw(values[kind])
    value = schema.get("default", draw(values[kind]))
    return Prop(schema, value)


@st.composite
def container_props(draw: st.DrawFn) -> Prop:
    if draw(st.booleans()):
        schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        values: st.SearchStrategy[Any] = st.lists(text, max_size=3)
    else:
        schema = {"type": "object", "additionalProperties": {"type": "string"}}
        values = st.dictionaries(text, text, max_size=3)
    if draw(st.booleans()):
        schema["default"] = draw(values)
    return Prop(schema, draw(values))


@st.composite
def object_props(draw: st.DrawFn) -> Prop:
    """A nested object (a class named from its hostile path) with one hostile field."""
    name = draw(property_names)
    inner = draw(scalar_props())
    schema = _with_description(inner.schema, draw(st.none() | text))
    return Prop({"type": "object", "properties": {name: schema}}, {name: inner.value})


@st.composite
def props(draw: st.DrawFn) -> Prop:
    prop = draw(st.one_of(scalar_props(), container_props(), object_props()))
    return Prop(_with_description(prop.schema, draw(st.none() | text)), prop.value)


@dataclass(frozen=True)
class Hostile:
    kind: str
    group: str
    version: str
    description: str
    spec_description: str
    properties: dict[str, Prop]
    plural: str = "widgets"
    singular: str = "widget"
    list_kind: str = "WidgetList"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    replicas_path: str = ".spec.replicas"  # the scale subresource's paths are free text

    def crd(self) -> dict[str, Any]:
        spec = {
            "type": "object",
            "description": self.spec_description,
            "properties": {name: p.schema for name, p in self.properties.items()},
        }
        version = {
            "name": self.version,
            "served": True,
            "storage": True,
            "subresources": {
                "status": {},
                "scale": {
                    "specReplicasPath": self.replicas_path,
                    "statusReplicasPath": self.replicas_path,
                },
            },
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "description": self.description,
                    "properties": {"spec": spec},
                }
            },
        }
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{self.plural}.{self.group}"},
            "spec": {
                "group": self.group,
                "names": {
                    "kind": self.kind,
                    "listKind": self.list_kind,
                    "plural": self.plural,
                    "singular": self.singular,
                    "shortNames": list(self.short_names),
                    "categories": list(self.categories),
                },
                "scope": "Namespaced",
                "versions": [version],
            },
        }

    def wire(self) -> dict[str, Any]:
        return {
            "apiVersion": f"{self.group}/{self.version}",
            "kind": self.kind,
            "metadata": {"name": "hostile", "namespace": "ns"},
            "spec": {name: p.value for name, p in self.properties.items()},
        }


hostile_crds = st.builds(
    Hostile,
    kind=st.sampled_from(KIND_NAMES),
    group=st.sampled_from(GROUPS),
    version=st.sampled_from(VERSIONS),
    description=text,
    spec_description=text,
    properties=st.dictionaries(property_names, props(), min_size=1, max_size=6),
    plural=st.sampled_from(LABELS),
    singular=st.sampled_from(LABELS),
    list_kind=st.sampled_from(KIND_NAMES),
    short_names=st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map(tuple),
    categories=st.lists(st.sampled_from(LABELS), max_size=2, unique=True).map(tuple),
    replicas_path=text,
).filter(lambda h: h.list_kind != h.kind)  # the API server rejects listKind == kind

INJECTION = Hostile(
    kind="Widget",
    group="example.com",
    version="v1",
    description='ends in a quote"',
    spec_description='"""\nimport os\nos._exit(3)\n""" and on',
    properties={
        '"""': Prop({"type": "string", "enum": ['"""', "\\", "\n"], "default": "\\"}, '"""'),
        "\\": Prop({"type": "string", "description": "\\", "default": "'''\\'''"}, "\\"),
        "class": Prop({"type": "integer", "default": 3, "description": "\\N{BULLET}"}, 3),
        "a\nb": Prop({"type": "array", "items": {"type": "string"}, "default": ['"']}, ["\n"]),
    },
)


# --- generation and import -------------------------------------------------------------


@contextmanager
def generated(hostile: Hostile, root: Path) -> Iterator[tuple[Path, ModuleType]]:
    """Generate ``hostile`` into a fresh package under ``root``, import it, yield the package
    directory and its scheme module; unimport it afterwards."""
    name = f"kgen_hostile_{os.getpid()}_{next(_counter)}"
    source = root / f"{name}.json"
    source.write_bytes(orjson.dumps(hostile.crd()))
    generate([source], root / name, name)
    sys.path.insert(0, str(root))
    try:
        for module in ("clientset", "informers", "fake"):
            importlib.import_module(f"{name}.{module}")
        yield root / name, importlib.import_module(f"{name}.scheme")
    finally:
        sys.path.remove(str(root))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


# --- what the templates may write ------------------------------------------------------

_TOP_LEVEL_CALLS = {
    "add_to_scheme(scheme)",
    "check_generator_version(__name__, GENERATOR_VERSION)",
}
_TOP_LEVEL = (ast.ImportFrom, ast.ClassDef, ast.Assign, ast.Expr)
_CLASS_LEVEL = (ast.AnnAssign, ast.FunctionDef, ast.Expr)


def assert_only_template_statements(package: Path) -> None:
    """Every generated file compiles and runs no top-level code but ``add_to_scheme(scheme)``
    and the package's runtime-version check;
    models modules hold only imports, classes with fields, docstrings and ``deepcopy``,
    aliases and ``__all__``. Schema text that escaped its literal would show up as an extra
    statement or function."""
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        compile(tree, str(path), "exec")
        for node in tree.body:
            assert not isinstance(node, ast.Import), ast.dump(node)
            if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
                assert ast.unparse(node) in _TOP_LEVEL_CALLS, ast.dump(node)
        if path.name != "models.py":
            continue
        for node in tree.body:
            assert isinstance(node, _TOP_LEVEL), ast.dump(node)
            if isinstance(node, ast.Expr):
                assert isinstance(node.value, ast.Constant), ast.dump(node)
            if isinstance(node, ast.Assign):  # __all__ = [...] or Alias = Model
                assert isinstance(node.value, ast.List | ast.Name), ast.dump(node)
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    assert isinstance(member, _CLASS_LEVEL), ast.dump(member)
                    if isinstance(member, ast.FunctionDef):
                        assert member.name == "deepcopy"
                    if isinstance(member, ast.Expr):
                        assert isinstance(member.value, ast.Constant), ast.dump(member)


# --- reading the values back -----------------------------------------------------------


def squash(text: str) -> str:
    """Compare descriptions whitespace-insensitively (docstrings are re-wrapped)."""
    return " ".join(text.split())


def assert_described(cls: type, description: str) -> None:
    """``cls.__doc__`` is ``description``; blank descriptions get a generated docstring."""
    if squash(description):
        assert squash(cls.__doc__ or "") == squash(description)


def attribute_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (the string statement after a field) of ``cls``, from source."""
    source = Path(sys.modules[cls.__module__].__file__ or "").read_text(encoding="utf-8")
    (node,) = [
        n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == cls.__name__
    ]
    docs = {}
    for member, following in itertools.pairwise(node.body):
        if (
            isinstance(member, ast.AnnAssign)
            and isinstance(member.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[member.target.id] = following.value.value
    return docs


def wire_fields(cls: type[KubeModel]) -> dict[str, tuple[str, FieldInfo]]:
    """Wire name → (attribute, field info) of every field of ``cls``."""
    out = {}
    for attribute, info in cls.model_fields.items():
        wire = info.serialization_alias if info.serialization_alias is not None else info.alias
        out[wire if wire is not None else attribute] = (attribute, info)
    return out


def literal_values(annotation: Any) -> tuple[Any, ...] | None:
    """The values of the ``Literal[...]`` inside ``annotation``, if there is one."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    for arg in typing.get_args(annotation):
        found = literal_values(arg)
        if found is not None:
            return found
    return None


def exact(value: Any) -> bytes:
    """A comparison key that tells 1, 1.0 and True apart (and -0.0 from 0.0)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def assert_field_matches_schema(
    cls: type[KubeModel], wire: str, schema: dict[str, Any], docs: dict[str, str]
) -> None:
    attribute, info = wire_fields(cls)[wire]
    if "description" in schema:
        assert squash(docs.get(attribute, "")) == squash(schema["description"])
    if "enum" in schema:
        assert literal_values(info.annotation) == tuple(schema["enum"])
        assert exact(cls.__kgen_rules__[attribute].enum) == exact(schema["enum"])
    if "default" in schema:
        assert exact(info.get_default(call_default_factory=True)) == exact(schema["default"])
    else:
        assert info.get_default(call_default_factory=True) is None


def check_resource(hostile: Hostile, scheme: ModuleType) -> None:
    """The registered resource carries every name verbatim."""
    (resource,) = scheme.scheme.resources()
    assert (resource.group, resource.version, resource.kind, resource.list_kind) == (
        hostile.group,
        hostile.version,
        hostile.kind,
        hostile.list_kind,
    )
    assert (resource.plural, resource.singular) == (hostile.plural, hostile.singular)
    assert (resource.short_names, resource.categories) == (
        hostile.short_names,
        hostile.categories,
    )
    assert resource.scale_subresource.spec_replicas_path == hostile.replicas_path
    assert resource.list_model.model_validate({}).kind == hostile.list_kind


def check_package(hostile: Hostile, scheme: ModuleType) -> None:
    check_resource(hostile, scheme)
    gvk = GroupVersionKind(hostile.group, hostile.version, hostile.kind)
    kind_class = scheme.scheme.class_for(gvk)
    assert_described(kind_class, hostile.description)

    wire = hostile.wire()
    decoded = kind_class.model_validate_json(orjson.dumps(wire))
    assert decoded.model_dump() == wire
    assert decoded.deepcopy().model_dump() == wire
    spec = decoded.spec
    spec_class = type(spec)
    assert spec.__pydantic_extra__ == {}, "a wire name did not map to its field"
    assert_described(spec_class, hostile.spec_description)

    docs = attribute_docs(spec_class)
    for name, prop in hostile.properties.items():
        assert_field_matches_schema(spec_class, name, prop.schema, docs)
        if prop.schema["type"] == "object" and "properties" in prop.schema:
            nested = getattr(spec, wire_fields(spec_class)[name][0])
            assert nested.__pydantic_extra__ == {}
            assert_described(type(nested), prop.schema.get("description", ""))
            ((inner_name, inner_schema),) = prop.schema["properties"].items()
            assert_field_matches_schema(
                type(nested), inner_name, inner_schema, attribute_docs(type(nested))
            )
        alone = {**wire, "spec": {name: prop.value}}
        assert kind_class.model_validate(alone).model_dump() == alone, name


@pytest.mark.slow  # ~4-11 s: CI runs it in the slow pass; the default run stays under 5 min
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Each example generates a package (~0.3 s): shrinking could take minutes. The failing
    # example is reported as drawn, its strings already short.
    phases=[Phase.explicit, Phase.generate],
)
@given(hostile=hostile_crds)
@example(hostile=INJECTION)
def test_hostile_schema_text_stays_data(
    hostile: Hostile, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with generated(hostile, tmp_path_factory.mktemp("hostile")) as (package, scheme):
        assert_only_template_statements(package)
        check_package(hostile, scheme)


@pytest.mark.parametrize(
    "description", ['"""', 'ends in """', 'six """"""', 'backslash \\"""', 'spaced """ \n']
)
def test_description_ending_in_triple_quotes_stays_data(description: str, tmp_path: Path) -> None:
    hostile = dataclasses.replace(INJECTION, description=description)
    with generated(hostile, tmp_path) as (package, scheme):
        assert_only_template_statements(package)
        check_package(hostile, scheme)


@pytest.mark.parametrize(("first", "second"), [("fooBar", "foo_bar"), ("class", "class_")])
def test_wire_name_equal_to_another_fields_attribute_decodes_losslessly(
    first: str, second: str, tmp_path: Path
) -> None:
    string = Prop({"type": "string"}, "x")
    hostile = dataclasses.replace(INJECTION, properties={first: string, second: string})
    with generated(hostile, tmp_path) as (_, scheme):
        kind_class = scheme.scheme.class_for(GroupVersionKind("example.com", "v1", "Widget"))
        wire = {**hostile.wire(), "spec": {second: "x"}}
        assert kind_class.model_validate(wire).model_dump() == wire


def test_list_kind_equal_to_kind_is_reported(tmp_path: Path) -> None:
    hostile = dataclasses.replace(INJECTION, list_kind=INJECTION.kind)
    with pytest.raises(GenerateError) as raised, generated(hostile, tmp_path):
        pass
    (diagnostic,) = raised.value.diagnostics
    assert str(diagnostic.location).endswith("[0]: spec.names.listKind")
