"""URL paths of the Kubernetes REST API, built in one place.

``/api/v1/...`` for the core group (empty group name), ``/apis/<group>/<version>/...`` for
every other group; ``namespaces/<ns>/`` only for namespaced resources given a namespace.
"""

from __future__ import annotations

__all__ = ["resource_path"]


def resource_path(
    group: str,
    version: str,
    plural: str,
    *,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The path of a collection (``name=None``), an object, or an object's subresource.

    Raises:
        ValueError: ``name`` (or ``namespace``) is empty or cannot be a path segment
            (``.``, ``..``, or containing ``/`` or ``%``), like client-go's path checks.
    """
    parts = [f"/apis/{group}/{version}" if group else f"/api/{version}"]
    if namespace:
        parts += ["namespaces", _segment(namespace, "namespace")]
    parts.append(plural)
    if name is not None:
        parts.append(_segment(name, "name"))
        if subresource:
            parts.append(subresource)
    elif subresource:
        raise ValueError(f"subresource {subresource!r} needs an object name")
    return "/".join(parts)


def _segment(value: str, what: str) -> str:
    if not value:
        raise ValueError(f"resource {what} may not be empty")
    if value in {".", ".."} or "/" in value or "%" in value:
        raise ValueError(f"resource {what} {value!r} may not be used in a URL path")
    return value
