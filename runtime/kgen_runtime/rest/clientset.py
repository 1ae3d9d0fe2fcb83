"""Bases of generated clientsets (client-go's ``kubernetes.Clientset`` and group clients).

A generated clientset names its group-versions and nothing else::

    class SamplecontrollerV1alpha1Client(GroupVersionClient):
        def foos(self, namespace: str) -> FooClient:
            return FooClient(self.transport, FOO_RESOURCE, namespace)

    class Clientset(BaseClientset):
        @cached_property
        def samplecontroller_v1alpha1(self) -> SamplecontrollerV1alpha1Client:
            return SamplecontrollerV1alpha1Client(self.transport)

Every client of one clientset shares its transport, hence one connection pool and one
client-side rate limit, like client-go's clientsets built from one ``rest.Config``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from kgen_runtime.rest._request import Transport
from kgen_runtime.rest.config import Config
from kgen_runtime.rest.dynamic import DynamicClient
from kgen_runtime.rest.transport import HTTPTransport

__all__ = ["BaseClientset", "GroupVersionClient"]


class GroupVersionClient:
    """The clients of one API group-version, over a shared transport."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport


class BaseClientset:
    """Holds the transport every group-version client of a clientset uses.

    Construct over any transport (a fake, the test API server), or with :meth:`for_config`
    over a new :class:`HTTPTransport`, which :meth:`close` (or leaving a ``with`` block) then
    closes. Thread-safe.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._owned: HTTPTransport | None = None

    @classmethod
    def for_config(cls, config: Config) -> Self:
        """A clientset over one new HTTP transport to ``config.host``."""
        transport = HTTPTransport(config)
        clientset = cls(transport)
        clientset._owned = transport
        return clientset

    @property
    def dynamic(self) -> DynamicClient:
        """A dynamic client over the same transport."""
        return DynamicClient(self.transport)

    def close(self) -> None:
        """Close the transport if :meth:`for_config` created it; otherwise do nothing."""
        if self._owned is not None:
            self._owned.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
