"""Every file ``kgen init`` and ``kgen create api`` write passes the project's own ruff and
mypy --strict with the longest kind and group names of the CRD corpus (../shared/crds), in
each kind of project (sync, async, CRDs from Python types).

The project is named after the longest kind, as operators usually are, so the package name
is long too; its first kind is the corpus's longest kind and ``create api`` adds the kind of
its longest group: both the rendered templates and the controller registry that ``create
api`` edits are checked.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from kgen.scaffold import create_api, init_project
from tests._fresh import run

from .conftest import CORPUS, requires_corpus


def _corpus_kinds() -> list[tuple[str, str, str]]:
    """(group, kind, first version) of every CRD in the corpus."""
    if not CORPUS.is_dir():
        return []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=loader):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                found.append((spec["group"], spec["names"]["kind"], spec["versions"][0]["name"]))
    return found


def _longest() -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """The CRD with the longest kind and the one with the longest group."""
    kinds = _corpus_kinds() or [("example.com", "Widget", "v1")]
    return max(kinds, key=lambda k: len(k[1])), max(kinds, key=lambda k: len(k[0]))


LONGEST_KIND, LONGEST_GROUP = _longest()


def _kebab(kind: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()


@requires_corpus
@pytest.mark.slow  # ~8 s each: ruff and mypy --strict over a scaffolded project
@pytest.mark.parametrize(
    ("api_from", "asynchronous"),
    [("crd", False), ("crd", True), ("python", False)],
    ids=["sync", "async", "api-from-python"],
)
def test_the_scaffold_lints_and_type_checks_with_the_longest_names(
    tmp_path: Path, api_from: str, asynchronous: bool
) -> None:
    group, kind, version = LONGEST_KIND
    project = tmp_path / f"{_kebab(kind)}-operator"
    init_project(
        project,
        group=group,
        kind=kind,
        version=version,
        api_from=api_from,
        asynchronous=asynchronous,
    )
    group, kind, version = LONGEST_GROUP
    create_api(project, group=group, version=version, kind=kind, namespaced=False)
    run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=project)
    run([sys.executable, "-m", "mypy", "--strict", "--no-incremental"], cwd=project)
