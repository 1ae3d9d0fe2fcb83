"""kgen's models against datamodel-code-generator's, from the same Prometheus CRD schema.

Why kgen renders models from its own IR and templates instead of through
datamodel-code-generator: generation time, class count, numbered name collisions, and the
decode time of the same 2,000 objects (``bench/decode.py``'s data) into each — measured here,
in one run. datamodel-code-generator gets the CRD's openAPIV3Schema as JSON Schema with
snake_case fields, its usual way for CRDs.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml
from _common import best_times, generated_package, print_load
from decode import CRD, ITEMS, prometheus

_NUMBERED = re.compile(r"\D\d+$")


def _datamodel_codegen(schema: dict[str, object], folder: Path) -> tuple[float, Path]:
    source = folder / "schema.json"
    source.write_text(json.dumps(schema))
    output = folder / "prom_dcg.py"
    started = time.perf_counter()
    subprocess.run(
        [
            str(Path(sys.executable).parent / "datamodel-codegen"),
            "--input", str(source),
            "--input-file-type", "jsonschema",
            "--output", str(output),
            "--output-model-type", "pydantic_v2.BaseModel",
            "--snake-case-field",
            "--class-name", "Prometheus",
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started, output


def _classes(path: Path) -> list[str]:
    return re.findall(r"^class (\w+)", path.read_text(), re.M)


def main() -> None:
    print_load()
    crd = yaml.safe_load(CRD.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    items = [prometheus(i) for i in range(ITEMS)]
    data = orjson.dumps(items)
    with tempfile.TemporaryDirectory(prefix="kgen-bench-dcg-") as folder:
        dcg_seconds, dcg_file = _datamodel_codegen(schema, Path(folder))
        dcg_classes = _classes(dcg_file)
        sys.path.insert(0, folder)
        dcg_model = importlib.import_module("prom_dcg").Prometheus
        os.environ["KGEN_CACHE_DIR"] = str(Path(folder) / "kgen-cache")  # a cold kgen run
        started = time.perf_counter()
        with generated_package([CRD], "kgen_bench_vs_dcg") as package:
            kgen_seconds = time.perf_counter() - started
            models = importlib.import_module(f"{package.__name__}.monitoring.v1.models")
            kgen_classes = _classes(Path(models.__file__))
            ours, theirs = best_times(
                lambda: [models.Prometheus.model_validate(i) for i in orjson.loads(data)],
                lambda: [dcg_model.model_validate(i) for i in orjson.loads(data)],
            )
    print(f"Prometheus CRD ({CRD.name}), one version")
    print(f"{'':34}{'kgen':>12}{'datamodel-codegen':>20}")
    print(f"{'generate (s, kgen incl. black)':34}{kgen_seconds:>12.1f}{dcg_seconds:>20.1f}")
    print(f"{'classes':34}{len(kgen_classes):>12}{len(dcg_classes):>20}")
    numbered = [sum(1 for c in cs if _NUMBERED.search(c)) for cs in (kgen_classes, dcg_classes)]
    print(f"{'names ending in a digit (Limits13)':34}{numbered[0]:>12}{numbered[1]:>20}")
    print(f"{f'decode {ITEMS:,} objects (ms)':34}{ours * 1e3:>12.1f}{theirs * 1e3:>20.1f}")
    print(f"kgen decodes in {ours / theirs:.2f}x datamodel-codegen's time (lossless, lenient)")
    print_load()


if __name__ == "__main__":
    main()
