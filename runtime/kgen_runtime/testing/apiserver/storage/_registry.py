"""The table of served resources and the discovery documents built from it.

Thread-safe; lookups see a resource as soon as :meth:`Registry.add` returns. Discovery
mirrors the real server: ``/api`` (``APIVersions``), ``/apis`` (``APIGroupList``),
``/apis/{group}`` (``APIGroup``) and ``/api/v1``, ``/apis/{group}/{version}``
(``APIResourceList``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

from kgen_runtime.testing.apiserver.storage._resources import ServedResource

__all__ = ["Registry", "version_priority"]

_GroupVersion = tuple[str, str]


class Registry:
    """Served resources by (group, version, plural) and by (group, version, kind)."""

    def __init__(self, resources: Iterable[ServedResource] = ()) -> None:
        self._lock = threading.Lock()
        self._by_plural: dict[tuple[str, str, str], ServedResource] = {}
        for resource in resources:
            self.add(resource)

    def add(self, resource: ServedResource) -> None:
        """Serve ``resource``, replacing any earlier definition of the same plural."""
        with self._lock:
            self._by_plural[(resource.group, resource.version, resource.plural)] = resource

    def remove(self, group: str, plural: str) -> list[ServedResource]:
        """Stop serving every version of ``plural.group``; returns what was removed."""
        with self._lock:
            return self._remove_locked(group, plural)

    def replace(self, group: str, plural: str, versions: Iterable[ServedResource]) -> None:
        """Serve exactly ``versions`` of ``plural.group``, atomically (a CRD update)."""
        with self._lock:
            self._remove_locked(group, plural)
            for resource in versions:
                self._by_plural[(resource.group, resource.version, resource.plural)] = resource

    def _remove_locked(self, group: str, plural: str) -> list[ServedResource]:
        keys = [k for k in self._by_plural if k[0] == group and k[2] == plural]
        return [self._by_plural.pop(k) for k in keys]

    def lookup(self, group: str, version: str, plural: str) -> ServedResource | None:
        with self._lock:
            return self._by_plural.get((group, version, plural))

    def versions(self, group: str, plural: str) -> list[ServedResource]:
        """Every served version of ``plural.group``, in the order they were added (a CRD's
        ``spec.versions`` order, as kube-apiserver's equivalent-resource registry keeps it)."""
        with self._lock:
            return [r for r in self._by_plural.values()
                    if r.group == group and r.plural == plural]

    def for_kind(self, api_version: str, kind: str) -> ServedResource | None:
        """The resource serving objects of ``apiVersion``/``kind`` (first by plural)."""
        group, _, version = api_version.rpartition("/")
        with self._lock:
            matches = sorted(
                (r for r in self._by_plural.values()
                 if r.group == group and r.version == version and r.kind == kind),
                key=lambda r: r.plural,
            )
        return matches[0] if matches else None

    def served(self) -> list[ServedResource]:
        with self._lock:
            return sorted(self._by_plural.values(), key=lambda r: (r.group, r.version, r.plural))

    # -- discovery ----------------------------------------------------------------------------

    def api_versions(self) -> dict[str, Any]:
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}

    def api_group_list(self) -> dict[str, Any]:
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group(g, vs) for g, vs in self._groups().items() if g]}

    def api_group(self, group: str) -> dict[str, Any] | None:
        versions = self._groups().get(group)
        if not group or versions is None:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group(group, versions)}

    def api_resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        resources = [r for r in self.served() if (r.group, r.version) == (group, version)]
        if not resources:
            return None
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": [entry for r in resources for entry in r.describe()],
        }

    def _groups(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for resource in self.served():
            versions = groups.setdefault(resource.group, [])
            if resource.version not in versions:
                versions.append(resource.version)
        return groups

    @staticmethod
    def _group(group: str, versions: list[str]) -> dict[str, Any]:
        entries = [{"groupVersion": f"{group}/{v}", "version": v}
                   for v in sorted(versions, key=version_priority)]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version order: GA before beta before alpha, higher numbers first."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (3, 0, 0, version)
    stability = {"": 0, "beta": 1, "alpha": 2}[match[2] or ""]
    return (stability, -int(match[1]), -int(match[3] or 0), version)
