"""Write an object into the state a function describes (controller-runtime's
``controllerutil.CreateOrUpdate`` and ``CreateOrPatch``)::

    def mutate(deployment: Deployment) -> None:        # sets what this controller owns
        deployment.spec = desired_spec(foo)
        set_controller_reference(foo, deployment, scheme)

    result, deployment = create_or_update(client, Deployment(metadata=ObjectMeta(
        name="web", namespace="default")), mutate)
    result                                               # OperationResult.CREATED / ...

The object is read through the client (the cache, for a manager's client). Absent, ``mutate``
runs on a copy of the given object, which is created. Present, ``mutate`` runs on a copy of
the stored object; if that changed nothing on the wire the result is ``UNCHANGED`` and no
request is made. ``mutate`` must not change the name or namespace (``ValueError``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kgen_runtime.controller._cluster.client import Client
from kgen_runtime.meta import KubeObject
from kgen_runtime.rest.errors import NotFoundError

__all__ = ["OperationResult", "create_or_patch", "create_or_update", "merge_patch"]

T = TypeVar("T", bound=KubeObject)

MutateFunc = Callable[[T], None]


class OperationResult(enum.StrEnum):
    """What :func:`create_or_update` / :func:`create_or_patch` did."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    """The object and its status were patched."""
    UPDATED_STATUS_ONLY = "updatedStatusOnly"
    """Only the status was patched."""


def create_or_update(client: Client, obj: T, mutate: MutateFunc[T]) -> tuple[OperationResult, T]:
    """Create the object named like ``obj`` or update it with ``mutate`` applied.

    Returns what was done and the object as stored (the server's copy after a write).
    ``obj`` itself is never changed. Status changes are sent with the update, which the
    status subresource ignores: use :func:`create_or_patch` to write a status too.
    """
    current = _get(client, obj)
    if current is None:
        return OperationResult.CREATED, client.create(_mutated(obj, mutate))
    desired = _mutated(current, mutate)
    if desired.model_dump() == current.model_dump():
        return OperationResult.UNCHANGED, current
    return OperationResult.UPDATED, client.update(desired)


def create_or_patch(client: Client, obj: T, mutate: MutateFunc[T]) -> tuple[OperationResult, T]:
    """Create the object named like ``obj``, or patch what ``mutate`` changed.

    Changes outside ``status`` go in one JSON merge patch; with a status subresource, a
    status change goes in a second one to ``/status``. Returns what was done (``UPDATED``,
    ``UPDATED_STATUS`` for both, ``UPDATED_STATUS_ONLY``) and the object as stored. A
    created object's status is not written (the server ignores it on create).
    """
    current = _get(client, obj)
    if current is None:
        return OperationResult.CREATED, client.create(_mutated(obj, mutate))
    desired = _mutated(current, mutate)
    before, after = current.model_dump(), desired.model_dump()
    if not client.kinds.resource_for(type(obj)).status_subresource:
        patch = merge_patch(before, after)
        if not patch:
            return OperationResult.UNCHANGED, current
        return OperationResult.UPDATED, client.patch(current, patch)
    status_patch = merge_patch({"status": before.pop("status", None)},
                               {"status": after.pop("status", None)})
    patch = merge_patch(before, after)
    result = current
    if patch:
        result = client.patch(current, patch)
    if status_patch:
        result = client.patch_status(current, status_patch)
    if patch and status_patch:
        return OperationResult.UPDATED_STATUS, result
    if status_patch:
        return OperationResult.UPDATED_STATUS_ONLY, result
    return (OperationResult.UPDATED if patch else OperationResult.UNCHANGED), result


def merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) turning ``original`` into ``modified``; ``{}`` if
    they are equal. Lists are replaced whole; a removed key becomes ``None`` (null)."""
    patch: dict[str, Any] = {key: None for key in sorted(original.keys() - modified.keys())}
    for key, value in modified.items():
        old = original.get(key, _MISSING)
        if old == value:
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            patch[key] = merge_patch(old, value)
        else:
            patch[key] = value
    return patch


_MISSING = object()


def _get(client: Client, obj: T) -> T | None:
    meta = obj.metadata
    if not meta.name:
        raise ValueError(f"{type(obj).__name__} has no metadata.name")
    try:
        return client.get(type(obj), meta.namespace or "", meta.name)
    except NotFoundError:
        return None


def _mutated(obj: T, mutate: MutateFunc[T]) -> T:
    copy = obj.deepcopy()
    mutate(copy)
    if (copy.metadata.name, copy.metadata.namespace) != (obj.metadata.name,
                                                          obj.metadata.namespace):
        raise ValueError("mutate must not change the object's name or namespace")
    return copy
