"""Every generated name is decided in the IR, in one namespace per module: kinds whose names
collide with the names derived from other kinds (``Foo`` and ``FooLister``) still generate
importable, lint-clean, mypy-clean packages whose classes are the ones they claim to be; the
asyncio twins' names (``AsyncFooClient``…) are claimed after every blocking name."""

from __future__ import annotations

import importlib
import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from kgen import ir
from kgen.diagnostics import GenerateError
from kgen.generate import generate
from kgen_runtime import cache, rest

from .conftest import MYPY_CACHE, REPO, crd

_counter = itertools.count()
_BIN = Path(sys.executable).parent
# A nested object ``client``: its class (FooClient) competes with Foo's client class.
_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"client": {"type": "object", "properties": {"a": {"type": "string"}}}},
        }
    },
}
_FILES = ("models", "register", "client", "listers", "informers", "applyconfigurations")
_CI_RUFF = ("--line-length", "88", "--select", "E,F,W,I,B,UP,RUF")  # as .ci/run checks


@contextmanager
def generated(root: Path, kinds: list[str]) -> Iterator[tuple[Path, ir.Package]]:
    """Generate a package of ``kinds`` (group example.com, v1) under ``root`` and put it on
    sys.path; unimport it afterwards."""
    name = f"kgen_names_{os.getpid()}_{next(_counter)}"
    source = root / f"{name}.yaml"
    manifests = [
        crd(kind, _SCHEMA, plural=f"r{i}s", scope="Cluster" if i % 2 else "Namespaced")
        for i, kind in enumerate(kinds)
    ]
    source.write_text(yaml.safe_dump_all(manifests, sort_keys=False))
    result = generate([source], root / name, name)
    sys.path.insert(0, str(root))
    try:
        yield root / name, result.package
    finally:
        sys.path.remove(str(root))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


def check_names(package_dir: Path, package: ir.Package) -> None:
    """Each kind's classes are what they say, defined where the IR says, none shadowed."""
    name = package_dir.name
    for gv in package.group_versions:
        base = f"{name}.{'.'.join(gv.module)}"
        modules: dict[str, ModuleType] = {
            file: importlib.import_module(f"{base}.{file}") for file in _FILES
        }
        for kind in gv.kinds:
            model = getattr(modules["models"], kind.model)
            resource = getattr(modules["register"], kind.resource_constant)
            client = getattr(modules["client"], kind.client_class)
            lister = getattr(modules["listers"], kind.lister_class)
            informer = getattr(modules["informers"], kind.informer_class)
            assert model.model_validate({}).kind == kind.kind
            assert resource.kind == kind.kind and resource.model is model
            assert issubclass(client, rest.ResourceClient) and client.__module__.endswith(".client")
            assert issubclass(lister, cache.ClusterLister | cache.NamespacedLister)
            assert lister.resource is resource
            assert informer.lister_class is lister and informer.resource is resource
            async_client = getattr(modules["client"], kind.async_client_class)
            async_informer = getattr(modules["informers"], kind.async_informer_class)
            assert issubclass(async_client, rest.AsyncResourceClient)
            assert async_client.__module__.endswith(".client")
            assert issubclass(async_informer, cache.AsyncResourceInformer)
            assert async_informer.lister_class is lister and async_informer.resource is resource
            apply = getattr(modules["applyconfigurations"], kind.apply_class)
            assert (apply.__kgen_kind__, apply.__name__) == (kind.kind, kind.apply_class)
            extract = getattr(modules["applyconfigurations"], kind.extract_function)
            assert type(extract(model.model_validate({}), "m")) is apply
            for file in ("client", "listers", "informers"):  # the model, not a twin
                assert getattr(modules[file], kind.model) is model
        gv_client = getattr(modules["client"], gv.client_class)
        assert issubclass(gv_client, rest.GroupVersionClient)
        gv_async_client = getattr(modules["client"], gv.async_client_class)
        assert issubclass(gv_async_client, rest.AsyncGroupVersionClient)
    factories = importlib.import_module(f"{name}.informers")
    for group in package.groups:
        assert getattr(factories, group.informers_class).__name__ == group.informers_class
        assert getattr(factories, group.async_informers_class).__name__ == (
            group.async_informers_class
        )
    for module in ("clientset", "informers", "fake", "scheme"):
        importlib.import_module(f"{name}.{module}")


def check_tools(package_dir: Path) -> None:
    """ruff with its defaults and with CI's rules, and mypy --strict, pass on the package."""
    commands = [
        [_BIN / "ruff", "check", "--isolated", package_dir],
        [_BIN / "ruff", "check", "--isolated", *_CI_RUFF, package_dir],
        [_BIN / "mypy", "--strict", "--cache-dir", MYPY_CACHE, package_dir],
    ]
    env = {**os.environ, "MYPYPATH": str(REPO / "runtime")}
    for command in commands:
        run = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=package_dir.parent, check=False
        )
        assert run.returncode == 0, (command, run.stdout + run.stderr)


def test_kind_named_like_another_kinds_lister_keeps_both_apart(tmp_path: Path) -> None:
    with generated(tmp_path, ["Foo", "FooLister"]) as (package_dir, package):
        (gv,) = package.group_versions
        foo, foo_lister = gv.kinds
        assert (foo.model, foo.lister_class) == ("Foo", "FooLister_")
        assert (foo_lister.model, foo_lister.lister_class) == ("FooLister", "FooListerLister")
        check_names(package_dir, package)


def test_a_kind_named_like_another_kinds_async_client_keeps_its_own_names(
    tmp_path: Path,
) -> None:
    """Blocking names are claimed first: ``AsyncFoo`` keeps ``AsyncFooClient``, and ``Foo``'s
    async twin, claimed last, moves aside."""
    with generated(tmp_path, ["Foo", "AsyncFoo"]) as (package_dir, package):
        (gv,) = package.group_versions
        kinds = {kind.kind: kind for kind in gv.kinds}
        foo, async_foo = kinds["Foo"], kinds["AsyncFoo"]
        assert (foo.client_class, foo.async_client_class) == ("FooClient", "AsyncFooClient_")
        assert (foo.informer_class, foo.async_informer_class) == (
            "FooInformer", "AsyncFooInformer_",
        )
        assert (async_foo.client_class, async_foo.async_client_class) == (
            "AsyncFooClient", "AsyncAsyncFooClient",
        )
        assert (gv.client_class, gv.async_client_class) == (
            "ExampleV1Client", "AsyncExampleV1Client",
        )
        check_names(package_dir, package)


def test_a_kind_that_is_another_kinds_list_kind_is_reported(tmp_path: Path) -> None:
    """The API server refuses such names: both would be the GVK example.com/v1 FooList."""
    with pytest.raises(GenerateError) as raised, generated(tmp_path, ["Foo", "FooList"]):
        pass
    (problem,) = raised.value.diagnostics
    assert str(problem.location).endswith("[1]: spec.names.kind")
    assert problem.message.startswith("example.com/FooList is also the listKind of ")
    assert str(problem.location).split("[")[0] in problem.message


def test_group_objects_are_in_the_ir_and_group_init_comes_from_a_template(
    tmp_path: Path,
) -> None:
    with generated(tmp_path, ["Foo"]) as (package_dir, package):
        (group,) = package.groups
        assert (group.name, group.module, group.informers_class) == (
            "example.com", "example", "ExampleInformers",
        )
        assert group.async_informers_class == "AsyncExampleInformers"
        assert group.versions == package.group_versions
        text = (package_dir / "example" / "__init__.py").read_text()
        assert text.endswith('"""API group example.com."""\n')


_RESERVED = [
    "Informers", "ExampleV1Client", "ExampleInformers", "Self", "Scheme", "Resource",
    "AsyncInformers", "AsyncExampleV1Client", "AsyncExampleInformers",
]
_SUFFIXES = ["", "Lister", "Client", "Informer", "Resource", "ListLister", "Informers"]


@st.composite
def colliding_kinds(draw: st.DrawFn) -> list[str]:
    base = draw(st.from_regex(r"[A-Z][a-z]{0,4}", fullmatch=True))
    suffixes = draw(st.lists(st.sampled_from(_SUFFIXES), min_size=1, max_size=4, unique=True))
    reserved = draw(st.lists(st.sampled_from(_RESERVED), max_size=2, unique=True))
    kinds = [base + suffix for suffix in suffixes] + reserved
    upper = draw(st.booleans())  # FOOBar and FooBar share the constant FOO_BAR_RESOURCE
    if upper and len(base) > 1:
        kinds.append(base.upper() + "Bar")
        kinds.append(base + "Bar")
    return list(dict.fromkeys(kinds))


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.generate],
)
@given(kinds=colliding_kinds())
@example(kinds=["Foo", "FooLister", "FooClient", "FooInformer", "ExampleV1Client", "Informers"])
@example(kinds=["Foo", "AsyncFooClient", "AsyncFooInformer", "AsyncInformers", "AsyncExampleV1"])
def test_kinds_colliding_with_derived_names_generate_clean_packages(
    kinds: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    with generated(tmp_path_factory.mktemp("names"), kinds) as (package_dir, package):
        check_names(package_dir, package)
        check_tools(package_dir)


def test_templates_write_no_line_ruff_would_flag_so_no_noqa(tmp_path: Path) -> None:
    """Long kind names wrap in every template docstring: no file needs a noqa pragma."""
    kinds = ["CertificateSigningRequestPolicyBinding", "HorizontalPodAutoscalerTemplate"]
    with generated(tmp_path, kinds) as (package_dir, _):
        files = sorted(package_dir.rglob("*.py"))
        assert len(files) == 14
        assert [f.name for f in files if "noqa" in f.read_text()] == []


def test_only_lines_black_cannot_shorten_get_the_pragma(tmp_path: Path) -> None:
    """A class name of a deep schema path is longer than any line: that models module and
    its apply configurations alone get the pragma, and ruff passes with its defaults and
    with CI's rules."""
    deep: dict[str, object] = {"type": "object", "properties": {"x": {"type": "string"}}}
    for word in ["requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"] * 2:
        deep = {"type": "object", "properties": {word: deep}}
    manifest = crd("Widget", {"type": "object", "properties": {"spec": deep}})
    name = "deep_pkg"
    source = tmp_path / "deep.yaml"
    source.write_text(yaml.safe_dump(manifest))
    generate([source], tmp_path / name, name)
    flagged = [
        p.relative_to(tmp_path / name).as_posix()
        for p in sorted((tmp_path / name).rglob("*.py"))
        if "noqa" in p.read_text()
    ]
    assert flagged == ["example/v1/applyconfigurations.py", "example/v1/models.py"]
    for flagged_file in flagged:
        text = (tmp_path / name / flagged_file).read_text()
        assert text.splitlines()[2] == "# ruff: noqa: E501, RUF100"
    check_tools(tmp_path / name)
