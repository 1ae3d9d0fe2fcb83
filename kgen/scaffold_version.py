"""``kgen create api --version`` for a kind the project has: a new served version of it
(kubebuilder's ``create api`` of an existing kind in a new version, ``--controller=false``).

The version is added to the kind's CRD as a copy of the storage version's schema (served,
not stored), so the storage version stays the hub; where the CRDs come from Python types, as
a new module of the starter's types, the hub's ``@resource`` marked ``storage=True``, and
``kgen crd`` writes the CRD. Generation then writes the spoke's
``conversion`` module (``<kind>_spoke()``, copying what the two schemas decide), and, when
the kind has a conversion webhook (``kgen create webhook --conversion``), the spoke is added
to its converter. A sample of the new version joins deploy/samples.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kgen import ir, naming
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.generate import load_package
from kgen.scaffold import (
    _NOT_COPIED,
    _SAMPLES_MARKER,
    _add_kustomize_resources,
    _derive_rbac,
    _environment,
    _generate,
    _path,
    _render,
    _staging,
    _sync_back,
    _write_api,
)
from kgen.write import format_python

__all__ = ["add_version", "existing_versions"]

_SPOKES_MARKER = "# +kgen:scaffold:spokes"


def existing_versions(
    directory: Path, settings: Mapping[str, str], group: str, kind: str
) -> list[tuple[ir.GroupVersion, ir.Kind]]:
    """The versions the project's CRDs serve ``kind`` of ``group`` in (none: a new kind)."""
    package = load_package([directory / settings["crds"]], settings["api-package"])
    return [(gv, k) for gv in package.group_versions for k in gv.kinds
            if (gv.group, k.kind) == (group, kind)]


def add_version(
    directory: Path,
    settings: Mapping[str, str],
    names: Mapping[str, Any],
    versions: list[tuple[ir.GroupVersion, ir.Kind]],
) -> list[Path]:
    """Add ``names["version"]`` to the kind served in ``versions``; returns the files written.

    In a project whose CRDs come from Python types, the version is a new module of them
    (the starter's types) and the hub's ``@resource`` gets ``storage=True``.

    Raises:
        GenerateError: the version exists, the CRD file or the hub's Python types are not
            found, or a step failed; nothing is written.
    """
    version, kind = str(names["version"]), versions[0][1]
    where = Location(str(directory / settings["crds"]))
    if any(gv.version == version for gv, _ in versions):
        message = f"kind {kind.kind} of group {names['group']} has version {version} already"
        raise GenerateError([Diagnostic(where, message)])
    crd_path = _crd_of(directory / settings["crds"], str(names["group"]), kind.plural)
    hub = next((gv for gv, k in versions if k.storage), versions[0][0])
    sample = {**names, "plural": kind.plural, "singular": kind.singular,
              "namespaced": kind.namespaced, "crd_file": crd_path.name}
    env = _environment()
    with _staging(directory.parent) as scratch:
        staging = scratch / "project"
        shutil.copytree(directory, staging, ignore=_NOT_COPIED)
        if settings["api-from"] == "crd":
            staged_crd = staging / crd_path.relative_to(directory)
            staged_crd.write_text(_with_version(staged_crd.read_text(), hub.version, version))
        else:
            _mark_storage(staging, settings, kind.kind, hub.version)
            _write_api(env, staging, settings, sample)
        _render(env, "deploy_sample.yaml.jinja",
                staging / "deploy" / "samples" / str(names["sample_file"]), sample)
        _add_kustomize_resources(staging / "deploy" / "samples" / "kustomization.yaml",
                                 {_SAMPLES_MARKER: [str(names["sample_file"])]})
        _generate(staging, settings)
        _add_spoke(staging, settings, names, kind)
        _derive_rbac(staging, settings["package"])
        return _sync_back(staging, directory, settings["api-package"])


def _mark_storage(root: Path, settings: Mapping[str, str], kind: str, hub: str) -> None:
    """Make the ``@resource`` of ``kind`` in version ``hub`` (a module of the project's
    Python types) say ``storage=True``: with a second version, ``kgen crd`` needs one marked.
    A decorator that says ``storage=`` already is left as it is."""
    for path in sorted((root / settings["package"] / "api").glob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ClassDef) or node.name != kind:
                continue
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and len(decorator.args) >= 2
                        and isinstance(decorator.args[1], ast.Constant)
                        and decorator.args[1].value == hub):
                    continue
                if any(k.arg == "storage" for k in decorator.keywords):
                    return
                lines = text.splitlines(keepends=True)
                last = decorator.args[-1]
                at = int(last.end_lineno or last.lineno)
                end = lines[at - 1].rstrip("\n")
                if end.rstrip().endswith(","):  # one argument a line: a line of its own
                    indent = end[: len(end) - len(end.lstrip())]
                    lines.insert(at, f"{indent}storage=True,\n")
                else:
                    column = int(last.end_col_offset or 0)
                    lines[at - 1] = f"{end[:column]}, storage=True{end[column:]}\n"
                path.write_text(format_python("".join(lines)))
                return
    where = Location(str(root / settings["package"] / "api"))
    message = f"no @resource(..., {hub!r}) class {kind} found to mark as the storage version"
    raise GenerateError([Diagnostic(where, message)])


def _crd_of(crds: Path, group: str, plural: str) -> Path:
    """The CRD file of ``plural.group`` in ``crds``."""
    for path in sorted(crds.glob("*.y*ml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition" \
                    and (document.get("metadata") or {}).get("name") == f"{plural}.{group}":
                return path
    message = f"no CustomResourceDefinition {plural}.{group} found"
    raise GenerateError([Diagnostic(Location(str(crds)), message)])


def _with_version(text: str, hub: str, version: str) -> str:
    """The CRD ``text`` with ``version`` added: a served, not stored, copy of ``hub``."""
    crd = yaml.safe_load(text)
    versions = crd["spec"]["versions"]
    copy = {**next(v for v in versions if v["name"] == hub), "name": version, "storage": False}
    versions.append(copy)
    return yaml.safe_dump(crd, sort_keys=False)


def _add_spoke(
    root: Path, settings: Mapping[str, str], names: Mapping[str, Any], kind: ir.Kind
) -> None:
    """Add the new version's spoke to the kind's converter, if it has a conversion webhook."""
    package = load_package([root / settings["crds"]], settings["api-package"])
    gv = next(gv for gv in package.group_versions
              if (gv.group, gv.version) == (names["group"], names["version"]))
    conversion = next((c for c in gv.conversions if c.kind == kind.kind), None)
    handlers = root / _path("{package}/webhooks/{module}.py", {**names, "module": _module(kind)})
    if conversion is None or not handlers.exists():
        return
    text = handlers.read_text()
    if _SPOKES_MARKER not in text:
        return
    module = f"{settings['api-package']}.{'.'.join(gv.module)}.conversion"
    alias = f"{gv.version}_spoke"
    indent = text.split(_SPOKES_MARKER)[0].rsplit("\n", 1)[-1]
    added = (f"from {module} import {conversion.factory} as {alias}\n\n{indent}"
             f"spokes.append({alias}())\n{indent}")
    handlers.write_text(format_python(text.replace(_SPOKES_MARKER, added + _SPOKES_MARKER, 1)))


def _module(kind: ir.Kind) -> str:
    return naming.module_name(kind.kind)
