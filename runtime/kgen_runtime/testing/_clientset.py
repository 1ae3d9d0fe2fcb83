"""``FakeClientsetBase``: what every generated ``FakeClientset(*objects)`` is built on.

A generated fake names its resources and mixes in the generated clientset, so it has the
same typed clients, talking to the fake instead of a cluster::

    class FakeClientset(FakeClientsetBase, Clientset):
        resources = (FOO_RESOURCE,)

    fake = FakeClientset(Foo(metadata=ObjectMeta(name="a", namespace="ns")))
    fake.prepend_reactor("update", "foos", conflict_once)
    run_controller(fake)                       # uses fake.samplecontroller_v1alpha1.foos(ns)
    assert [a.verb for a in fake.actions()] == ["list", "watch", "update", "update"]
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from kgen_runtime.meta import KubeModel
from kgen_runtime.resource import Resource
from kgen_runtime.rest import BaseClientset
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._fake import Action, FakeTransport, Reactor, WatchReactor
from kgen_runtime.testing._tracker import ObjectTracker
from kgen_runtime.testing.apiserver.storage._resources import ServedResource

__all__ = ["FakeClientsetBase", "FakeServerControls"]


class FakeServerControls:
    """The fake's server side, shared by the blocking and the async fake clientset: the
    core seeded with ``objects``, the :class:`FakeTransport` in front of it (reactors and
    action log) and the :class:`ObjectTracker` reaching its store."""

    #: The generated subclass's resources; built-in kinds are always served.
    resources: ClassVar[tuple[Resource[Any], ...]] = ()
    #: The CustomResourceDefinitions (JSON) of the generated package, installed first: their
    #: kinds are then defaulted, pruned and validated by schema, as on a cluster. A resource
    #: no CRD defines is stored as given.
    crds: ClassVar[tuple[str, ...]] = ()
    core: APIServerCore
    fake_transport: FakeTransport
    tracker: ObjectTracker

    def _start_fake(self) -> FakeTransport:
        self.core = APIServerCore()
        defined = set()
        for text in self.crds:
            crd = self.core.install_crd(orjson.loads(text))
            defined.add((crd["spec"]["group"], crd["spec"]["names"]["plural"]))
        for resource in self.resources:
            if (resource.group, resource.plural) not in defined:
                self.core.serve(ServedResource.from_resource(resource))
        self.fake_transport = FakeTransport(self.core)
        self.tracker = ObjectTracker(self.core)
        return self.fake_transport

    def _seed(self, objects: tuple[KubeModel | dict[str, Any], ...]) -> None:
        for obj in objects:
            self.tracker.add(obj)

    def actions(self) -> list[Action]:
        """Every request made through the fake, oldest first."""
        return self.fake_transport.actions()

    def clear_actions(self) -> None:
        self.fake_transport.clear_actions()

    def prepend_reactor(self, verb: str, resource: str, reactor: Reactor) -> None:
        self.fake_transport.prepend_reactor(verb, resource, reactor)

    def append_reactor(self, verb: str, resource: str, reactor: Reactor) -> None:
        self.fake_transport.append_reactor(verb, resource, reactor)

    def prepend_watch_reactor(self, resource: str, reactor: WatchReactor) -> None:
        self.fake_transport.prepend_watch_reactor(resource, reactor)


class FakeClientsetBase(FakeServerControls, BaseClientset):
    """A fake clientset: an object tracker seeded with ``objects``, reached through a
    :class:`FakeTransport` that records actions and runs reactors (client-go
    ``NewSimpleClientset``).

    ``__init__`` hands the transport on cooperatively (``super().__init__(transport)``), so a
    generated clientset listed after this class in the bases gets it. Seeding records no
    actions and keeps each object's status; objects without a namespace of a namespaced kind
    go to ``default``. Thread-safe.
    """

    #: The generated subclass's resources; built-in kinds are always served.
    #: The generated subclass's resources; built-in kinds are always served.
    resources: ClassVar[tuple[Resource[Any], ...]] = ()

    def __init__(self, *objects: KubeModel | dict[str, Any]) -> None:
        super().__init__(self._start_fake())
        self._seed(objects)
