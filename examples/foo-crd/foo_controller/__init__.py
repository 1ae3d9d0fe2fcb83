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
* Two served versions, v1alpha1 (stored) and v1beta1, converted by :data:`FOO_CONVERTER`;
  :func:`add_webhooks` serves it with the Foo's defaulting and validating webhooks
  (:func:`webhook_configurations` registers them with the API server).

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
from foo_controller._conversion import (
    DEFAULT_IMAGE,
    FOO_CONVERTER,
    deployment_image,
    v1beta1_from_hub,
    v1beta1_to_hub,
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
from foo_controller._webhooks import (
    DEFAULT_REPLICAS,
    WEBHOOK_CONFIGURATION_NAME,
    add_webhooks,
    conversion_webhook,
    default_foo,
    validate_create,
    validate_update,
    webhook_configurations,
)

__all__ = [
    "CONTROLLER_AGENT_NAME",
    "DEFAULT_IMAGE",
    "DEFAULT_REPLICAS",
    "DEFAULT_RESYNC",
    "DEFAULT_WORKERS",
    "ERR_RESOURCE_EXISTS",
    "FIELD_MANAGER",
    "FOO_CONVERTER",
    "INFORMER_SHUTDOWN_TIMEOUT",
    "MESSAGE_RESOURCE_EXISTS",
    "MESSAGE_RESOURCE_SYNCED",
    "SUCCESS_SYNCED",
    "WEBHOOK_CONFIGURATION_NAME",
    "AsyncFooReconciler",
    "AsyncManagerSetup",
    "ControllerSetup",
    "EventRecorder",
    "FooController",
    "FooReconciler",
    "ManagerSetup",
    "ResourceExistsError",
    "add_webhooks",
    "conversion_webhook",
    "default_foo",
    "deployment_image",
    "main",
    "new_deployment",
    "new_rate_limiter",
    "new_scheme",
    "run_async_manager",
    "run_controller",
    "run_demo",
    "run_manager",
    "v1beta1_from_hub",
    "v1beta1_to_hub",
    "validate_create",
    "validate_update",
    "webhook_configurations",
]
