"""The scaffolded Makefile's cluster targets, without a cluster: ``make deploy IMG=…`` applies
a copy of ``deploy/`` whose manager runs IMG (the substitution is run for real, and rendered
by ``kubectl kustomize`` where kubectl is installed), ``make install``/``uninstall`` touch the
CRDs only, ``make run`` runs the operator with the kubeconfig's defaults, ``make wheels``
refreshes the wheelhouse. Cluster commands are checked as ``make -n`` prints them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kgen.scaffold import init_project
from tests._fresh import run

IMG = "registry.example.com:5000/team/widget-operator:1.2.3"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = tmp_path_factory.mktemp("make") / "widget-operator"
    init_project(root, group="example.com", kind="Widget", version="v1alpha1")
    return root


def _make(project: Path, *args: str) -> list[str]:
    return run(["make", "--no-print-directory", *args], cwd=project).splitlines()


def _deployment_image(documents: list[Any]) -> str:
    (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    image: str = container["image"]
    return image


def test_deploy_applies_a_copy_of_deploy_with_the_image_img(project: Path) -> None:
    assert _make(project, "-n", "deploy", f"IMG={IMG}") == [
        "rm -rf build/deploy",
        "mkdir -p build",
        "cp -R deploy build/deploy",
        f"sed 's|image: controller:latest|image: {IMG}|' deploy/manager.yaml"
        " > build/deploy/manager.yaml",
        "kubectl apply -k build/deploy",
    ]
    assert "image: widget-operator:latest|" in _make(project, "-n", "deploy")[3]  # IMG's default


def test_the_image_substitution_changes_only_the_manager_image(project: Path) -> None:
    _make(project, "build/deploy", f"IMG={IMG}")
    deploy, built = project / "deploy", project / "build" / "deploy"
    files = sorted(p.relative_to(deploy) for p in deploy.rglob("*") if p.is_file())
    assert sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file()) == files
    changed = [f for f in files if (deploy / f).read_bytes() != (built / f).read_bytes()]
    assert changed == [Path("manager.yaml")]
    original = yaml.safe_load((deploy / "manager.yaml").read_text())
    substituted = yaml.safe_load((built / "manager.yaml").read_text())
    assert _deployment_image([original]) == "controller:latest"
    assert _deployment_image([substituted]) == IMG
    substituted["spec"]["template"]["spec"]["containers"][0]["image"] = "controller:latest"
    assert substituted == original


def test_kubectl_kustomize_renders_img_and_the_default_image(project: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    _make(project, "build/deploy", f"IMG={IMG}")
    rendered = {}
    for folder in ("build/deploy", "deploy"):
        completed = subprocess.run(
            ["kubectl", "kustomize", folder],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        rendered[folder] = _deployment_image(list(yaml.safe_load_all(completed.stdout)))
    # make deploy: IMG; plain `kubectl apply -k deploy`: deploy/kustomization.yaml's images:
    assert rendered == {"build/deploy": IMG, "deploy": "widget-operator:latest"}


def test_install_and_uninstall_apply_and_delete_the_crds_only(project: Path) -> None:
    assert _make(project, "-n", "install") == ["kubectl apply -f deploy/crds"]
    assert _make(project, "-n", "uninstall") == [
        "kubectl delete -f deploy/crds --ignore-not-found"
    ]


def test_run_starts_the_operator_against_the_kubeconfig(project: Path) -> None:
    # No --kubeconfig: cmd.py's Config.load() takes $KUBECONFIG or ~/.kube/config's context.
    python = sys.executable  # an existing file: `run` depends on $(PYTHON)
    assert _make(project, "-n", "run", f"PYTHON={python}", "ARGS=--namespace ns -v") == [
        f"{python} -m widget_operator --namespace ns -v"
    ]


def test_wheels_refreshes_the_wheelhouse_from_kgen(project: Path) -> None:
    assert _make(project, "-n", "wheels", "PYTHON=python3") == ["python3 -m kgen wheels wheels"]
    assert _make(project, "-n", "wheels", "KGEN=kgen") == ["kgen wheels wheels"]
