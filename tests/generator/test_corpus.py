"""The whole real-world CRD corpus: it generates, imports, type-checks and round-trips."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
import yaml

from kgen.generate import GenerateResult, generate
from kgen.load.goyaml import Loader
from kgen_runtime import codec
from kgen_runtime.meta import Unstructured

from .conftest import CORPUS, EXAMPLES, MYPY_CACHE, REPO, requires_corpus

# The corpus takes minutes to generate cold (more than the default 300 s timeout on a busy
# machine): CI runs it (`.ci/run`: pytest -m slow).
pytestmark = [requires_corpus, pytest.mark.slow, pytest.mark.timeout(1200)]

PACKAGE = "kgen_corpus"
# A sample for mypy --strict: small, mid-size and odd cases (keywords, collisions, enums).
MYPY_SAMPLE = ("samplecontroller", "acid", "route", "networking", "scheduling")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GenerateResult, Path]]:
    """The corpus generated once, through kgen's own cache (unchanged inputs and generator:
    a re-run of these tests skips straight to writing the files)."""
    root = tmp_path_factory.mktemp("corpus")
    result = generate([CORPUS], root / PACKAGE, PACKAGE)
    sys.path.insert(0, str(root))
    yield result, root
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def scheme(corpus: tuple[GenerateResult, Path]) -> Any:
    return importlib.import_module(f"{PACKAGE}.scheme").scheme


def test_every_crd_file_is_generated(corpus: tuple[GenerateResult, Path]) -> None:
    result, _ = corpus
    kinds = {(gv.group, k.kind) for gv in result.package.group_versions for k in gv.kinds}
    expected = set()
    for line in (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]:
        columns = line.split("\t")
        expected.update(columns[5].split(","))
    assert {kind for _, kind in kinds} == expected


def test_every_group_version_imports(corpus: tuple[GenerateResult, Path], scheme: Any) -> None:
    result, _ = corpus
    for gv in result.package.group_versions:
        module: ModuleType = importlib.import_module(f"{PACKAGE}.{'.'.join(gv.module)}")
        for kind in gv.kinds:
            resource = getattr(module, kind.resource_constant)
            assert scheme.class_for(resource.gvk) is resource.model
            # The scheme found it by name: the reference must name the defining module.
            for ref, cls in [
                (resource.model_ref, resource.model),
                (resource.list_model_ref, resource.list_model),
            ]:
                assert (cls.__module__, cls.__qualname__) == (ref.module, ref.name)
            assert resource.model.model_validate({}).kind == kind.kind


def _example_documents() -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for index, document in enumerate(yaml.load_all(path.read_text(), Loader=Loader)):
            if document:
                yield path.name, index, document


@pytest.mark.parametrize(
    ("name", "index", "document"),
    [pytest.param(*doc, id=f"{doc[0]}[{doc[1]}]") for doc in _example_documents()],
)
def test_example_round_trip_is_lossless(
    scheme: Any, name: str, index: int, document: dict[str, Any]
) -> None:
    data = orjson.dumps(document)
    obj = codec.decode(data, scheme)
    known = (
        scheme.recognizes(scheme.object_kind(obj)) if not isinstance(obj, Unstructured) else False
    )
    assert orjson.loads(codec.encode(obj, scheme)) == document
    assert orjson.loads(obj.model_dump_json()) == document
    copied = obj.deepcopy()
    assert copied.model_dump(mode="json") == document
    if known:
        assert type(copied) is type(obj) and type(obj).__module__.startswith(PACKAGE)


def test_examples_of_corpus_kinds_decode_typed(scheme: Any) -> None:
    typed = [
        type(codec.decode(orjson.dumps(doc), scheme)).__module__.startswith(PACKAGE)
        for _, _, doc in _example_documents()
        if doc.get("kind") in {"Foo", "Prometheus", "Workflow", "Kafka", "HTTPRoute"}
    ]
    assert typed and all(typed)


def test_generated_sample_passes_mypy_strict(corpus: tuple[GenerateResult, Path]) -> None:
    result, root = corpus
    paths = {str(root / PACKAGE / "scheme.py")} | {
        str(root / PACKAGE / gv.module[0])
        for gv in result.package.group_versions
        if gv.module[0] in MYPY_SAMPLE
    }
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(MYPY_CACHE), *sorted(paths)],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "MYPYPATH": str(REPO / "runtime")},
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-5000:]


def test_generated_code_passes_ruff(corpus: tuple[GenerateResult, Path]) -> None:
    _, root = corpus
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--line-length",
            "88",
            "--select",
            "E,F,W,I,B,UP,RUF",
            str(root / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-5000:]
