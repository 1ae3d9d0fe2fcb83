"""Where the fidelity suite's clients point: the test API server, or a real cluster.

* ``server``: a :class:`~kgen_runtime.testing.TestAPIServer` per test, with the Foo CRD
  installed and namespace lifecycle admission on, and a kubeconfig written for it.
* ``cluster``: the API server of ``$KGEN_TEST_KUBECONFIG`` (the Foo CRD created once per
  session if missing, by tests/conformance/_backends.py's ``cluster_session``); each test
  gets a new namespace, deleted afterwards (on a bare kube-apiserver it then stays
  Terminating: there is no namespace controller).

The clients are ones nobody here wrote: the ``kubernetes`` package's typed, custom-objects
and dynamic clients, and ``kubectl`` when it is on ``PATH``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubernetes

from kgen_runtime.testing import TestAPIServer
from tests.conformance._backends import FOO_CRD

__all__ = ["Target", "open_target", "wire"]


@dataclasses.dataclass(frozen=True)
class Target:
    """One API server as the suite's clients see it.

    Attributes:
        name: ``server`` or ``cluster`` (for reports; tests never branch on it).
        client: A ``kubernetes.client.ApiClient`` for it.
        kubeconfig: A kubeconfig file naming it (for kubectl).
        namespace: This test's namespace, created empty.
        home: A private HOME for kubectl (its discovery cache).
    """

    name: str
    client: kubernetes.client.ApiClient
    kubeconfig: Path
    namespace: str
    home: Path

    @property
    def core(self) -> kubernetes.client.CoreV1Api:
        return kubernetes.client.CoreV1Api(self.client)

    @property
    def apps(self) -> kubernetes.client.AppsV1Api:
        return kubernetes.client.AppsV1Api(self.client)

    @property
    def custom(self) -> kubernetes.client.CustomObjectsApi:
        return kubernetes.client.CustomObjectsApi(self.client)

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """Run kubectl against the target in this test's namespace; its stdout (stderr as
        well when ``check`` is false)."""
        binary = shutil.which("kubectl")
        assert binary is not None, "kubectl is not on PATH"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home),
               "KUBECONFIG": str(self.kubeconfig)}
        done = subprocess.run([binary, "-n", self.namespace, *args], input=stdin,
                              capture_output=True, text=True, env=env, timeout=60, check=False)
        if check:
            assert done.returncode == 0, done.stderr
            return done.stdout
        return done.stdout + done.stderr


def _kubeconfig(url: str, path: Path) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: t, cluster: {{server: '{url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\n"
        "users: [{name: u, user: {}}]\ncurrent-context: t\n")
    return path


def _new_namespace(client: kubernetes.client.ApiClient) -> str:
    name = f"kgen-fidelity-{uuid.uuid4().hex[:10]}"
    kubernetes.client.CoreV1Api(client).create_namespace({"metadata": {"name": name}})
    return name


@contextmanager
def open_target(name: str, tmp_path: Path, cluster_kubeconfig: str | None) -> Iterator[Target]:
    """A ready target for one test."""
    home = tmp_path / "home"
    home.mkdir()
    if name == "server":
        with TestAPIServer(namespace_lifecycle=True) as server:
            server.install_crd(FOO_CRD)
            kubeconfig = _kubeconfig(server.url, tmp_path / "kubeconfig")
            with kubernetes.config.new_client_from_config(str(kubeconfig)) as client:
                yield Target(name, client, kubeconfig, _new_namespace(client), home)
        return
    assert cluster_kubeconfig is not None
    with kubernetes.config.new_client_from_config(cluster_kubeconfig) as client:
        namespace = _new_namespace(client)
        try:
            yield Target(name, client, Path(cluster_kubeconfig), namespace, home)
        finally:
            kubernetes.client.CoreV1Api(client).delete_namespace(namespace)


def wire(client: kubernetes.client.ApiClient, obj: Any) -> Any:
    """A typed client's model as its JSON wire form."""
    return client.sanitize_for_serialization(obj)
