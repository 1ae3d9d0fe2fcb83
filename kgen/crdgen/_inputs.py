"""Import the user's API modules (by module name or file path) and find the declared kinds."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from kgen.crdgen._manifest import DeclaredKind
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen_runtime.markers import kind_markers
from kgen_runtime.meta import KubeObject

__all__ = ["find_kinds", "import_inputs"]


def import_inputs(inputs: Sequence[str]) -> list[tuple[str, ModuleType]]:
    """Import every input: a module name (the current directory on ``sys.path``, packages
    with all their submodules) or a ``.py`` file (imported under its package-qualified name
    if it sits in packages, with the directory above them on ``sys.path``)."""
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    modules: list[tuple[str, ModuleType]] = []
    problems: list[Diagnostic] = []
    for given in inputs:
        try:
            name = _module_name(given)
            module = importlib.import_module(name)
            modules.append((given, module))
            modules.extend((given, sub) for sub in _submodules(module))
        except Exception as err:  # the user's code: any error it raises is an input problem
            message = f"cannot import: {type(err).__name__}: {err}".split("\n")[0]
            problems.append(Diagnostic(Location(given), message))
    if problems:
        raise GenerateError(problems)
    return modules


def find_kinds(modules: Sequence[tuple[str, ModuleType]]) -> list[DeclaredKind]:
    """The ``@resource`` classes the modules define (not those they import); a KubeObject
    subclass they define without ``@resource`` is an error."""
    kinds: dict[type[KubeObject], DeclaredKind] = {}
    problems: list[Diagnostic] = []
    for source, module in modules:
        for value in vars(module).values():
            if not (
                isinstance(value, type)
                and issubclass(value, KubeObject)
                and value.__module__ == module.__name__
            ):
                continue
            if kind_markers(value) is None:
                problems.append(
                    Diagnostic(
                        Location(f"{module.__name__}.{value.__qualname__}"),
                        "a KubeObject subclass without @resource(group, version): "
                        "kgen crd cannot tell its group and version",
                    )
                )
            else:
                kinds.setdefault(value, DeclaredKind(value, source))
    if not kinds and not problems:
        where = ", ".join(source for source, _ in modules) or "<no inputs>"
        problems.append(
            Diagnostic(Location(where), "no kind found: declare one with @resource(group, version)")
        )
    if problems:
        raise GenerateError(problems)
    return sorted(kinds.values(), key=lambda d: d.name)


def _module_name(given: str) -> str:
    path = Path(given)
    if path.suffix != ".py":
        return given
    if not path.is_file():
        raise FileNotFoundError(f"no such file {given}")
    path = path.resolve()
    parts = [path.stem] if path.stem != "__init__" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    return ".".join(parts)


def _submodules(module: ModuleType) -> list[ModuleType]:
    paths = getattr(module, "__path__", None)
    if paths is None:
        return []
    prefix = f"{module.__name__}."
    return [
        importlib.import_module(info.name)
        for info in sorted(pkgutil.walk_packages(paths, prefix), key=lambda i: i.name)
    ]
