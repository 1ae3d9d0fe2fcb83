"""The generator's pipeline: load → IR → render → format → write."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from kgen import cache
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.emit import BLACK_STABLE, iter_package_files
from kgen.ir import Package
from kgen.ir_builder import build_package
from kgen.load import Document, load_crds, read_documents
from kgen.load.documents import find_input_files
from kgen.load.openapi import load_openapi
from kgen.write import WriteResult, format_sources, write_package

__all__ = ["GenerateResult", "Progress", "generate", "load_package"]

Progress = Callable[[str], None]
"""Hears one line per step of a generation (for a progress display)."""


@dataclass(frozen=True, slots=True)
class GenerateResult:
    package: Package
    write: WriteResult


def load_package(
    inputs: Sequence[Path], package_name: str, read_elsewhere: Sequence[Document] = ()
) -> Package:
    """Read and check every input file, and the documents ``read_elsewhere`` (a cluster's),
    and build the IR; raise GenerateError listing all problems."""
    files, problems = find_input_files(inputs)
    documents = list(read_elsewhere)
    for path in files:
        for item in read_documents(path):
            if isinstance(item, Diagnostic):
                problems.append(item)
            else:
                documents.append(item)
    crds, crd_problems = load_crds(documents)
    openapi, openapi_problems = load_openapi(documents)
    problems.extend(crd_problems + openapi_problems)
    if not crds and not openapi:
        if not problems:
            sources = [*(str(p) for p in inputs), *(d.location.file for d in read_elsewhere)]
            where = ", ".join(sources) or "<no inputs>"
            message = "no CustomResourceDefinition found (nor a Kubernetes OpenAPI v3 document)"
            problems.append(Diagnostic(Location(where), message))
        raise GenerateError(problems)
    try:  # schema problems of the good inputs are reported together with load problems
        package = build_package(package_name, crds, openapi)
    except GenerateError as err:
        problems.extend(err.diagnostics)
    if problems:
        raise GenerateError(problems)
    return package


def generate(
    inputs: Sequence[Path],
    output: Path,
    package_name: str,
    *,
    verify: bool = False,
    progress: Progress | None = None,
    documents: Sequence[Document] = (),
) -> GenerateResult:
    """Generate ``package_name`` from ``inputs`` and ``documents`` (read elsewhere, e.g. from
    a cluster) into ``output`` (whose name it must be).

    Every file is rendered and formatted in memory first, so an error leaves ``output``
    untouched; then only changed files are written (nothing at all with ``verify``). The
    rendered package is cached by the inputs' contents, so a re-run with nothing changed
    skips straight to comparing files. ``progress`` hears each step.
    """
    report = progress or _silent
    if output.resolve().name != package_name:
        message = (
            f"--package {package_name!r} differs from the output directory's name "
            f"{output.resolve().name!r}; a package is imported by its directory's name"
        )
        raise GenerateError([Diagnostic(Location(str(output)), message)])
    run_key = _run_key(inputs, package_name, documents)
    cached = cache.read("runs", run_key) if run_key else None
    if cached is not None:
        package, files = pickle.loads(cached)
        report(f"inputs unchanged since a previous run: reusing its output ({cache.cache_dir()})")
    else:
        report("loading inputs")
        package = load_package(inputs, package_name, documents)
        kinds = sum(len(gv.kinds) for gv in package.group_versions)
        report(f"loaded {kinds} kinds in {len(package.group_versions)} group/versions")
        files = format_sources(iter_package_files(package), report, preformatted=BLACK_STABLE)
        if run_key:
            cache.write("runs", run_key, pickle.dumps((package, files)))
    return GenerateResult(package, write_package(output, files, verify=verify))


def _silent(message: str) -> None:
    del message


def _run_key(
    inputs: Sequence[Path], package_name: str, documents: Sequence[Document]
) -> str | None:
    """The inputs' cache key: their contents, in an order-independent way (the output does
    not depend on input order), and the package name. ``None`` when an input is unreadable."""
    files, problems = find_input_files(inputs)
    if problems:
        return None
    try:
        contents = sorted(hashlib.sha256(path.read_bytes()).digest() for path in files)
    except OSError:
        return None
    contents += sorted(
        hashlib.sha256(orjson.dumps(d.data, option=orjson.OPT_SORT_KEYS)).digest()
        for d in documents
    )
    return cache.key(package_name.encode(), *contents)
