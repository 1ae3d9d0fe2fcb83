"""The asyncio fake runs the same admission chain as the sync fake and the test server, and
keeps its event loop running while a webhook is called, as a real server's I/O would."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import orjson

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.rest import Request
from kgen_runtime.testing import AsyncFakeTransport, FakeClientsetBase
from kgen_runtime.webhook import WebhookServer
from tests._webhooks import Certs

Obj = dict[str, Any]

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


async def send(transport: AsyncFakeTransport, method: str, path: str,
               body: Obj | None = None) -> tuple[int, Any]:
    response = await transport.send(Request(
        method, path, (), None if body is None else orjson.dumps(body),
        None if body is None else "application/json"))
    return response.status, orjson.loads(await response.read())


def test_a_webhook_reading_through_the_async_fake_during_admission_does_not_deadlock(
    server: WebhookServer, certs: Certs
) -> None:
    transport = AsyncFakeTransport(FakeClientsetBase().fake_transport)
    loops: list[asyncio.AbstractEventLoop] = []

    def tier_from_settings(cm: ConfigMap) -> None:
        """Reads another ConfigMap through the fake, on the loop the write came from."""
        read = asyncio.run_coroutine_threadsafe(
            send(transport, "GET", f"{CONFIGMAPS}/settings"), loops[0])
        settings = read.result(timeout=5)[1]
        cm.data = {**(cm.data or {}), "tier": settings["data"]["tier"]}

    server.defaulter(ConfigMap, tier_from_settings, path="/from-settings")
    server.start()
    assert server.address is not None
    host, port = server.address

    async def scenario() -> tuple[int, Any]:
        loops.append(asyncio.get_running_loop())
        await send(transport, "POST", CONFIGMAPS, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
            "data": {"tier": "silver"}})
        status, _ = await send(transport, "POST", MUTATING, {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": "reads"},
            "webhooks": [{
                "name": "reads.example.com", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
                "clientConfig": {"url": f"https://{host}:{port}/from-settings",
                                 "caBundle": base64.b64encode(certs.ca.read_bytes()).decode()},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                           "resources": ["configmaps"]}],
                "objectSelector": {"matchLabels": {"read": "yes"}}}]})
        assert status == 201
        return await send(transport, "POST", CONFIGMAPS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app", "labels": {"read": "yes"}}})

    async def bounded() -> tuple[int, Any]:
        async with asyncio.timeout(20):
            return await scenario()

    status, created = asyncio.run(bounded())
    assert (status, created["data"]) == (201, {"tier": "silver"})
