"""Foo builders and a bounded reader of watch events, shared by the conformance tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.watch import WatchEvent

__all__ = ["foo", "invalid_foo", "names", "next_events"]


def foo(
    name: str,
    replicas: int = 1,
    *,
    labels: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
) -> Foo:
    """A new Foo with a spec (no status: the status subresource ignores it on create)."""
    metadata = ObjectMeta(name=name)
    if labels is not None:  # set only what is given: apply reads an explicit null as a value
        metadata.labels = labels
    if finalizers is not None:
        metadata.finalizers = finalizers
    return Foo(
        metadata=metadata, spec=FooSpec(deployment_name=f"{name}-deployment", replicas=replicas)
    )


def names(foos: Sequence[Foo]) -> list[str]:
    """The names of ``foos``, in order."""
    return [item.metadata.name or "" for item in foos]


def invalid_foo(name: str, spec: dict[str, Any]) -> Foo:
    """A Foo the schema refuses: decoded leniently, since strict construction would refuse it
    on the client already."""
    return Foo.model_validate({"metadata": {"name": name}, "spec": spec})


def next_events(events: Iterator[WatchEvent[Foo]], count: int) -> list[tuple[str, Foo]]:
    """The next ``count`` events as ``(type, object)``.

    Bounded by the watch's read timeout: a silent stream raises ``TimeoutError``, an ended one
    ``AssertionError``.
    """
    taken: list[tuple[str, Foo]] = []
    for event in events:
        taken.append((event.type, event.object))
        if len(taken) == count:
            return taken
    raise AssertionError(f"the watch ended after {taken}, expecting {count} events")
