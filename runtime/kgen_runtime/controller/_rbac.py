"""The RBAC permissions a controller needs, as rbac/v1 ``PolicyRule``\\ s (what kubebuilder's
``+kubebuilder:rbac`` markers and controller-gen produce, derived here from the builder).

:class:`PermissionSet` collects ``(group, resource, verb)`` triples; :meth:`~PermissionSet.rules`
turns them into one rule per group and resource, sorted by group then resource, verbs sorted:
the same set always gives the same rules, ready for a Role or ClusterRole manifest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kgen_runtime.api.rbac.v1.models import PolicyRule
from kgen_runtime.resource import Resource

__all__ = [
    "EVENT_VERBS",
    "LEASE_VERBS",
    "OWNED_VERBS",
    "PRIMARY_VERBS",
    "READ_VERBS",
    "PermissionSet",
]

READ_VERBS = ("get", "list", "watch")
"""What the cache (informers) and the client's reads need of a kind."""
PRIMARY_VERBS = (*READ_VERBS, "update", "patch")
"""The reconciled (``for_``) kind: read, and written (finalizers, labels, annotations)."""
OWNED_VERBS = (*READ_VERBS, "create", "update", "patch", "delete")
"""A kind the controller makes and keeps (``owns``)."""
EVENT_VERBS = ("create", "patch")
"""core/v1 Events, as the event recorder writes them (new, then counted up by patches)."""
LEASE_VERBS = ("get", "create", "update")
"""coordination.k8s.io/v1 Leases, as leader election uses them."""


class PermissionSet:
    """A set of ``(group, resource, verb)`` permissions; not thread-safe."""

    def __init__(self) -> None:
        self._verbs: dict[tuple[str, str], set[str]] = {}

    def add(self, group: str, resource: str, verbs: Iterable[str]) -> None:
        """Allow ``verbs`` on ``resource`` (``"foos"`` or a subresource ``"foos/status"``)."""
        self._verbs.setdefault((group, resource), set()).update(verbs)

    def add_kind(self, resource: Resource[Any], verbs: Iterable[str]) -> None:
        """Allow ``verbs`` on the resource serving a kind."""
        self.add(resource.group, resource.plural, verbs)

    def update(self, rules: Iterable[PolicyRule]) -> None:
        """Add every ``(group, resource, verb)`` that ``rules`` allow."""
        for rule in rules:
            for group in rule.api_groups or ():
                for resource in rule.resources or ():
                    self.add(group, resource, rule.verbs or ())

    def allows(self, group: str, resource: str, verb: str) -> bool:
        """Whether ``verb`` on ``resource`` of ``group`` is in the set."""
        return verb in self._verbs.get((group, resource), ())

    def rules(self) -> list[PolicyRule]:
        """One rule per group and resource, sorted by group then resource; verbs sorted."""
        return [
            PolicyRule(api_groups=[group], resources=[resource], verbs=sorted(verbs))
            for (group, resource), verbs in sorted(self._verbs.items())
        ]
