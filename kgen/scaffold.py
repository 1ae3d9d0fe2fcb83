"""``kgen init``: a new operator project that works before its author changes a line.

The project holds a CRD, the package kgen generates from it, a reconciler with a controller
on kgen_runtime's kit, a ``python -m`` entry point and tests on the fake clientset. Names in
the project's code are taken from the IR of the CRD just written, so they are the names the
generated package really has.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path

import jinja2

from kgen import __version__, naming
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.generate import generate, load_package
from kgen.write import format_python

__all__ = ["init_project"]

_GROUP = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")

# Scaffold template → path in the project ({package}, {api}, {plural} filled in).
_FILES = {
    "crd.yaml.jinja": "crds/{plural}.yaml",
    "pyproject.toml.jinja": "pyproject.toml",
    "README.md.jinja": "README.md",
    "package_init.py.jinja": "{package}/__init__.py",
    "controller.py.jinja": "{package}/controller.py",
    "main.py.jinja": "{package}/__main__.py",
    "test_controller.py.jinja": "tests/test_{package}.py",
}


def init_project(directory: Path, *, group: str, kind: str, version: str) -> list[Path]:
    """Create the project in ``directory`` (new or empty); return the files written.

    Raises:
        GenerateError: a name is invalid or ``directory`` is not empty; nothing is written.
    """
    problems = _check(directory, group, kind, version)
    if problems:
        raise GenerateError(problems)
    package = naming.module_name(directory.resolve().name)
    names = {
        "project": directory.resolve().name,
        "package": package,
        "api_package": f"{kind.lower()}_api",
        "group": group,
        "version": version,
        "kind": kind,
        "plural": f"{kind.lower()}s",
        "singular": kind.lower(),
        **_requirements(),
    }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(files("kgen.templates") / "scaffold")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["from_imports"] = _from_imports
    with tempfile.TemporaryDirectory(prefix=".kgen-init-", dir=directory.parent) as scratch:
        staging = Path(scratch) / "project"
        crd = staging / f"crds/{names['plural']}.yaml"
        crd.parent.mkdir(parents=True)
        crd.write_text(env.get_template("crd.yaml.jinja").render(names))
        names.update(_generated_names(crd, names["api_package"]))
        for template, relative in _FILES.items():
            path = staging / relative.format(plural=names["plural"], package=package)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = env.get_template(template).render(names)
            path.write_text(format_python(text) if path.suffix == ".py" else text)
        generate([staging / "crds"], staging / names["api_package"], names["api_package"])
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for staged in sorted(p for p in staging.rglob("*") if p.is_file()):
            target = directory / staged.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(staged, target)
            written.append(target)
    return written


def _requirements() -> dict[str, str]:
    """The distributions the project needs: the runtime its generated package was written for
    (same major.minor, see ``kgen_runtime.check_generator_version``), and the generator to
    regenerate it with as a development dependency."""
    series = ".".join(__version__.split(".")[:2])
    return {
        "runtime_requirement": f"kgen-runtime=={series}.*",
        "generator_requirement": f"kgen-generator=={series}.*",
    }


def _from_imports(imports: list[tuple[str, str]]) -> str:
    """``from module import name`` lines in isort's order (by module, case-insensitively)."""
    return "\n".join(f"from {m} import {n}" for m, n in sorted(imports, key=lambda i: i[0].lower()))


def _generated_names(crd: Path, api_package: str) -> dict[str, str]:
    """The module, clientset and accessor names kgen gives the scaffolded kind."""
    gv = load_package([crd], api_package).group_versions[0]
    kind = gv.kinds[0]
    return {
        "gv_module": ".".join(gv.module),
        "gv_path": ".".join(gv.module),
        "gv_attribute": gv.attribute,
        "accessor": kind.accessor,
        "kind_class": kind.model,
    }


def _check(directory: Path, group: str, kind: str, version: str) -> list[Diagnostic]:
    problems = []
    where = Location(str(directory))
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        problems.append(Diagnostic(where, "exists and is not an empty directory"))
    if not naming.module_name(directory.resolve().name).isidentifier():
        problems.append(Diagnostic(where, "the directory name must make a Python package name"))
    for option, value, pattern, expected in (
        ("--group", group, _GROUP, "a DNS subdomain with a dot, e.g. example.com"),
        ("--kind", kind, _KIND, "UpperCamelCase, e.g. Widget"),
        ("--version", version, _VERSION, "v1, v1alpha1, v2beta3, …"),
    ):
        if not pattern.match(value):
            problems.append(Diagnostic(Location(option), f"{value!r} is not {expected}"))
    return problems
