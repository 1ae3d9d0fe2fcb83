"""sample-controller, ported: a controller that keeps one nginx Deployment per Foo.

* :class:`FooController` — the controller (Go's ``controller.go``); :func:`new_deployment`
  the Deployment a Foo wants; the event reasons and messages as constants.
* :class:`FooReconciler` — the same controller written controller-runtime's way, on the
  builder (:class:`ManagerSetup` runs it on a :class:`~kgen_runtime.controller.Manager`);
  :class:`AsyncFooReconciler` the same on asyncio (:class:`AsyncManagerSetup`, an
  :class:`~kgen_runtime.controller.AsyncManager`).
* :func:`run_controller` — main.go's wiring over any pair of clientsets
  (:class:`ControllerSetup` the same in two steps).
* :func:`main` — the command line (``python examples/foo-crd/main.py --help``), including
  ``--demo``, which runs everything against an in-process API server.

Running it from Python, as ``main.py`` does::

    kube = KubeClientset.for_config(Config.load())          # kgen_runtime.api.clientset
    sample = SampleClientset(kube.transport)                 # foo_api.clientset, same transport
    stop = threading.Event()                                 # set it to shut down
    run_controller(kube, sample, stop, workers=2, resync=30.0)   # blocks until stop
"""

from foo_controller._cli import main
from foo_controller._controller import (
    CONTROLLER_AGENT_NAME,
    ERR_RESOURCE_EXISTS,
    FIELD_MANAGER,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    EventRecorder,
    FooController,
    ResourceExistsError,
    new_deployment,
    new_rate_limiter,
)
from foo_controller._demo import run_demo
from foo_controller._reconciler import FooReconciler, ManagerSetup, new_scheme, run_manager
from foo_controller._reconciler_aio import (
    AsyncFooReconciler,
    AsyncManagerSetup,
    run_async_manager,
)
from foo_controller._run import (
    DEFAULT_RESYNC,
    DEFAULT_WORKERS,
    INFORMER_SHUTDOWN_TIMEOUT,
    ControllerSetup,
    run_controller,
)

__all__ = [
    "CONTROLLER_AGENT_NAME",
    "DEFAULT_RESYNC",
    "DEFAULT_WORKERS",
    "ERR_RESOURCE_EXISTS",
    "FIELD_MANAGER",
    "INFORMER_SHUTDOWN_TIMEOUT",
    "MESSAGE_RESOURCE_EXISTS",
    "MESSAGE_RESOURCE_SYNCED",
    "SUCCESS_SYNCED",
    "AsyncFooReconciler",
    "AsyncManagerSetup",
    "ControllerSetup",
    "EventRecorder",
    "FooController",
    "FooReconciler",
    "ManagerSetup",
    "ResourceExistsError",
    "main",
    "new_deployment",
    "new_rate_limiter",
    "new_scheme",
    "run_async_manager",
    "run_controller",
    "run_demo",
    "run_manager",
]
