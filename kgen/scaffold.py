"""``kgen init`` and ``kgen create api``: an operator project that deploys, and new kinds in it
(kubebuilder's ``init`` and ``create api``).

A project holds CRDs (``deploy/crds``), the package kgen generates from them, one reconciler
per kind written with kgen_runtime's builder, a Manager-based entry point, tests on the fake
clientset and the test API server, a Dockerfile and the manifests of ``deploy/``, whose RBAC
role is derived from the controllers by running the project's own ``<package>.rbac``. Names in
the project's code are taken from the IR of the CRDs just written, so they are the names the
generated package really has. Until kgen is on PyPI, the project carries the wheels of the
kgen that made it (``wheels/``, ``kgen.wheelhouse``), which its Makefile, CI and Dockerfile
install from: nothing it holds names a path of the machine that made it.

The CRDs are either the source (``api-from = "crd"``: a CRD skeleton per kind, edited by hand)
or themselves generated (``api-from = "python"``: a module of Python types per kind version in
``<package>/api``, turned into ``deploy/crds`` by ``kgen crd``, kubebuilder's ``api/`` and
controller-gen).

Everything is written into a scratch copy first and moved into place only when every step
(generation, the RBAC derivation) succeeded: a failure leaves the project as it was.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
import yaml

from kgen import __version__, naming
from kgen.crdgen import condition_schema, starter_api_module
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.generate import generate, load_package
from kgen.reflow import reflow_long_prose
from kgen.wheelhouse import GENERATOR_DISTRIBUTION, RUNTIME_DISTRIBUTION, write_wheels
from kgen.write import format_python

__all__ = [
    "API_SOURCES",
    "GENERATOR_DISTRIBUTION",
    "RUNTIME_DISTRIBUTION",
    "create_api",
    "init_project",
]

API_SOURCES = ("crd", "python")
"""What a project's CRDs come from (``[tool.kgen] api-from``): hand-edited CRD manifests, or
Python types that ``kgen crd`` turns into them."""


_GROUP = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_PROJECT = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_PROJECT_MAX = 63 - len("-system")
# The scaffolded project's ruff line length (its pyproject.toml): black keeps code within
# kgen's own 88 columns, and prose that long names stretch is rewrapped to this.
_LINE_LENGTH = 100
_CONTROLLERS_MARKER = "# +kgen:scaffold:controllers"
# Where a project keeps kgen's wheels, which pip installs from until kgen is on PyPI.
_WHEELHOUSE = "wheels"
_CRDS_MARKER = "# +kgen:scaffold:crds"
_ROLES_MARKER = "# +kgen:scaffold:rbac"
_SAMPLES_MARKER = "# +kgen:scaffold:samples"
_ROLES = ("admin", "editor", "viewer")
# What a project copy leaves out (environments, caches, version control).
_NOT_COPIED = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "build", "dist")

# Template → path in the project, once per project ({package}, {api_package} filled in).
_PROJECT_FILES = {
    "pyproject.toml.jinja": "pyproject.toml",
    "README.md.jinja": "README.md",
    "Makefile.jinja": "Makefile",
    "Dockerfile.jinja": "Dockerfile",
    "dockerignore.jinja": ".dockerignore",
    "gitignore.jinja": ".gitignore",
    "ci.yml.jinja": ".github/workflows/ci.yml",
    "deploy_kustomization.yaml.jinja": "deploy/kustomization.yaml",
    "deploy_namespace.yaml.jinja": "deploy/namespace.yaml",
    "deploy_service_account.yaml.jinja": "deploy/rbac/service_account.yaml",
    "deploy_role_binding.yaml.jinja": "deploy/rbac/role_binding.yaml",
    "deploy_manager.yaml.jinja": "deploy/manager.yaml",
    "deploy_metrics_service.yaml.jinja": "deploy/metrics_service.yaml",
    "deploy_metrics_auth_role.yaml.jinja": "deploy/rbac/metrics_auth_role.yaml",
    "deploy_metrics_reader_role.yaml.jinja": "deploy/rbac/metrics_reader_role.yaml",
    "deploy_samples_kustomization.yaml.jinja": "deploy/samples/kustomization.yaml",
    "package_init.py.jinja": "{package}/__init__.py",
    "main.py.jinja": "{package}/__main__.py",
    "cmd.py.jinja": "{package}/cmd.py",
    "manager.py.jinja": "{package}/manager.py",
    "rbac.py.jinja": "{package}/rbac.py",
    "controllers_init.py.jinja": "{package}/controllers/__init__.py",
    "webhooks_init.py.jinja": "{package}/webhooks/__init__.py",
    "tests_init.py.jinja": "tests/__init__.py",
    "conftest.py.jinja": "tests/conftest.py",
    "support.py.jinja": "tests/support.py",
    "test_manager.py.jinja": "tests/test_manager.py",
}
# Template → path, once per kind ({module} is the kind's snake_case name).
_KIND_FILES = {
    "controller.py.jinja": "{package}/controllers/{module}.py",
    "test_controller.py.jinja": "tests/test_{module}_controller.py",
    "deploy_admin_role.yaml.jinja": "deploy/rbac/{module}_admin_role.yaml",
    "deploy_editor_role.yaml.jinja": "deploy/rbac/{module}_editor_role.yaml",
    "deploy_viewer_role.yaml.jinja": "deploy/rbac/{module}_viewer_role.yaml",
    "deploy_sample.yaml.jinja": "deploy/samples/{sample_file}",
}
# Templates whose async project's version is another template (the others take
# ``asynchronous``/``Async`` where they differ).
_ASYNC_VARIANTS = {"test_controller.py.jinja": "test_controller_aio.py.jinja"}


def _variant(template: str, names: Mapping[str, Any]) -> str:
    """The template to render for ``template`` in this project (sync or async)."""
    return _ASYNC_VARIANTS.get(template, template) if names["asynchronous"] else template


def init_project(
    directory: Path,
    *,
    group: str,
    kind: str,
    version: str,
    api_from: str = "crd",
    asynchronous: bool = False,
    sharded: bool = False,
    replicas: int = 3,
) -> list[Path]:
    """Create the project in ``directory`` (new or empty); return the files written.
    ``api_from`` (one of :data:`API_SOURCES`) says what its CRDs come from; with
    ``asynchronous`` the operator runs on asyncio (an ``AsyncManager``, ``async def``
    reconcilers), and so do the controllers ``create api`` adds later. With ``sharded``
    its ``replicas`` replicas (a Deployment) form a shard ring instead of electing a leader:
    each reconciles the objects of its hash ranges (``Manager(sharding=...)``, the builder's
    ``sharded()``), and so do the controllers ``create api`` adds later.

    Raises:
        GenerateError: a name is invalid, ``directory`` is not empty or its parent is
            missing, or a step failed; nothing is written.
    """
    if api_from not in API_SOURCES:
        raise ValueError(f"api_from must be one of {API_SOURCES}, not {api_from!r}")
    if replicas < 1:
        raise ValueError(f"replicas must be at least 1, not {replicas}")
    problems = _check_directory(directory) + _check_names(group, kind, version)
    if problems:
        raise GenerateError(problems)
    project = directory.resolve().name
    package = naming.module_name(project)
    settings = {
        "package": package,
        "api-package": f"{package}_api",
        "crds": "deploy/crds",
        "api-from": api_from,
        "async": "true" if asynchronous else "false",
        "sharded": "true" if sharded else "false",
    }
    kind_names = _kind_names(group, kind, version, namespaced=True)
    names = {**_project_names(project, settings), **kind_names, "replicas": replicas}
    env = _environment()
    with _staging(directory.parent) as staging:
        crd = _write_api(env, staging, settings, names)
        names.update(_generated_names(staging, settings, crd))
        for template, relative in {**_PROJECT_FILES, **_KIND_FILES}.items():
            _render(env, _variant(template, names), staging / _path(relative, names), names)
        _generate(staging, settings)
        _derive_rbac(staging, package)
        write_wheels(staging / _WHEELHOUSE)
        directory.mkdir(exist_ok=True)
        return _move_into(staging, directory)


def create_api(
    directory: Path, *, group: str, version: str, kind: str, namespaced: bool = True
) -> list[Path]:
    """Add ``kind`` to the project in ``directory``: its CRD, the regenerated API package, a
    reconciler wired into the manager, its tests and the RBAC role; return the files written.

    Raises:
        GenerateError: not a kgen project, an invalid name, a kind (or a controller module
            of that name) that exists, or a failed step; nothing is written.
    """
    settings = _project_settings(directory)
    problems = _check_names(group, kind, version)
    if problems:
        raise GenerateError(problems)
    kind_names = _kind_names(group, kind, version, namespaced=namespaced)
    package = settings["package"]
    names = {**_project_names(directory.resolve().name, settings), **kind_names}
    from kgen.scaffold_version import add_version, existing_versions  # it imports this module

    versions = existing_versions(directory, settings, group, kind)
    if versions:  # a new version of a kind the project has
        return add_version(directory, settings, names, versions)
    _check_new_kind(directory, settings, names)
    env = _environment()
    with _staging(directory.parent) as scratch:
        staging = scratch / "project"
        shutil.copytree(directory, staging, ignore=_NOT_COPIED)
        crd = _write_api(env, staging, settings, names)
        names.update(_generated_names(staging, settings, crd))
        for template, relative in _KIND_FILES.items():
            _render(env, _variant(template, names), staging / _path(relative, names), names)
        controllers = Path(package, "controllers", "__init__.py")
        text = _add_controller((staging / controllers).read_text(), names, directory / controllers)
        (staging / controllers).write_text(text)
        _add_kustomize_resources(staging / "deploy" / "kustomization.yaml", {
            _CRDS_MARKER: [f"crds/{names['crd_file']}"],
            _ROLES_MARKER: [_path(f"rbac/{{module}}_{role}_role.yaml", names) for role in _ROLES],
        })
        _add_kustomize_resources(staging / "deploy" / "samples" / "kustomization.yaml",
                                 {_SAMPLES_MARKER: [str(names["sample_file"])]})
        _generate(staging, settings)
        _derive_rbac(staging, package)
        return _sync_back(staging, directory, settings["api-package"])


# -- names ------------------------------------------------------------------------------------


def _project_names(project: str, settings: Mapping[str, str]) -> dict[str, Any]:
    package = settings["package"]
    return {
        "project": project,
        "package": package,
        "api_package": settings["api-package"],
        "api_from": settings["api-from"],
        "asynchronous": settings["async"] == "true",
        "Async": "Async" if settings["async"] == "true" else "",
        "sharded": settings.get("sharded") == "true",
        "shard_ring": project,
        "namespace": f"{project}-system",
        "leader_election_id": f"{project}.kgen.io",
        "line_length": _LINE_LENGTH,
        **_requirements(),
    }


def _kind_names(group: str, kind: str, version: str, *, namespaced: bool) -> dict[str, Any]:
    plural = _plural(kind.lower())
    return {
        "group": group,
        "version": version,
        "kind": kind,
        "plural": plural,
        "singular": kind.lower(),
        "module": naming.module_name(kind),
        "namespaced": namespaced,
        "crd_file": f"{group}_{plural}.yaml",
        "sample_file": f"{group}_{version}_{naming.module_name(kind)}.yaml",
        "condition_schema": yaml.safe_dump(condition_schema(), sort_keys=False).rstrip("\n"),
    }


def _plural(word: str) -> str:
    """English plural of a lower-case kind, as kubebuilder's (flect) for the common cases."""
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def _requirements() -> dict[str, str]:
    """The project's requirements: the runtime its generated package was written for (same
    major.minor, see ``kgen_runtime.check_generator_version``) to run, and the generator to
    regenerate it with as a development dependency."""
    series = ".".join(__version__.split(".")[:2])
    return {
        "runtime_requirement": f"{RUNTIME_DISTRIBUTION}=={series}.*",
        "generator_requirement": f"{GENERATOR_DISTRIBUTION}=={series}.*",
    }


def _generated_names(staging: Path, settings: Mapping[str, str], crd: Path) -> dict[str, str]:
    """The module, clientset and accessor names kgen gives the kind of ``crd``."""
    gv = load_package([crd], settings["api-package"]).group_versions[0]
    kind = gv.kinds[0]
    return {
        "gv_module": ".".join(gv.module),
        "gv_attribute": gv.attribute,
        "accessor": kind.accessor,
        "kind_class": kind.model,
    }


# -- checks -----------------------------------------------------------------------------------


def _check_directory(directory: Path) -> list[Diagnostic]:
    where = Location(str(directory))
    problems = []
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        problems.append(Diagnostic(where, "exists and is not an empty directory"))
    if not directory.parent.is_dir():
        problems.append(Diagnostic(where, f"the parent directory {directory.parent} is missing"))
    name = directory.resolve().name
    if not _PROJECT.match(name) or len(name) > _PROJECT_MAX:
        message = (
            f"the project name {name!r} must be a DNS label of at most {_PROJECT_MAX} "
            "characters (lower case, digits, '-'): it names the namespace, Lease and RBAC objects"
        )
        problems.append(Diagnostic(where, message))
    return problems


def _check_names(group: str, kind: str, version: str) -> list[Diagnostic]:
    problems = []
    for option, value, pattern, expected in (
        ("--group", group, _GROUP, "a DNS subdomain with a dot, e.g. example.com"),
        ("--kind", kind, _KIND, "UpperCamelCase, e.g. Widget"),
        ("--version", version, _VERSION, "v1, v1alpha1, v2beta3, …"),
    ):
        if not pattern.match(value):
            problems.append(Diagnostic(Location(option), f"{value!r} is not {expected}"))
    return problems


def _project_settings(directory: Path) -> dict[str, str]:
    """``[tool.kgen]`` of the project's pyproject.toml (written by ``kgen init``)."""
    pyproject = directory / "pyproject.toml"
    try:
        settings = tomllib.loads(pyproject.read_text())["tool"]["kgen"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as err:
        message = f"not a kgen project: no [tool.kgen] table ({type(err).__name__}: {err})"
        raise GenerateError([Diagnostic(Location(str(pyproject)), message)]) from None
    missing = [key for key in ("package", "api-package", "crds") if key not in settings]
    if missing:
        message = f"[tool.kgen] lacks {', '.join(missing)}"
        raise GenerateError([Diagnostic(Location(str(pyproject)), message)])
    api_from = settings.get("api-from", "crd")  # projects made before it was recorded
    if api_from not in API_SOURCES:
        message = f"[tool.kgen] api-from is {api_from!r}, not one of {', '.join(API_SOURCES)}"
        raise GenerateError([Diagnostic(Location(str(pyproject)), message)])
    asynchronous = settings.get("async", False)  # projects made before it was recorded
    if not isinstance(asynchronous, bool):
        message = f"[tool.kgen] async is {asynchronous!r}, not true or false"
        raise GenerateError([Diagnostic(Location(str(pyproject)), message)])
    sharded = settings.get("sharded", False)  # projects made before it was recorded
    if not isinstance(sharded, bool):
        message = f"[tool.kgen] sharded is {sharded!r}, not true or false"
        raise GenerateError([Diagnostic(Location(str(pyproject)), message)])
    found = {key: str(settings[key]) for key in ("package", "api-package", "crds")}
    return {**found, "api-from": api_from, "async": "true" if asynchronous else "false",
            "sharded": "true" if sharded else "false"}


def _check_new_kind(directory: Path, settings: Mapping[str, str], names: Mapping[str, Any]) -> None:
    generated = (*_KIND_FILES.values(), "{crds}/{crd_file}")
    if settings["api-from"] == "python":
        generated += (_KIND_API_MODULE,)
    for relative in generated:
        path = directory / _path(relative, {**names, "crds": settings["crds"]})
        if path.exists():
            raise GenerateError([Diagnostic(Location(str(path)), "exists: choose another kind")])


# -- writing ----------------------------------------------------------------------------------


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(files("kgen.templates") / "scaffold")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["from_imports"] = _from_imports
    return env


def _from_imports(imports: list[tuple[str, str]]) -> str:
    """``from module import a, b`` lines in isort's order (by module, case-insensitively)."""
    by_module: dict[str, list[str]] = {}
    for module, name in imports:
        by_module.setdefault(module, []).append(name)
    return "\n".join(
        f"from {module} import {', '.join(sorted(by_module[module], key=_isort_key))}"
        for module in sorted(by_module, key=str.lower)
    )


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    return (1 if name[0].isupper() else 2, name)


def _path(relative: str, names: Mapping[str, Any]) -> str:
    return relative.format(**names)


def _render(env: jinja2.Environment, template: str, path: Path, names: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = env.get_template(template).render(names)
    path.write_text(_format(text) if path.suffix == ".py" else text)


def _format(source: str) -> str:
    """A scaffolded module as black formats it, its prose fitted to the project's lines."""
    return reflow_long_prose(format_python(source), _LINE_LENGTH)


def _write_api(
    env: jinja2.Environment, root: Path, settings: Mapping[str, str], names: Mapping[str, Any]
) -> Path:
    """Write the new kind's API into ``root``: its CRD skeleton, or its Python types and the
    CRDs ``kgen crd`` makes of them. Returns the kind's CRD."""
    crd: Path = root / settings["crds"] / str(names["crd_file"])
    if settings["api-from"] == "crd":
        _render(env, "crd.yaml.jinja", crd, names)
        return crd
    api = Path(settings["package"], "api")
    if not (root / api / "__init__.py").exists():
        _render(env, "api_init.py.jinja", root / api / "__init__.py", names)
    relative = _api_module(root, names)
    module = root / relative
    source = starter_api_module(
        str(names["group"]),
        str(names["version"]),
        str(names["kind"]),
        module_hint=".".join(api.parts),
        crd_dir=settings["crds"],
        plural=str(names["plural"]),
        namespaced=bool(names["namespaced"]),
    )
    module.write_text(_format(source))
    _run_project_module(
        root, ["kgen", "crd", ".".join(api.parts), "-o", settings["crds"]], str(relative)
    )
    if not crd.is_file():
        message = f"kgen crd did not write {settings['crds']}/{crd.name}"
        raise GenerateError([Diagnostic(Location(str(relative)), message)])
    return crd


# The module of a kind's Python types: named after its version, or after version and kind
# when another kind of that version has the name.
_VERSION_API_MODULE = "{package}/api/{version}.py"
_KIND_API_MODULE = "{package}/api/{version}_{module}.py"


def _api_module(root: Path, names: Mapping[str, Any]) -> Path:
    path = Path(_path(_VERSION_API_MODULE, names))
    return path if not (root / path).exists() else Path(_path(_KIND_API_MODULE, names))


def _generate(root: Path, settings: Mapping[str, str]) -> None:
    api_package = settings["api-package"]
    generate([root / settings["crds"]], root / api_package, api_package)


def _derive_rbac(root: Path, package: str) -> None:
    """Run the project's ``python -m <package>.rbac`` in ``root``: the RBAC role comes from
    the project's own controllers, as its ``make manifests`` derives it."""
    _run_project_module(root, [f"{package}.rbac"], f"{package}/rbac.py")


def _run_project_module(root: Path, args: list[str], where: str) -> None:
    """Run ``python -m <args>`` in ``root`` as the project's Makefile does (in a process of
    its own: the project's modules are imported there, not into this one); a failure is a
    GenerateError at ``where`` carrying the last line of its stderr."""
    completed = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["(no output)"])[-1]
        message = f"python -m {' '.join(args)} failed: {last}"
        raise GenerateError([Diagnostic(Location(where), message)])


def _add_controller(text: str, names: Mapping[str, Any], path: Path) -> str:
    """``controllers/__init__.py`` (``text``, read from ``path``) with the new reconciler
    imported and its ``setup_with_manager`` added before the marker."""
    module = f"{names['package']}.controllers.{names['module']}"
    return add_registration(
        text, path, package=f"{names['package']}.controllers.", module=module,
        new_import=f"from {module} import {names['kind_class']}Reconciler\n",
        entry=f"{names['kind_class']}Reconciler.setup_with_manager", marker=_CONTROLLERS_MARKER)


def add_registration(
    text: str, path: Path, *, package: str, module: str, new_import: str, entry: str,
    marker: str,
) -> str:
    """``text`` (a registry module read from ``path``: its imports of ``package``'s modules
    and a list ending at the ``marker`` comment) with ``new_import`` of ``module`` in isort's
    order among the imports of ``package`` (which black may have wrapped over several lines;
    the first one gets a section of its own after the other imports) and ``entry`` added to
    the list before the marker: how ``create api`` and ``create webhook`` register a kind."""
    body = ast.parse(text).body
    imports = [n for n in body if isinstance(n, ast.ImportFrom | ast.Import)]
    ours = [n for n in imports if isinstance(n, ast.ImportFrom)
            and (n.module or "").startswith(package)]
    lines = text.splitlines(keepends=True)
    markers = [i for i, line in enumerate(lines) if line.strip() == marker]
    if not imports or not markers:
        message = f"cannot find the imports and {marker!r} to add to"
        raise GenerateError([Diagnostic(Location(str(path)), message)])
    indent = lines[markers[0]][: len(lines[markers[0]]) - len(lines[markers[0]].lstrip())]
    lines.insert(markers[0], f"{indent}{entry},\n")
    after = [n.lineno - 1 for n in ours if str(n.module).lower() > module.lower()]
    if after:
        at = after[0]
    elif ours:
        at = int(ours[-1].end_lineno or ours[-1].lineno)
    else:
        at, new_import = int(imports[-1].end_lineno or imports[-1].lineno), "\n" + new_import
    lines.insert(at, new_import)
    return _format("".join(lines))


def _add_kustomize_resources(path: Path, entries: Mapping[str, list[str]]) -> None:
    """Add ``entries`` to the kustomization at ``path``, each list before its marker comment
    (a kustomization without the file or the marker, made by an older kgen, is left as is)."""
    if not path.exists():
        return
    text = path.read_text()
    for marker, resources in entries.items():
        if marker not in text:
            continue
        indent = text.split(marker)[0].rsplit("\n", 1)[-1]
        added = "".join(f"- {resource}\n{indent}" for resource in resources)
        text = text.replace(marker, f"{added}{marker}", 1)
    path.write_text(text)


@contextmanager
def _staging(parent: Path) -> Iterator[Path]:
    """A scratch directory beside the project (same file system: moves are renames)."""
    with tempfile.TemporaryDirectory(prefix=".kgen-scaffold-", dir=parent) as scratch:
        yield Path(scratch)


def _move_into(staging: Path, directory: Path) -> list[Path]:
    written = []
    for staged in sorted(p for p in staging.rglob("*") if p.is_file()):
        if "__pycache__" in staged.relative_to(staging).parts:
            continue
        target = directory / staged.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staged, target)
        written.append(target)
    return written


def _sync_back(staging: Path, directory: Path, api_package: str) -> list[Path]:
    """Copy the staged files that are new or changed into ``directory`` and remove the files
    generation removed from ``api_package``. Returns the files written."""
    staged = _files(staging)
    written = []
    for relative in sorted(staged):
        source, target = staging / relative, directory / relative
        if target.exists() and target.read_bytes() == source.read_bytes():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
    for relative in sorted(_files(directory / api_package)):
        if Path(api_package, relative) not in staged:
            (directory / api_package / relative).unlink()
    return written


def _files(root: Path) -> set[Path]:
    """The files under ``root``, relative, outside hidden and cache directories."""
    return {
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__"
            for part in p.relative_to(root).parent.parts
        )
    }
