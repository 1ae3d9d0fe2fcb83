"""Find input files and split them into JSON/YAML documents."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from kgen.diagnostics import Diagnostic, Location
from kgen.load.goyaml import Loader

__all__ = ["Document", "find_input_files", "read_documents"]

INPUT_SUFFIXES = (".yaml", ".yml", ".json")

@dataclass(frozen=True, slots=True)
class Document:
    """One parsed document of an input file, with its index in that file."""

    location: Location
    data: Any


def find_input_files(inputs: Sequence[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """Expand files and directories (recursively) into input files, sorted by path."""
    files: set[Path] = set()
    problems: list[Diagnostic] = []
    for item in inputs:
        if item.is_dir():
            files.update(
                p for p in item.rglob("*") if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES
            )
        elif item.is_file():
            files.add(item)
        else:
            problems.append(Diagnostic(Location(str(item)), "no such file or directory"))
    return sorted(files), problems


def read_documents(path: Path) -> Iterator[Document | Diagnostic]:
    """Yield every non-empty document of a JSON or (multi-document) YAML file.

    Unreadable files and syntax errors come back as diagnostics (with line and column for
    YAML) rather than exceptions, so all inputs are checked in one run.
    """
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        yield Diagnostic(Location(name), f"cannot read file: {err.strerror or err}")
        return
    if path.suffix.lower() == ".json":
        try:
            yield Document(Location(name, 0), orjson.loads(raw))
        except orjson.JSONDecodeError as err:
            yield Diagnostic(Location(name), f"invalid JSON: {err}")
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        yield Diagnostic(Location(name), f"not UTF-8 text: {err}")
        return
    index = 0
    try:
        for data in yaml.load_all(text, Loader=Loader):
            if data is not None:
                yield Document(Location(name, index), data)
            index += 1
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        yield Diagnostic(Location(name, index), f"invalid YAML{where}: {err.problem or err}")
    except yaml.YAMLError as err:
        yield Diagnostic(Location(name, index), f"invalid YAML: {err}")
