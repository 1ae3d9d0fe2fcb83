"""The kit together, sample-controller style: informers over the fake clientset, enqueue and
enqueue-owner handlers, expectations, a reconciler, events, and the Manager around it all.

The controller keeps, for every ConfigMap, a Secret ``<name>-secret`` it controls.
"""

from __future__ import annotations

import threading

from kgen_runtime.api.core.v1 import ConfigMap, Secret
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.api.informers import SharedInformerFactory
from kgen_runtime.cache import split_meta_namespace_key
from kgen_runtime.controller import (
    ClientEventSink,
    Controller,
    ControllerExpectations,
    EnqueueHandler,
    EnqueueOwnerHandler,
    EventBroadcaster,
    Manager,
    ReconcilerFunc,
    Result,
    TerminalError,
    is_controlled_by,
    new_controller_ref,
)
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeObject, ObjectMeta
from kgen_runtime.rest.errors import NotFoundError, is_not_found
from tests.controller._support import eventually

CONFIG_MAP = GroupVersionKind("", "v1", "ConfigMap")


class SecretController:
    def __init__(self, fake: FakeClientset, factory: SharedInformerFactory,
                 broadcaster: EventBroadcaster) -> None:
        self.fake = fake
        configmaps = factory.core.v1.configmaps
        secrets = factory.core.v1.secrets
        self.configmaps = configmaps.lister
        self.secrets = secrets.lister
        self.expectations = ControllerExpectations()
        self.recorder = broadcaster.new_recorder("secret-controller")
        self.controller: Controller[str] = Controller(
            "secrets", ReconcilerFunc(self.sync),
            cache_synced=[configmaps.informer.has_synced, secrets.informer.has_synced])
        configmaps.informer.add_handler(EnqueueHandler(self.controller.enqueue))

        def resolve(namespace: str, name: str) -> KubeObject | None:
            try:
                return self.configmaps.configmaps(namespace).get(name)
            except NotFoundError:
                return None

        def observed(key: str) -> None:  # the owner's key, from the secret's controller ref
            # Each owner has one child, so any event of it means the cache has it.
            self.expectations.creation_observed(key)
            self.controller.enqueue(key)

        secrets.informer.add_handler(EnqueueOwnerHandler(observed, CONFIG_MAP,
                                                               resolve=resolve))

    def sync(self, key: str) -> Result | None:
        namespace, name = split_meta_namespace_key(key)
        try:
            cm = self.configmaps.configmaps(namespace).get(name)
        except NotFoundError:
            self.expectations.delete(key)
            return None
        if not self.expectations.satisfied(key):
            return None  # the informer has not seen our last create yet
        try:
            secret = self.secrets.secrets(namespace).get(f"{name}-secret")
        except NotFoundError:
            self.expectations.expect_creations(key, 1)
            try:
                self.fake.core_v1.secrets(namespace).create(Secret(
                    metadata=ObjectMeta(name=f"{name}-secret",
                                        owner_references=[new_controller_ref(cm, CONFIG_MAP)]),
                    string_data=dict(cm.data or {})))
            except Exception as err:
                self.expectations.creation_observed(key)
                if not is_not_found(err):
                    raise
            self.recorder.event(cm, "Normal", "Synced", "secret created")
            return None
        if not is_controlled_by(secret, cm):
            self.recorder.eventf(cm, "Warning", "ErrResourceExists",
                                 "Resource %r already exists and is not managed by ConfigMap",
                                 secret.metadata.name)
            raise TerminalError(f"{secret.metadata.name} is not ours")
        return None


def test_secret_controller_converges_and_recreates_deleted_children() -> None:
    stray = Secret(metadata=ObjectMeta(name="b-secret", namespace="ns"))
    fake = FakeClientset(ConfigMap(metadata=ObjectMeta(name="a", namespace="ns"),
                                   data={"k": "v"}), stray)
    factory = SharedInformerFactory(fake.transport)
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(ClientEventSink(fake.core_v1.events))
    ctl = SecretController(fake, factory, broadcaster)
    manager = Manager()
    manager.add_informer_factory(factory)
    manager.add_controller(ctl.controller, workers=4)
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    secrets = fake.core_v1.secrets("ns")

    def owned_secret(name: str) -> bool:
        try:
            secret = secrets.get(f"{name}-secret")
        except NotFoundError:
            return False
        refs = secret.metadata.owner_references or []
        return [(r.kind, r.name, r.controller) for r in refs] == [("ConfigMap", name, True)]

    eventually(lambda: owned_secret("a"))
    secrets.delete("a-secret")  # the owner handler sees the child go and the owner fixes it
    eventually(lambda: owned_secret("a"))
    fake.core_v1.configmaps("ns").create(ConfigMap(metadata=ObjectMeta(name="b")))

    def reasons() -> list[str]:
        return sorted(e.reason or "" for e in fake.core_v1.events("ns").list().items)

    eventually(lambda: reasons() == ["ErrResourceExists", "Synced"])
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    assert broadcaster.shutdown(timeout=5)
    synced = [e for e in fake.core_v1.events("ns").list().items if e.reason == "Synced"]
    assert [e.count for e in synced] == [2]  # the second creation patched the first event
    assert secrets.get("b-secret").metadata.owner_references is None  # never adopted
    creates = [a for a in fake.actions() if a.verb == "create" and a.resource.resource == "secrets"]
    assert len(creates) == 2  # expectations kept concurrent syncs from creating duplicates
