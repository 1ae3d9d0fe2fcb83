"""AsyncSharedInformerFactory.for_resource: the blocking factory's dynamic informers, on the
async twin (issue 20), over the test API server and real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

from kgen_runtime.cache import AsyncGenericInformer, AsyncSharedInformerFactory
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient
from kgen_runtime.testing import TestAPIServer
from tests.cache._foo import FOO, Foo, FooList, foo

WAIT = 10.0


def test_for_resource_uses_the_dynamic_client() -> None:
    async def main() -> None:
        with TestAPIServer() as server:
            server.register(FOO)
            transport = AsyncHTTPTransport(server.config())
            foos: AsyncResourceClient[Foo, FooList] = AsyncResourceClient(
                transport, FOO, "default"
            )
            await foos.create(foo("a"))
            factory = AsyncSharedInformerFactory(transport)
            generic = factory.for_resource(FOO.gvr)
            assert isinstance(generic, AsyncGenericInformer)
            assert factory.for_resource(FOO.gvr).informer is generic.informer
            typed: Any = factory.informer_for(FOO)
            assert generic.informer is not typed  # typed and dynamic informers are distinct
            factory.start()
            try:
                # Both informers of the resource count: synced only when both are.
                assert await factory.wait_for_cache_sync(timeout=WAIT) == {FOO.gvr: True}
                got = generic.lister.namespaced("default").get("a")
                assert isinstance(got, Unstructured)
                assert got.metadata.name == "a"
                assert got["kind"] == "Foo"
                assert [o.metadata.name for o in typed.indexer.list()] == ["a"]
            finally:
                await factory.shutdown()
                await transport.aclose()

    async def bounded() -> None:
        async with asyncio.timeout(WAIT * 3):
            await main()

    asyncio.run(bounded())
