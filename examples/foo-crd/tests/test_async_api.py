"""The generated package's async side, end to end against the test API server: the typed
AsyncClientset, the generated AsyncSharedInformerFactory accessors and their listers, and
AsyncFakeClientset's reactors and recorded actions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from foo_api.clientset import AsyncClientset
from foo_api.fake import AsyncFakeClientset
from foo_api.informers import AsyncSharedInformerFactory
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import ConflictError
from kgen_runtime.testing import Action, StatusError, TestAPIServer

CRD = yaml.safe_load((Path(__file__).parents[1] / "crds" / "foo.yaml").read_text())
BOUND = 10.0


def new_foo(name: str, replicas: int = 1) -> Foo:
    return Foo(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=FooSpec(deployment_name=f"{name}-deployment", replicas=replicas),
    )


def test_typed_async_clients_informers_and_listers() -> None:
    async def main() -> tuple[list[str], int | None]:
        with TestAPIServer() as server:
            server.install_crd(CRD)
            async with AsyncClientset.for_config(server.config()) as clientset:
                foos = clientset.samplecontroller_v1alpha1.foos("default")
                await foos.create(new_foo("a"))
                factory = AsyncSharedInformerFactory(clientset.transport)
                accessor = factory.samplecontroller.v1alpha1.foos
                added: list[str] = []

                async def on_add(obj: Foo) -> None:
                    added.append(obj.metadata.name or "")

                accessor.informer.add_event_handler(on_add=on_add)
                factory.start()
                try:
                    async with asyncio.timeout(BOUND):
                        synced = await factory.wait_for_cache_sync()
                        assert all(synced.values())
                        await foos.create(new_foo("b", 3))
                        while added != ["a", "b"]:
                            await asyncio.sleep(0.01)
                    cached = accessor.lister.foos("default").get("b")
                    return added, cached.spec.replicas if cached.spec else None
                finally:
                    await factory.shutdown()

    assert asyncio.run(main()) == (["a", "b"], 3)


def test_async_fake_records_actions_and_runs_reactors() -> None:
    async def main() -> tuple[list[tuple[str, str]], int | None]:
        fake = AsyncFakeClientset(new_foo("a"))
        conflicts = iter([True])

        def conflict_once(action: Action) -> tuple[bool, Any]:
            if next(conflicts, False):
                gvr = action.resource
                raise StatusError.conflict(gvr.group, gvr.resource, action.name, "changed")
            return False, None

        fake.prepend_reactor("update", "foos", conflict_once)
        foos = fake.samplecontroller_v1alpha1.foos("default")
        for _ in range(2):  # read-modify-write, retried once on the reactor's conflict
            foo = await foos.get("a")
            assert foo.spec is not None
            foo.spec.replicas = 2
            try:
                updated = await foos.update(foo)
                break
            except ConflictError:
                continue
        actions = [(a.verb, a.name) for a in fake.actions()]
        return actions, updated.spec.replicas if updated.spec else None

    actions, replicas = asyncio.run(main())
    assert actions == [("get", "a"), ("update", "a"), ("get", "a"), ("update", "a")]
    assert replicas == 2
