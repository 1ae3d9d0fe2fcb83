"""How a manager takes part in a shard ring: :class:`ShardingConfig`.

It has the shape of :class:`~kgen_runtime.leaderelection.LeaderElectionConfig`, the kit's
other Lease-backed manager option (controller-runtime has none for sharding: its users run
timebertt/kubernetes-controller-sharding beside it), so ``Manager(sharding=...)`` reads as
``Manager(leader_election=...)`` does. The manager makes the member
(:class:`~kgen_runtime.sharding.ShardMember`, or the async twin) over its cluster's transport,
runs it from before its caches start until after its controllers stopped (so a member leaves
the ring only once its reconciles ended), and points its ``on_ranges_changed`` at the cache's
sharded informers. Every replica runs its controllers: sharding replaces leader election.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from kgen_runtime.controller._cluster.shards import CacheShards
from kgen_runtime.controller._rbac import PermissionSet
from kgen_runtime.sharding import ShardField

M = TypeVar("M")

__all__ = [
    "SHARD_LEASE_VERBS",
    "ShardingConfig",
    "add_lease_rules",
    "check_sharding",
    "new_member",
]

SHARD_LEASE_VERBS = ("get", "list", "watch", "create", "update", "delete")
"""coordination.k8s.io/v1 Leases, as a ring member uses them (it lists the ring's Leases by
label and deletes its own when it leaves)."""


@dataclass(frozen=True, slots=True)
class ShardingConfig:
    """A manager's membership in a shard ring (see the module docstring).

    Attributes:
        ring: The ring's name: the label value of its members' Leases.
        member: This replica's name in the ring (its Lease's name), e.g. the pod's name.
        lease_namespace: The namespace of the ring's Leases.
        field: What the objects of sharded kinds are hashed by: ``metadata.uid`` (default)
            or ``metadata.namespace``.
        lease_duration: Seconds a member's Lease lasts without renewal.
        renew_period: Seconds between a member's rounds.
    """

    ring: str
    member: str
    lease_namespace: str
    field: ShardField = ShardField.UID
    lease_duration: float = 15.0
    renew_period: float = 5.0

    def __post_init__(self) -> None:
        for name in ("ring", "member", "lease_namespace"):
            if not getattr(self, name):
                raise ValueError(f"ShardingConfig.{name} must not be empty")


def check_sharding(sharding: ShardingConfig | None, leader_election: object,
                   cluster: object) -> None:
    """Refuse a manager that both shards and elects a leader, or shards without a cluster."""
    if sharding is None:
        return
    if leader_election is not None:
        raise ValueError("a manager with sharding runs its controllers on every replica: "
                         "leave leader_election unset")
    if cluster is None:
        raise ValueError("a manager with sharding needs a cluster: its cache is what is sharded")


def add_lease_rules(permissions: PermissionSet) -> None:
    """The Lease permissions of a ring member."""
    permissions.add("coordination.k8s.io", "leases", SHARD_LEASE_VERBS)


def new_member(member_type: Callable[..., M], leases: Any, sharding: ShardingConfig,
               shards: CacheShards, clock: Any, now: Callable[[], datetime]) -> M:
    """The manager's ring member (a ``ShardMember`` or ``AsyncShardMember`` over the Lease
    client ``leases``), reporting its ranges to the cache's sharded informers."""
    shards.enable(sharding.field)
    return member_type(leases, sharding.ring, sharding.member,
                       on_ranges_changed=shards.set_ranges,
                       lease_duration=sharding.lease_duration,
                       renew_period=sharding.renew_period, clock=clock, wall_now=now)
