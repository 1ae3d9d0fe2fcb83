"""The command line: ``--demo`` end to end, signals, and bad input.

The demo and the signal tests run ``main.py`` as a subprocess, as a user would.
"""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec
from foo_controller import main, run_demo
from foo_controller._cli import load_config, signal_handler
from foo_controller._demo import CRD_PATH

from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import ConfigError
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.wait import poll_until

MAIN = Path(__file__).resolve().parents[1] / "main.py"
BOUND = 20.0

DEMO_OUTPUT = """\
sample-controller demo: an in-process API server, no cluster needed
      CRD foos.samplecontroller.k8s.io installed; starting the controller (2 workers)
[1/5] created Foo default/example-foo: spec.deploymentName=example-foo, spec.replicas=1
[2/5] the controller created Deployment default/example-foo: replicas=1, image=nginx:latest
      ownerReference: Foo example-foo (apiVersion=samplecontroller.k8s.io/v1alpha1, \
controller=True, blockOwnerDeletion=True, uid matches the Foo's)
[3/5] Foo status.availableReplicas=0 (no pods yet); playing the Deployment controller \
(the test server has none): 1 pod available
      Foo status.availableReplicas=1
[4/5] changed Foo spec.replicas to 3
      the controller updated the Deployment: replicas=3
      Foo status.availableReplicas=3
[5/5] events recorded for Foo example-foo:
      Normal  Synced   Foo synced successfully
demo OK: the Foo's Deployment was created, scaled and reported; the controller shut down \
cleanly
"""


@pytest.mark.parametrize("flags", [[], ["--builder"], ["--async"]],
                         ids=["sample-controller", "builder", "async"])
def test_demo_narrates_every_step_and_exits_0(flags: list[str]) -> None:
    result = subprocess.run([sys.executable, str(MAIN), "--demo", *flags], capture_output=True,
                            text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == DEMO_OUTPUT


def test_the_readme_shows_the_demo_output() -> None:
    readme = (MAIN.parent / "README.md").read_text()
    command = "$ .venv/bin/python examples/foo-crd/main.py --demo\n"
    shown = readme.split(command, 1)[1].split("```", 1)[0]
    assert shown == DEMO_OUTPUT


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as api_server:
        api_server.install_crd(yaml.safe_load(CRD_PATH.read_text()))
        yield api_server


def write_kubeconfig(path: Path, server: TestAPIServer) -> Path:
    kubeconfig: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": server.url}}],
        "users": [{"name": "test", "user": {}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(kubeconfig))
    return path


@pytest.mark.parametrize("flags", [[], ["--builder"], ["--async"]],
                         ids=["sample-controller", "builder", "async"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_shuts_the_controller_down_cleanly(
    server: TestAPIServer, tmp_path: Path, signum: signal.Signals, flags: list[str]
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server)
    process = subprocess.Popen(
        [sys.executable, str(MAIN), "--kubeconfig", str(kubeconfig), "--workers", "1",
         "--resync", "0", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        with KubeClientset.for_config(server.config()) as kube:
            SampleClientset(kube.transport).samplecontroller_v1alpha1.foos("default").create(
                Foo(metadata=ObjectMeta(name="sig", namespace="default"),
                    spec=FooSpec(deployment_name="sig", replicas=1)))

            def deployed() -> bool:  # proves the controller is up and working
                try:
                    kube.apps_v1.deployments("default").get("sig")
                except NotFoundError:
                    return process.poll() is not None  # stop waiting if it died
                return True

            poll_until(deployed, 0.02, BOUND, immediate=True)
        assert process.poll() is None, process.communicate()
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=BOUND)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "shutting down" in stderr
    assert "foo_controller: shut down cleanly" in stderr
    assert "ERROR" not in stderr


def test_an_unusable_kubeconfig_exits_1(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert main(["--kubeconfig", str(tmp_path / "missing")]) == 1
    assert "error building kubeconfig" in caplog.text


@pytest.mark.parametrize("argv", [
    ["--workers", "0"], ["--workers", "two"], ["--resync", "-1"], ["--resync", "nan"], ["--nope"],
])
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "usage: main.py" in capsys.readouterr().err


def test_a_second_signal_exits_at_once_with_status_1() -> None:
    stop = threading.Event()
    exits: list[int] = []
    handle = signal_handler(stop, exits.append)

    handle(signal.SIGTERM, None)
    assert stop.is_set()
    assert exits == []

    handle(signal.SIGINT, None)
    assert exits == [1]


def test_public_names() -> None:
    import foo_controller

    assert set(foo_controller.__all__) == {
        "AsyncFooReconciler", "AsyncManagerSetup", "run_async_manager",
        "CONTROLLER_AGENT_NAME", "DEFAULT_RESYNC", "DEFAULT_WORKERS", "ERR_RESOURCE_EXISTS",
        "FIELD_MANAGER", "INFORMER_SHUTDOWN_TIMEOUT", "MESSAGE_RESOURCE_EXISTS",
        "MESSAGE_RESOURCE_SYNCED", "SUCCESS_SYNCED", "ControllerSetup", "EventRecorder",
        "FooController", "FooReconciler", "ManagerSetup", "ResourceExistsError", "main",
        "new_deployment", "new_rate_limiter", "new_scheme", "run_controller", "run_demo",
        "run_manager",
    } | {  # versions, conversion and webhooks
        "DEFAULT_IMAGE", "DEFAULT_REPLICAS", "FOO_CONVERTER", "WEBHOOK_CONFIGURATION_NAME",
        "add_webhooks", "conversion_webhook", "default_foo", "deployment_image",
        "v1beta1_from_hub", "v1beta1_to_hub", "validate_create", "validate_update",
        "webhook_configurations",
    }
    assert all(hasattr(foo_controller, name) for name in foo_controller.__all__)


def test_a_stopped_demo_ends_with_a_failure_line() -> None:
    out = io.StringIO()
    stop = threading.Event()
    stop.set()  # as if Ctrl-C came at once: the first wait gives up

    assert run_demo(out, stop) == 1
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("demo FAILED: ")
    assert last.endswith("stopped while waiting for the condition")


def test_load_config_follows_build_config_from_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    with TestAPIServer() as api_server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server)
        assert load_config(str(kubeconfig), "").host == api_server.url
        assert load_config(str(kubeconfig), "http://10.0.0.1:6443").host == (
            "http://10.0.0.1:6443")
    assert load_config("", "http://10.0.0.1:6443").host == "http://10.0.0.1:6443"
    # No client-side rate limit on any path, as controller-runtime's GetConfig (issue 21).
    assert load_config(str(kubeconfig), "").qps <= 0
    assert load_config("", "http://10.0.0.1:6443").qps <= 0
    with pytest.raises(ConfigError):
        load_config("", "")  # not in a pod, no kubeconfig
    with pytest.raises(ConfigError):
        load_config(str(tmp_path / "absent"), "http://10.0.0.1:6443")
