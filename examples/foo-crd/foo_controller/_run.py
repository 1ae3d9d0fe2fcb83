"""Wiring, as in sample-controller's ``main.go``: two informer factories, the controller, run.

:func:`run_controller` is what ``main.py`` runs against a cluster and what the demo runs
against the in-process test API server; it does not care which. :class:`ControllerSetup`
is the same wiring in two halves (build, then run), for callers that want to look at the
controller's caches or queue while it runs (the end-to-end tests).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from foo_api.clientset import Clientset as SampleClientset
from foo_api.informers import SharedInformerFactory as SampleInformerFactory

from foo_controller._controller import FooController
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.informers import SharedInformerFactory as KubeInformerFactory

__all__ = [
    "DEFAULT_RESYNC",
    "DEFAULT_WORKERS",
    "INFORMER_SHUTDOWN_TIMEOUT",
    "ControllerSetup",
    "run_controller",
]

_log = logging.getLogger("foo_controller")

DEFAULT_WORKERS = 2
"""Worker threads (main.go: ``controller.Run(ctx, 2)``)."""
DEFAULT_RESYNC = 30.0
"""Seconds between informer resyncs (main.go: ``time.Second*30``)."""
INFORMER_SHUTDOWN_TIMEOUT = 5.0
"""Seconds :meth:`ControllerSetup.run` waits for the informers' threads at shutdown."""


@dataclass(frozen=True)
class ControllerSetup:
    """One informer factory per clientset and the controller over them (main.go's body)."""

    controller: FooController
    kube_informers: KubeInformerFactory
    sample_informers: SampleInformerFactory

    @classmethod
    def new(
        cls,
        kube: KubeClientset,
        sample: SampleClientset,
        *,
        resync: float = DEFAULT_RESYNC,
        namespace: str | None = None,
    ) -> ControllerSetup:
        """Make the factories (resyncing every ``resync`` seconds, 0: never) and the
        controller, which registers its handlers. Nothing runs yet.

        ``namespace`` confines the informers, hence the controller, to one namespace
        (client-go's ``WithNamespace``); by default it watches all of them, as main.go does.
        """
        kube_informers = KubeInformerFactory(
            kube.transport, resync_period=resync, namespace=namespace
        )
        sample_informers = SampleInformerFactory(
            sample.transport, resync_period=resync, namespace=namespace
        )
        controller = FooController(
            kube,
            sample,
            kube_informers.apps.v1.deployments,
            sample_informers.samplecontroller.v1alpha1.foos,
        )
        return cls(controller, kube_informers, sample_informers)

    def run(
        self,
        stop: threading.Event,
        *,
        workers: int = DEFAULT_WORKERS,
        informer_shutdown_timeout: float = INFORMER_SHUTDOWN_TIMEOUT,
    ) -> None:
        """Start the informers and run the controller until ``stop`` is set; then shut down.

        Blocks; on return the workers are joined and the informers stopped. Their threads
        are joined too, unless that takes longer than ``informer_shutdown_timeout`` seconds:
        a reflector in the middle of a request that the transport keeps retrying (an
        unreachable server) notices the stop only when the request ends, so it is logged and
        left behind (its thread is a daemon). Call once.

        Raises:
            ValueError: ``workers`` is less than 1.
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.kube_informers.start(stop)
        self.sample_informers.start(stop)
        try:
            self.controller.run(workers, stop)
        finally:
            joined = self._shut_down_informers(informer_shutdown_timeout)
        if joined:
            _log.info("shut down cleanly")

    def _shut_down_informers(self, timeout: float) -> bool:
        """Stop both factories' informers; whether their threads ended within ``timeout``."""

        def shut_down() -> None:
            self.kube_informers.shutdown()
            self.sample_informers.shutdown()

        thread = threading.Thread(target=shut_down, name="informers-shutdown", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            _log.warning("informers still busy %.0fs after the stop (a request in flight); "
                         "not waiting for them", timeout)
            return False
        return True


def run_controller(
    kube: KubeClientset,
    sample: SampleClientset,
    stop: threading.Event,
    *,
    workers: int = DEFAULT_WORKERS,
    resync: float = DEFAULT_RESYNC,
) -> None:
    """Run the Foo controller until ``stop`` is set, then shut everything down (blocks).

    ``ControllerSetup.new(kube, sample, resync=resync).run(stop, workers=workers)``.
    """
    ControllerSetup.new(kube, sample, resync=resync).run(stop, workers=workers)
