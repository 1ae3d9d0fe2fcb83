"""What the sharded-manager tests (blocking and async) share: the objects (ConfigMaps, and
the Secrets they control), and a ledger of who reconciled what."""

from __future__ import annotations

import threading

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap, Secret
from kgen_runtime.meta import ObjectMeta, OwnerReference
from kgen_runtime.sharding import HashRange, fnv1a64

NS = "objects"
COUNT = 20
WAIT = 20.0  # seconds any one condition may take: a few lease rounds of 0.1 s, and relists


class Ledger:
    """Who reconciles what: the reconciles running per object (must never exceed one) and,
    in order, every reconcile that ran, as (manager, object name)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}
        self.overlaps: list[tuple[str, str, str]] = []
        self.log: list[tuple[str, str]] = []

    def enter(self, manager: str, name: str) -> None:
        """A reconcile of ``name`` by ``manager`` begins."""
        with self._lock:
            other = self._running.get(name)
            if other is not None:
                self.overlaps.append((name, other, manager))
            self._running[name] = manager
            self.log.append((manager, name))

    def leave(self, name: str) -> None:
        """The reconcile of ``name`` ends."""
        with self._lock:
            del self._running[name]

    def reconciled_by(self, manager: str, since: int = 0) -> set[str]:
        with self._lock:
            return {name for who, name in self.log[since:] if who == manager}


def create_objects(clients: Clientset) -> dict[str, str]:
    """COUNT ConfigMaps in NS, each controlling a Secret of the same name, and two Secrets
    no ConfigMap controls: one without owners, one with a ConfigMap owner that is not its
    controller. The ConfigMaps' uids by name."""
    uids = {}
    for i in range(COUNT):
        made = clients.core_v1.configmaps(NS).create(
            ConfigMap(metadata=ObjectMeta(name=f"cm-{i:02}"), data={"i": str(i)}))
        assert made.metadata is not None and made.metadata.uid
        uids[made.metadata.name or ""] = made.metadata.uid
    secrets = clients.core_v1.secrets(NS)
    for name, uid in uids.items():
        secrets.create(Secret(metadata=ObjectMeta(name=name, owner_references=[
            _owner(name, uid, controller=True)])))
    secrets.create(Secret(metadata=ObjectMeta(name="unowned")))
    secrets.create(Secret(metadata=ObjectMeta(name="not-controlled", owner_references=[
        _owner("cm-00", uids["cm-00"], controller=False)])))
    return uids


def _owner(name: str, uid: str, *, controller: bool) -> OwnerReference:
    return OwnerReference(api_version="v1", kind="ConfigMap", name=name, uid=uid,
                          controller=controller, block_owner_deletion=True)



def in_ranges(uids: dict[str, str], ranges: tuple[HashRange, ...]) -> set[str]:
    """The objects whose uid hashes into ``ranges``."""
    return {name for name, uid in uids.items()
            if any(fnv1a64(uid) in hash_range for hash_range in ranges)}
