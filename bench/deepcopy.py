"""Deep copies: a generated model's ``deepcopy()`` against ``copy.deepcopy`` and pydantic's
``model_copy(deep=True)``.

Run: ``.venv/bin/python bench/deepcopy.py`` (about 30 s; the first run also formats the
generated package, ~20 s more). Three objects: from the corpus's examples the sample
controller's Foo and the example whose decoded object is the largest (found by size, so a
richer example joining the corpus is picked up: today a Tekton TaskRun), and the realistic
apps/v1 Deployment of bench/decode.py (two containers, probes, managedFields, status).
``deepcopy()`` and the baselines ``copy.deepcopy`` and ``model_copy(deep=True)`` copy each
as clients and informers decode it (``model_from_wire``).
The Deployment is copied after a reconcile's four reads (``metadata.name``, ``spec.replicas``,
the first container's image, ``status.readyReplicas``). ``deepcopy()`` copies the top level
and shares nested values until first read (``kgen_runtime.meta._cow``), so its row counts
the copy alone: the one-level copies on the way to a later edit are in
``bench/controller_path.py``'s edit step. Every copy is checked equal to its source before
timing, and any mutable value it shares with the source reached through attributes (which
is what code reading or changing a model reaches) is reported. Target: ``deepcopy()`` at
least 10x faster than ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
import csv
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from _common import CORPUS, best_time, best_times, generated_package, print_load, report
from decode import deployment  # the realistic Deployment of bench/decode.py

from kgen_runtime.api.apps.v1.models import Deployment
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeModel

EXAMPLES = CORPUS / "examples"
FOO_EXAMPLE = "kubernetes__sample-controller__foos__example-foo.yaml"
FOO_CRD = "kubernetes__sample-controller__foos-status-subresource.yaml"
COPY_SECONDS = 0.2  # each timing copies for about this long

Copier = Callable[[], KubeModel]


class _Loader(yaml.SafeLoader):
    """Timestamps stay strings, as the API server's YAML → JSON conversion leaves them."""


def _timestamp_as_string(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_string)


@dataclass(frozen=True)
class Example:
    file: str
    crd_file: str
    document: dict[str, Any]

    @property
    def size(self) -> int:
        return len(orjson.dumps(self.document))

    @property
    def gvk(self) -> GroupVersionKind:
        group, _, version = self.document["apiVersion"].rpartition("/")
        return GroupVersionKind(group, version, self.document["kind"])


def examples() -> Iterator[Example]:
    """Every example document whose kind's CRD is in the corpus."""
    with (EXAMPLES / "EXAMPLES.tsv").open(newline="") as index:
        for row in csv.DictReader(index, delimiter="\t"):
            generated_kinds = set(row["kinds_whose_crd_is_in_corpus"].split(","))
            text = (EXAMPLES / row["file"]).read_text()
            for document in yaml.load_all(text, Loader=_Loader):
                if document and document.get("kind") in generated_kinds:
                    yield Example(row["file"], row["crd_file"], document)


def shared_mutables(original: KubeModel, copied: KubeModel) -> list[Any]:
    """Check that ``copied`` equals ``original``; return the mutable values they share."""
    assert copied is not original and copied.model_dump() == original.model_dump()
    ours = {id(v): v for v in _containers(original)}
    return [ours[i] for i in ours.keys() & {id(v) for v in _containers(copied)}]


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, KubeModel):
        yield value
        for name in type(value).model_fields:
            yield from _containers(getattr(value, name))
        yield from _containers(value.model_extra)
    elif isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _containers(item)
    elif isinstance(value, list):
        yield value
        for item in value:
            yield from _containers(item)


def batched(copier: Callable[[], object]) -> tuple[Callable[[], None], int]:
    """A run of ``copier`` repeated for about COPY_SECONDS, and its repeat count."""
    count = max(1, int(COPY_SECONDS / best_time(copier, repeat=3)))

    def run() -> None:
        for _ in range(count):
            copier()

    return run, count


def bench(
    title: str,
    cls: type[KubeModel],
    document: dict[str, Any],
    read: Callable[[Any], object] | None = None,
) -> None:
    """Time the copies of one object as decoded (and read by ``read``); every side copies
    its own decoded object, and the check walks others (reading a copy changes it)."""

    def decoded() -> KubeModel:
        model = cls.model_from_wire(copy.deepcopy(document))
        if read is not None:
            read(model)
        return model

    def copiers(
        source: Callable[[], KubeModel],
    ) -> dict[str, tuple[KubeModel, Callable[[], KubeModel]]]:
        ours, copied, model_copied = source(), source(), source()
        return {
            "deepcopy()": (ours, ours.deepcopy),
            "copy.deepcopy": (copied, lambda: copy.deepcopy(copied)),
            "model_copy(deep=True)": (model_copied, lambda: model_copied.model_copy(deep=True)),
        }

    for name, (original, copier) in copiers(decoded).items():
        shared = shared_mutables(original, copier())
        if shared:
            print(
                f"WARNING: {name} shares {len(shared)} mutable values with the original: "
                f"{', '.join(sorted(repr(v)[:20] for v in shared))}"
            )
    timed = copiers(decoded)
    runs = [batched(copier) for _, copier in timed.values()]
    times = best_times(*(run for run, _ in runs))
    ours, *baselines = [t / count for t, (_, count) in zip(times, runs, strict=True)]
    print(f"\n{title}: deepcopy() {ours * 1e6:,.1f} µs per copy")
    for name, baseline in zip(list(timed)[1:], baselines, strict=True):
        report(f"  deepcopy() vs {name}", "copies", 1 / ours, 1 / baseline, name)


def read_four_fields(d: Any) -> object:
    """What a reconcile reads (bench/controller_path.py)."""
    return (
        d.metadata.name,
        d.spec.replicas,
        d.spec.template.spec.containers[0].image,
        d.status.ready_replicas,
    )


def main() -> None:
    print_load()
    found = list(examples())
    foo = next(e for e in found if e.file == FOO_EXAMPLE)
    largest = max(found, key=lambda e: e.size)
    inputs = sorted({CORPUS / FOO_CRD, CORPUS / largest.crd_file})
    with generated_package(inputs, "kgen_bench_deepcopy") as package:
        scheme = importlib.import_module(f"{package.__name__}.scheme").scheme
        for example in (foo, largest):
            title = f"{example.gvk.kind} ({example.file}, {example.size:,} B of JSON)"
            bench(title, scheme.class_for(example.gvk), example.document)
    document = deployment(1)
    size = len(orjson.dumps(document))
    title = f"Deployment (bench/decode.py, {size:,} B of JSON), after the four reads"
    bench(title, Deployment, document, read_four_fields)
    print_load()


if __name__ == "__main__":
    main()
