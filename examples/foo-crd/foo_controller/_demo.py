"""``main.py --demo``: the controller at work against an in-process API server, no cluster.

The demo starts :class:`~kgen_runtime.testing.TestAPIServer`, installs ``crds/foo.yaml``,
runs the controller exactly as ``main.py`` would (:func:`run_controller`) and narrates:
a Foo is created, its Deployment appears with a controller owner reference, the Foo's
status follows the Deployment's, events are recorded, a replicas change is reconciled.
The test server has no Deployment controller, so the demo plays that part and sets the
Deployment's status itself.

Every step waits on a condition with a bound (``step_timeout``), never a fixed sleep; the
output does not depend on timing (no ports, uids or timestamps), and the last line says
whether the demo passed. Setting ``stop`` (Ctrl-C) ends it early.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from foo_controller._reconciler import run_manager
from foo_controller._reconciler_aio import run_async_manager
from foo_controller._run import run_controller
from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.wait import WaitTimeoutError, poll_until

__all__ = ["CRD_PATH", "run_demo"]

CRD_PATH = Path(__file__).resolve().parents[1] / "crds" / "foo.yaml"
"""The Foo CustomResourceDefinition the demo installs."""

_NAMESPACE = "default"
_FOO = "example-foo"
_POLL = 0.02
_JOIN_TIMEOUT = 15.0


class _DemoFailed(Exception):
    """A step's condition did not hold in time."""


class _Demo:
    """The demo's steps over one server; see the module docstring."""

    def __init__(self, server: TestAPIServer, out: TextIO, stop: threading.Event,
                 step_timeout: float) -> None:
        self.kube = KubeClientset.for_config(server.config())
        self.sample = SampleClientset(self.kube.transport)  # one transport for both
        self.foos = self.sample.samplecontroller_v1alpha1.foos(_NAMESPACE)
        self.deployments = self.kube.apps_v1.deployments(_NAMESPACE)
        self.out = out
        self.stop = stop
        self.step_timeout = step_timeout

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def wait_for(self, what: str, condition: Callable[[], bool]) -> None:
        """Poll ``condition`` until it holds; :class:`_DemoFailed` after the step timeout."""

        def holds() -> bool:
            try:
                return condition()
            except NotFoundError:
                return False

        try:
            poll_until(holds, _POLL, self.step_timeout, self.stop, immediate=True)
        except WaitTimeoutError as err:
            raise _DemoFailed(f"{what}: {err}") from err

    def foo(self) -> Foo:
        return self.foos.get(_FOO)

    def deployment(self) -> Deployment:
        return self.deployments.get(_FOO)

    def available(self) -> int | None:
        status = self.foo().status
        return None if status is None else status.available_replicas

    def replicas(self) -> int | None:
        spec = self.deployment().spec
        return None if spec is None else spec.replicas

    def play_deployment_controller(self, available: int) -> None:
        """Report ``available`` ready pods, as kube-controller-manager would."""
        counts = {"replicas": available, "readyReplicas": available,
                  "availableReplicas": available}
        self.deployments.patch_status(_FOO, {"status": counts})

    def scenario(self) -> None:
        say = self.say
        foo = self.foos.create(Foo(
            metadata=ObjectMeta(name=_FOO, namespace=_NAMESPACE),
            spec=FooSpec(deployment_name=_FOO, replicas=1),
        ))
        say(f"[1/5] created Foo {_NAMESPACE}/{_FOO}: spec.deploymentName={_FOO}, "
            "spec.replicas=1")

        self.wait_for("the Deployment to be created", lambda: self.replicas() == 1)
        deployment = self.deployment()
        refs = deployment.metadata.owner_references or []
        if len(refs) != 1 or deployment.spec is None:
            raise _DemoFailed(f"unexpected Deployment: {deployment.model_dump()}")
        ref = refs[0]
        same_uid = "matches" if ref.uid == foo.metadata.uid else "DOES NOT MATCH"
        say(f"[2/5] the controller created Deployment {_NAMESPACE}/{deployment.metadata.name}:"
            f" replicas={deployment.spec.replicas}, image=nginx:latest")
        say(f"      ownerReference: {ref.kind} {ref.name} (apiVersion={ref.api_version}, "
            f"controller={ref.controller}, blockOwnerDeletion={ref.block_owner_deletion}, "
            f"uid {same_uid} the Foo's)")

        self.wait_for("the Foo's status to be written", lambda: self.available() == 0)
        say("[3/5] Foo status.availableReplicas=0 (no pods yet); playing the Deployment "
            "controller (the test server has none): 1 pod available")
        self.play_deployment_controller(1)
        self.wait_for("the Foo's status to follow", lambda: self.available() == 1)
        say("      Foo status.availableReplicas=1")

        self.foos.patch(_FOO, {"spec": {"replicas": 3}})
        say("[4/5] changed Foo spec.replicas to 3")
        self.wait_for("the Deployment to be scaled", lambda: self.replicas() == 3)
        say("      the controller updated the Deployment: replicas=3")
        self.play_deployment_controller(3)
        self.wait_for("the Foo's status to follow", lambda: self.available() == 3)
        say("      Foo status.availableReplicas=3")

        self.wait_for("the Synced event", lambda: ("Normal", "Synced") in self.events())
        say(f"[5/5] events recorded for Foo {_FOO}:")
        for (event_type, reason), message in sorted(self.events().items()):
            say(f"      {event_type:<7} {reason:<8} {message}")

    def events(self) -> dict[tuple[str, str], str]:
        """The Foo's events by (type, reason) → message (repeats are counted, not listed)."""
        result: dict[tuple[str, str], str] = {}
        for event in self.kube.core_v1.events(_NAMESPACE).list().items:
            involved = event.involved_object
            if involved is not None and involved.kind == "Foo" and involved.name == _FOO:
                result[(event.type or "", event.reason or "")] = event.message or ""
        return result


def run_demo(
    out: TextIO,
    stop: threading.Event | None = None,
    *,
    step_timeout: float = 10.0,
    workers: int = 2,
    builder: bool = False,
    asynchronous: bool = False,
) -> int:
    """Run the demo, narrating to ``out``; return the exit status (0: every step passed).

    Blocks for about a second on an idle machine; each step is bounded by ``step_timeout``
    seconds. ``stop`` ends the demo early (exit status 1). Whatever happens, the last line
    written is ``demo OK: ...`` or ``demo FAILED: <why>``. With ``builder`` the controller
    written on the builder runs instead of the sample-controller port (same narration);
    with ``asynchronous`` the one on the async builder.
    """
    stop = stop if stop is not None else threading.Event()
    controller_stop = threading.Event()
    errors: list[BaseException] = []
    print("sample-controller demo: an in-process API server, no cluster needed",
          file=out, flush=True)
    with TestAPIServer() as server:
        crd: dict[str, Any] = yaml.safe_load(CRD_PATH.read_text())
        server.install_crd(crd)
        demo = _Demo(server, out, stop, step_timeout)
        demo.say(f"      CRD {crd['metadata']['name']} installed; starting the controller "
                 f"({workers} workers)")

        def controller() -> None:
            try:
                if asynchronous:
                    run_async_manager(server.config(), controller_stop, workers=workers,
                                      resync=0.0)
                elif builder:
                    run_manager(demo.kube, controller_stop, workers=workers, resync=0.0)
                else:
                    run_controller(demo.kube, demo.sample, controller_stop, workers=workers)
            except BaseException as err:  # reported below
                errors.append(err)

        thread = threading.Thread(target=controller, name="foo-controller", daemon=True)
        thread.start()
        failure: str | None = None
        try:
            demo.scenario()
        except _DemoFailed as err:
            failure = str(err)
        except Exception as err:  # an API error: report it like a failed step
            failure = f"unexpected {type(err).__name__}: {err}"
        finally:
            controller_stop.set()
            thread.join(_JOIN_TIMEOUT)
            demo.kube.close()
    if failure is None and thread.is_alive():
        failure = f"the controller did not stop within {_JOIN_TIMEOUT:.0f}s"
    if failure is None and errors:
        failure = f"the controller failed: {errors[0]!r}"
    if failure is not None:
        demo.say(f"demo FAILED: {failure}")
        return 1
    demo.say("demo OK: the Foo's Deployment was created, scaled and reported; "
             "the controller shut down cleanly")
    return 0
