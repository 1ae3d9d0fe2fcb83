"""Every ```python block of README.md, docs/ and the Foo example's README runs, so a
snippet cannot rot.

Each page's blocks run in order in one namespace, as a reader would paste them into one
session, against what the pages assume: a cluster (a :class:`TestAPIServer`, reached through
``$KUBECONFIG`` so ``Config.load()`` finds it) with the sample-controller Foo CRD installed
and a Foo ``default/example-foo``, the generated ``foo_api`` importable, and the repository
root as the working directory. A block with top-level ``await`` runs on the page's event loop.

A block a test cannot run in such a session (a pytest module, a fragment of a class shown
above it, a program that runs until it is killed) is preceded by ``<!-- skip: reason -->``;
the skipped blocks are listed in :data:`EXPECTED_SKIPS`, so skipping one more is a visible
change of this file.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from kgen_runtime.log import THIRD_PARTY_LOGGERS
from kgen_runtime.testing import TestAPIServer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "foo-crd"
PAGES = [ROOT / "README.md", EXAMPLE / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\s*$")
_SKIP = re.compile(r"^<!-- skip: (.+?) -->$")


@dataclass(frozen=True)
class Block:
    """One fenced ```python block: its page, the line of its first code line, its code."""

    page: Path
    line: int
    code: str
    skip: str | None


def blocks_of(page: Path) -> list[Block]:
    """The page's ```python blocks, with the reason of a ``<!-- skip: … -->`` right above."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    previous = ""  # the last non-blank line outside a block
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            if lines[index].strip():
                previous = lines[index].strip()
            index += 1
            continue
        start = index + 1
        end = start
        while not lines[end].startswith("```"):
            end += 1
        if fence.group(1) == "python":
            skip = _SKIP.match(previous)
            blocks.append(Block(page, start + 1, "\n".join(lines[start:end]),
                                skip.group(1) if skip else None))
        previous = ""
        index = end + 1
    return blocks


def _relative(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _kubeconfig(path: Path, server: str) -> Path:
    document = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "test", "user": {"token": "unused"}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@contextmanager
def _logging_restored() -> Iterator[None]:
    """Put back the root handlers and the levels a page's ``configure_logging`` changes."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {name: logging.getLogger(name).level for name in ("", *THIRD_PARTY_LOGGERS)}
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestAPIServer]:
    """What the pages assume: a cluster with the Foo CRD and ``default/example-foo``."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # never in-cluster
    with _logging_restored(), TestAPIServer() as server:
        server.install_crd(yaml.safe_load((EXAMPLE / "crds" / "foo.yaml").read_text()))
        monkeypatch.setenv("KUBECONFIG", str(_kubeconfig(tmp_path / "kubeconfig",
                                                         server.url)))
        from foo_api.clientset import Clientset
        from foo_api.samplecontroller.v1alpha1 import Foo

        clientset = Clientset.for_config(server.config())
        clientset.samplecontroller_v1alpha1.foos("default").create(Foo.model_validate({
            "metadata": {"name": "example-foo", "namespace": "default"},
            "spec": {"deploymentName": "example-foo", "replicas": 1}}))
        clientset.transport.close()
        yield server


def run_page(page: Path) -> int:
    """Run the page's blocks in order in one namespace; the number run."""
    # A real module, so pydantic resolves the annotations of models a page defines.
    module = types.ModuleType(f"docs_snippets_{page.stem.replace('-', '_')}")
    namespace = module.__dict__
    sys.modules[module.__name__] = module
    loop = asyncio.new_event_loop()
    ran = 0
    try:
        for block in blocks_of(page):
            if block.skip is not None:
                continue
            # Padded so a traceback names the page's own line numbers.
            source = "\n" * (block.line - 1) + block.code
            code = compile(source, str(page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if code.co_flags & inspect.CO_COROUTINE:
                loop.run_until_complete(eval(code, namespace))
            else:
                exec(code, namespace)
            ran += 1
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        del sys.modules[module.__name__]
    return ran


@pytest.mark.parametrize("page", [p for p in PAGES if blocks_of(p)], ids=_relative)
def test_the_python_blocks_of_the_page_run(page: Path, cluster: TestAPIServer) -> None:
    blocks = blocks_of(page)
    ran = run_page(page)
    assert ran == len([b for b in blocks if b.skip is None])


def test_python_is_fenced_as_python_so_it_runs() -> None:
    """A block fenced ```py, ```python3 or indented would escape the test: refused."""
    escaped = [f"{_relative(page)}:{number}: {line.strip()}" for page in PAGES
               for number, line in enumerate(page.read_text().splitlines(), 1)
               if re.match(r"\s*```\s*(py|python3|pycon|ipython)\s*$", line)
               or re.match(r"\s+```python", line)]
    assert escaped == []


def test_every_skipped_block_is_listed_with_its_reason() -> None:
    skipped = [(_relative(b.page), b.skip) for page in PAGES for b in blocks_of(page) if b.skip]
    assert skipped == EXPECTED_SKIPS
    ran = sum(1 for page in PAGES for b in blocks_of(page) if b.skip is None)
    print(f"\n{ran} python blocks run, {len(skipped)} skipped:", file=sys.stderr)
    for page, reason in skipped:
        print(f"  {page}: {reason}", file=sys.stderr)


#: Every ``<!-- skip: … -->`` block, in page order: adding one is a change of this list.
EXPECTED_SKIPS: list[tuple[str, str | None]] = [
    ("docs/testing.md",
     "a pytest conftest.py and test module, not a snippet to run in one session"),
]
