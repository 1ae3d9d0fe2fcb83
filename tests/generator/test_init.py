"""``kgen init`` and ``kgen create api``: the scaffolded project's layout, its own CI (generated
code and RBAC current, ruff, mypy --strict, pytest) passing as scaffolded with a second kind
added, and bad input refused in one line with nothing written.

One project is scaffolded for the module (its CI run is the slow part: ~1 minute), and a
second one whose CRDs come from Python types (``--api-from python``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonpatch  # type: ignore[import-untyped,unused-ignore]
import pytest
import yaml
from click.testing import CliRunner

from kgen import __version__
from kgen.cli import main
from kgen.crdgen import HEADER

from .conftest import REPO


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".mypy_cache" not in p.parts
    }


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


class Scaffolded:
    """A project made by ``kgen init`` and then given a cluster-scoped kind by ``create api``."""

    def __init__(self, root: Path) -> None:
        code, output = _invoke("init", str(root), "--group", "example.com", "--kind", "Widget")
        assert code == 0, output
        self.root = root
        self.after_init = _files(root)
        self.verify_after_init = _make(root, "verify")
        code, output = _invoke(
            "create", "api", "-C", str(root), "--group", "infra.example.com",
            "--version", "v1", "--kind", "Policy", "--cluster",
        )
        assert code == 0, output
        self.create_output = output
        self.after_create = _files(root)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Scaffolded:
    return Scaffolded(tmp_path_factory.mktemp("init") / "widget-operator")


def _make(project: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {**os.environ, "MYPYPATH": str(REPO / "runtime"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        ["make", *targets, f"PYTHON={sys.executable}"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False,
    )


def test_init_writes_a_deployable_project(project: Scaffolded) -> None:
    files = {f for f in project.after_init if not f.startswith("widget_operator_api/")}
    assert files == {
        ".dockerignore",
        ".github/workflows/ci.yml",
        ".gitignore",
        "Dockerfile",
        "Makefile",
        "README.md",
        "deploy/crds/example.com_widgets.yaml",
        "deploy/kustomization.yaml",
        "deploy/manager.yaml",
        "deploy/metrics_service.yaml",
        "deploy/namespace.yaml",
        "deploy/rbac/metrics_auth_role.yaml",
        "deploy/rbac/metrics_reader_role.yaml",
        "deploy/rbac/role.yaml",
        "deploy/rbac/role_binding.yaml",
        "deploy/rbac/service_account.yaml",
        "deploy/rbac/widget_admin_role.yaml",
        "deploy/rbac/widget_editor_role.yaml",
        "deploy/rbac/widget_viewer_role.yaml",
        "deploy/samples/example.com_v1alpha1_widget.yaml",
        "deploy/samples/kustomization.yaml",
        "pyproject.toml",
        "tests/__init__.py",
        "tests/conftest.py",
        "tests/support.py",
        "tests/test_manager.py",
        "tests/test_widget_controller.py",
        "widget_operator/__init__.py",
        "widget_operator/__main__.py",
        "widget_operator/cmd.py",
        "widget_operator/controllers/__init__.py",
        "widget_operator/controllers/widget.py",
        "widget_operator/manager.py",
        "widget_operator/rbac.py",
        "widget_operator/webhooks/__init__.py",
        f"wheels/kgen_generator-{__version__}-py3-none-any.whl",
        f"wheels/kgen_runtime-{__version__}-py3-none-any.whl",
    }
    assert "widget_operator_api/example/v1alpha1/models.py" in project.after_init


def test_generated_code_and_rbac_are_current_as_scaffolded(project: Scaffolded) -> None:
    completed = project.verify_after_init
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[1::2] == [
        "widget_operator_api: up to date (1 kinds in 1 group/versions)",
        "deploy/rbac/role.yaml: up to date",
    ]


def test_the_image_carries_the_runtime_only(project: Scaffolded) -> None:
    dockerfile = (project.root / "Dockerfile").read_text()
    stages = [line for line in dockerfile.splitlines() if line.startswith("FROM ")]
    assert len(stages) == 2 and stages[0].endswith(" AS build")
    final = dockerfile.split(f"\n{stages[1]}\n")[1]
    assert "COPY --from=build /opt/venv /opt/venv" in final
    assert "USER 65532:65532" in final
    assert 'ENTRYPOINT ["python", "-m", "widget_operator"]' in final
    # `pip install .` installs [project] dependencies: the runtime, not the [dev] generator,
    # from the project's wheelhouse until it is on PyPI.
    assert "RUN pip install --find-links wheels .\n" in dockerfile
    # The build context holds only what the image needs (no tests, venv or deploy/).
    ignored = (project.root / ".dockerignore").read_text().splitlines()
    assert ignored[1:6] == [
        "*", "!pyproject.toml", "!wheels/", "!widget_operator/", "!widget_operator_api/"
    ]


def test_create_api_adds_a_kind_to_the_project(project: Scaffolded) -> None:
    before, after = project.after_init, project.after_create
    added = sorted(set(after) - set(before))
    assert [f for f in added if not f.startswith("widget_operator_api/")] == [
        "deploy/crds/infra.example.com_policies.yaml",
        "deploy/rbac/policy_admin_role.yaml",
        "deploy/rbac/policy_editor_role.yaml",
        "deploy/rbac/policy_viewer_role.yaml",
        "deploy/samples/infra.example.com_v1_policy.yaml",
        "tests/test_policy_controller.py",
        "widget_operator/controllers/policy.py",
    ]
    assert "widget_operator_api/infra/v1/models.py" in added
    changed = sorted(f for f in before if f in after and before[f] != after[f])
    assert [f for f in changed if not f.startswith("widget_operator_api/")] == [
        "deploy/kustomization.yaml",
        "deploy/rbac/role.yaml",
        "deploy/samples/kustomization.yaml",
        "widget_operator/controllers/__init__.py",
    ]
    assert project.create_output.endswith("Policy added, 25 files written; next: make test\n")
    crd = yaml.safe_load(after["deploy/crds/infra.example.com_policies.yaml"])
    assert (crd["metadata"]["name"], crd["spec"]["scope"]) == ("policies.infra.example.com",
                                                               "Cluster")
    kustomization = yaml.safe_load(after["deploy/kustomization.yaml"])
    assert kustomization["resources"][1:3] == ["crds/example.com_widgets.yaml",
                                               "crds/infra.example.com_policies.yaml"]
    cluster_role = next(yaml.safe_load_all(after["deploy/rbac/role.yaml"]))
    assert {"apiGroups": ["infra.example.com"], "resources": ["policies/status"],
            "verbs": ["get", "patch", "update"]} in cluster_role["rules"]


@pytest.mark.slow  # ~10 s of make, ruff, mypy and pytest in the project
def test_the_scaffold_ci_passes(project: Scaffolded) -> None:
    """`make ci`: `kgen generate --verify`, the RBAC check, ruff, mypy --strict, pytest."""
    completed = _make(project.root, "ci")
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    assert "widget_operator_api: up to date (2 kinds in 2 group/versions)" in completed.stdout
    assert "deploy/rbac/role.yaml: up to date" in completed.stdout
    assert "15 passed" in completed.stdout


def test_a_stale_rbac_role_fails_the_ci_check(tmp_path: Path, project: Scaffolded) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project.root, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    role = copy / "deploy/rbac/role.yaml"
    role.write_text(role.read_text().replace("  - patch\n", "", 1))
    completed = _make(copy, "verify")
    assert completed.returncode != 0
    assert "stale: deploy/rbac/role.yaml (run `make manifests`)" in completed.stderr


def test_the_entry_point_parses_its_flags(project: Scaffolded) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "widget_operator", "--help"],
        cwd=project.root, capture_output=True, text=True, timeout=60, check=False,
    )
    assert completed.returncode == 0
    for flag in ("--kubeconfig", "--namespace", "--leader-elect", "--metrics-bind-address",
                 "--health-probe-bind-address", "-v"):
        assert flag in completed.stdout


# -- bad input: one line per problem, exit 2, nothing written ------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--group", "example", "--kind", "Widget"],
         "--group: error: 'example' is not a DNS subdomain with a dot, e.g. example.com"),
        (["--group", "example.com", "--kind", "widget"],
         "--kind: error: 'widget' is not UpperCamelCase, e.g. Widget"),
        (["--group", "example.com", "--kind", "Widget", "--version", "1"],
         "--version: error: '1' is not v1, v1alpha1, v2beta3, …"),
    ],
)
def test_init_refuses_bad_names(tmp_path: Path, args: list[str], message: str) -> None:
    code, output = _invoke("init", str(tmp_path / "op"), *args)
    assert (code, output) == (2, message + "\n")
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "keep.txt").write_text("mine")
    code, output = _invoke("init", str(tmp_path / "op"), "--group", "example.com", "--kind", "W")
    message = f"{tmp_path / 'op'}: error: exists and is not an empty directory\n"
    assert (code, output) == (2, message)
    assert [p.name for p in tmp_path.iterdir()] == ["op"]
    assert [p.name for p in (tmp_path / "op").iterdir()] == ["keep.txt"]


def test_init_refuses_a_project_name_kubernetes_cannot_use(tmp_path: Path) -> None:
    code, output = _invoke("init", str(tmp_path / "Widget_Op"), "--group", "example.com",
                           "--kind", "Widget")
    assert (code, output) == (2, f"{tmp_path / 'Widget_Op'}: error: the project name "
                                 "'Widget_Op' must be a DNS label of at most 56 characters "
                                 "(lower case, digits, '-'): it names the namespace, Lease and "
                                 "RBAC objects\n")
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_a_missing_parent(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "op"
    code, output = _invoke("init", str(target), "--group", "example.com", "--kind", "Widget")
    assert (code, output) == (
        2, f"{target}: error: the parent directory {tmp_path / 'missing'} is missing\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_create_api_refuses_a_version_that_exists(project: Scaffolded) -> None:
    code, output = _invoke("create", "api", "-C", str(project.root), "--group", "example.com",
                           "--version", "v1alpha1", "--kind", "Widget")
    assert (code, output) == (2, f"{project.root / 'deploy/crds'}: error: kind Widget of group "
                                 "example.com has version v1alpha1 already\n")
    assert _files(project.root) == project.after_create


def _widget_v1beta1_added(
    root: Path, tmp_path: Path
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The files of a copy of the project at ``root`` before and after ``kgen create api
    --version v1beta1`` of its Widget."""
    copy = tmp_path / "widget-operator"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    before = _files(copy)
    code, output = _invoke("create", "api", "-C", str(copy), "--group", "example.com",
                           "--version", "v1beta1", "--kind", "Widget")
    assert code == 0, output
    return before, _files(copy)


def test_create_api_adds_a_version_of_a_kind_with_its_conversion_scaffold(
    tmp_path: Path, project: Scaffolded
) -> None:
    before, after = _widget_v1beta1_added(project.root, tmp_path)
    added = sorted(set(after) - set(before))
    assert [f for f in added if not f.startswith("widget_operator_api/")] == [
        "deploy/samples/example.com_v1beta1_widget.yaml"]
    assert "widget_operator_api/example/v1beta1/conversion.py" in added
    crd = yaml.safe_load(after["deploy/crds/example.com_widgets.yaml"])
    versions = crd["spec"]["versions"]
    assert [(v["name"], v["served"], v["storage"]) for v in versions] == [
        ("v1alpha1", True, True), ("v1beta1", True, False)]
    assert versions[1]["schema"] == versions[0]["schema"]
    conversion = after["widget_operator_api/example/v1beta1/conversion.py"].decode()
    assert "def widget_spoke(" in conversion


def test_create_api_refuses_a_controller_module_that_exists(project: Scaffolded) -> None:
    code, output = _invoke("create", "api", "-C", str(project.root), "--group", "other.io",
                           "--version", "v1", "--kind", "Widget")
    path = project.root / "widget_operator/controllers/widget.py"
    assert (code, output) == (2, f"{path}: error: exists: choose another kind\n")
    assert _files(project.root) == project.after_create


def test_create_api_refuses_bad_names_and_non_projects(tmp_path: Path) -> None:
    code, output = _invoke("create", "api", "-C", str(tmp_path), "--group", "example.com",
                           "--version", "v1", "--kind", "Gadget")
    assert code == 2
    assert output.startswith(f"{tmp_path / 'pyproject.toml'}: error: not a kgen project")
    assert len(output.splitlines()) == 1
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kgen]\npackage = "p"\napi-package = "p_api"\ncrds = "deploy/crds"\n')
    code, output = _invoke("create", "api", "-C", str(tmp_path), "--group", "example.com",
                           "--version", "v1", "--kind", "gadget")
    assert (code, output) == (2, "--kind: error: 'gadget' is not UpperCamelCase, e.g. Widget\n")
    assert [p.name for p in tmp_path.iterdir()] == ["pyproject.toml"]


def test_a_failing_step_of_create_api_writes_nothing(tmp_path: Path, project: Scaffolded) -> None:
    copy = tmp_path / "widget-operator"
    shutil.copytree(project.root, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    controllers = copy / "widget_operator/controllers/__init__.py"
    marker = "    # +kgen:scaffold:controllers\n"
    controllers.write_text(controllers.read_text().replace(marker, ""))
    before = _files(copy)
    code, output = _invoke("create", "api", "-C", str(copy), "--group", "example.com",
                           "--version", "v1", "--kind", "Gadget")
    assert (code, output) == (2, f"{controllers}: error: cannot find the imports "
                                 "and '# +kgen:scaffold:controllers' to add to\n")
    assert _files(copy) == before
    assert [p.name for p in tmp_path.iterdir()] == ["widget-operator"]  # no scratch left


# -- create webhook, and a version converted by it ------------------------------------------------


@pytest.mark.slow  # a project's whole CI; .ci/run runs the slow tests
def test_a_project_with_webhooks_and_a_second_version_passes_its_ci(tmp_path: Path) -> None:
    """`kgen create webhook --defaulting --validation --conversion`, then `kgen create api
    --version v1beta1` of the same kind: the project's CI passes, its webhook tests included
    (defaulted and refused writes, and conversion, through the test API server)."""
    root = tmp_path / "widget-operator"
    for args in (
        ("init", str(root), "--group", "example.com", "--kind", "Widget"),
        ("create", "webhook", "-C", str(root), "--kind", "Widget", "--defaulting",
         "--validation", "--conversion"),
        ("create", "api", "-C", str(root), "--group", "example.com", "--version", "v1beta1",
         "--kind", "Widget"),
    ):
        code, output = _invoke(*args)
        assert code == 0, output
    kustomization = yaml.safe_load((root / "deploy/kustomization.yaml").read_text())
    assert kustomization["resources"][-3:] == [
        "webhook/manifests.yaml", "webhook/service.yaml", "certmanager/certificate.yaml"]
    assert [p["path"] for p in kustomization["patches"]] == [
        "webhook/manager_patch.yaml", "webhook/widgets_conversion_patch.yaml"]
    configurations = list(yaml.safe_load_all((root / _WEBHOOKS).read_text()))
    assert [(c["kind"], c["metadata"]["annotations"], [w["name"] for w in c["webhooks"]])
            for c in configurations] == [
        ("MutatingWebhookConfiguration", _INJECTED, ["mwidget-v1alpha1.example.com"]),
        ("ValidatingWebhookConfiguration", _INJECTED, ["vwidget-v1alpha1.example.com"]),
    ]
    # kustomize's JSON patches, applied as kustomize applies them.
    deployment = jsonpatch.apply_patch(
        yaml.safe_load((root / "deploy/manager.yaml").read_text()),
        yaml.safe_load((root / "deploy/webhook/manager_patch.yaml").read_text()))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    # Paths inside the manager's container (kubebuilder's cert directory), not on this machine.
    cert_dir = "/tmp/k8s-webhook-server/serving-certs"
    assert container["args"][-1] == f"--webhook-cert-dir={cert_dir}"
    assert {"name": "webhook-server", "containerPort": 9443} in container["ports"]
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/tmp", cert_dir]
    assert deployment["spec"]["template"]["spec"]["volumes"][1] == {
        "name": "webhook-certs", "secret": {"secretName": "widget-operator-webhook-server-cert"}}
    crd = jsonpatch.apply_patch(
        yaml.safe_load((root / "deploy/crds/example.com_widgets.yaml").read_text()),
        yaml.safe_load((root / "deploy/webhook/widgets_conversion_patch.yaml").read_text()))
    assert crd["metadata"]["annotations"] == _INJECTED
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"] == {
        "name": "widget-operator-webhook-service", "namespace": "widget-operator-system",
        "path": "/convert", "port": 443}
    handlers = (root / "widget_operator/webhooks/widget.py").read_text()
    assert ("    from widget_operator_api.example.v1beta1.conversion import (\n"
            "        widget_spoke as v1beta1_spoke,\n    )\n\n"
            "    spokes.append(v1beta1_spoke())\n    # +kgen:scaffold:spokes\n") in handlers
    completed = _make(root, "ci")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "16 passed" in completed.stdout


@pytest.mark.slow  # scaffolds and type-checks a project
def test_the_webhook_scaffold_fits_the_longest_names(tmp_path: Path) -> None:
    """The corpus's longest kind (crossplane's CompositeResourceDefinition, the project named
    after it) with every webhook and a second version: the files `kgen create webhook` and
    `create api --version` write pass the project's ruff, and the project mypy --strict."""
    root = tmp_path / "composite-resource-definition-operator"
    group, kind = "apiextensions.crossplane.io", "CompositeResourceDefinition"
    for args in (
        ("init", str(root), "--group", group, "--kind", kind),
        ("create", "webhook", "-C", str(root), "--kind", kind, "--defaulting", "--validation",
         "--conversion"),
        ("create", "api", "-C", str(root), "--group", group, "--version", "v2", "--kind", kind),
    ):
        code, output = _invoke(*args)
        assert code == 0, output
    package = "composite_resource_definition_operator"
    written = [f"{package}/webhooks/__init__.py",
               f"{package}/webhooks/composite_resource_definition.py",
               "tests/test_composite_resource_definition_webhooks.py"]
    env = {**os.environ, "MYPYPATH": str(REPO / "runtime"), "PYTHONDONTWRITEBYTECODE": "1"}
    for command in (["ruff", "check", "--no-cache", *written],
                    ["mypy", "--strict", "--no-incremental"]):
        completed = subprocess.run([sys.executable, "-m", *command], cwd=root, env=env,
                                   capture_output=True, text=True, timeout=600, check=False)
        assert completed.returncode == 0, completed.stdout + completed.stderr


_WEBHOOKS = "deploy/webhook/manifests.yaml"
_INJECTED = {
    "cert-manager.io/inject-ca-from": "widget-operator-system/widget-operator-serving-cert"}


# -- --api-from python: the CRDs generated from Python types in <package>/api --------------------


class ScaffoldedVariant:
    """A project made by ``kgen init`` with extra flags, then given a cluster-scoped kind."""

    def __init__(self, root: Path, *init_flags: str) -> None:
        code, output = _invoke("init", str(root), "--group", "example.com", "--kind", "Widget",
                               *init_flags)
        assert code == 0, output
        self.root = root
        self.after_init = _files(root)
        code, output = _invoke(
            "create", "api", "-C", str(root), "--group", "infra.example.com",
            "--version", "v1", "--kind", "Policy", "--cluster",
        )
        assert code == 0, output
        self.after_create = _files(root)


@pytest.fixture(scope="module")
def python_project(tmp_path_factory: pytest.TempPathFactory) -> ScaffoldedVariant:
    """``kgen init --api-from python``."""
    return ScaffoldedVariant(tmp_path_factory.mktemp("init-python") / "widget-operator",
                             "--api-from", "python")


def test_init_from_python_types_writes_the_api_module_and_its_crd(
    python_project: ScaffoldedVariant, project: Scaffolded
) -> None:
    files = set(python_project.after_init)
    assert files - set(project.after_init) == {
        "widget_operator/api/__init__.py",
        "widget_operator/api/v1alpha1.py",
    }
    assert set(project.after_init) - files == set()
    module = python_project.after_init["widget_operator/api/v1alpha1.py"].decode()
    assert '@resource(\n    "example.com",\n    "v1alpha1",\n' in module
    crd_text = python_project.after_init["deploy/crds/example.com_widgets.yaml"].decode()
    assert crd_text.startswith(HEADER)  # written by `kgen crd`, not the CRD skeleton
    version = yaml.safe_load(crd_text)["spec"]["versions"][0]
    properties = version["schema"]["openAPIV3Schema"]["properties"]
    assert sorted(properties["spec"]["properties"]) == ["message", "replicas"]
    status = properties["status"]["properties"]
    assert sorted(status) == ["conditions", "message", "observedGeneration"]
    # The same conditions as the CRD skeleton's (kgen generate maps both to list[Condition]).
    skeleton = yaml.safe_load(project.after_init["deploy/crds/example.com_widgets.yaml"])
    skeleton_status = skeleton["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "status"]["properties"]
    assert status["conditions"] == skeleton_status["conditions"]
    for made in (python_project, project):
        models = made.after_init["widget_operator_api/example/v1alpha1/models.py"].decode()
        assert "    conditions: list[Condition] | None = None\n" in models
    pyproject = python_project.after_init["pyproject.toml"].decode()
    assert 'api-from = "python"' in pyproject
    assert 'api-from = "crd"' in project.after_init["pyproject.toml"].decode()
    makefile = python_project.after_init["Makefile"].decode()
    assert "\t$(PYTHON) -m kgen crd widget_operator.api -o deploy/crds --verify\n" in makefile
    readme = python_project.after_init["README.md"].decode()
    assert "### Changing the API" in readme and "### Changing the API" not in (
        project.after_init["README.md"].decode()
    )


def test_create_api_version_from_python_types_adds_a_module_and_marks_the_hub(
    tmp_path: Path, python_project: ScaffoldedVariant
) -> None:
    before, after = _widget_v1beta1_added(python_project.root, tmp_path)
    assert [f for f in sorted(set(after) - set(before))
            if not f.startswith("widget_operator_api/")] == [
        "deploy/samples/example.com_v1beta1_widget.yaml", "widget_operator/api/v1beta1.py"]
    hub = after["widget_operator/api/v1alpha1.py"].decode()
    assert '@resource(\n    "example.com",\n    "v1alpha1",\n    storage=True,\n' in hub
    crd = yaml.safe_load(after["deploy/crds/example.com_widgets.yaml"])
    assert [(v["name"], v["storage"]) for v in crd["spec"]["versions"]] == [
        ("v1alpha1", True), ("v1beta1", False)]
    assert "widget_operator_api/example/v1beta1/conversion.py" in after


def test_create_api_from_python_types_adds_a_version_module(
    python_project: ScaffoldedVariant,
) -> None:
    before, after = python_project.after_init, python_project.after_create
    added = sorted(set(after) - set(before))
    assert [f for f in added if not f.startswith("widget_operator_api/")] == [
        "deploy/crds/infra.example.com_policies.yaml",
        "deploy/rbac/policy_admin_role.yaml",
        "deploy/rbac/policy_editor_role.yaml",
        "deploy/rbac/policy_viewer_role.yaml",
        "deploy/samples/infra.example.com_v1_policy.yaml",
        "tests/test_policy_controller.py",
        "widget_operator/api/v1.py",
        "widget_operator/controllers/policy.py",
    ]
    assert after["widget_operator/api/v1alpha1.py"] == before["widget_operator/api/v1alpha1.py"]
    crd_text = after["deploy/crds/infra.example.com_policies.yaml"].decode()
    assert crd_text.startswith(HEADER)
    crd = yaml.safe_load(crd_text)
    assert (crd["metadata"]["name"], crd["spec"]["scope"]) == ("policies.infra.example.com",
                                                               "Cluster")


@pytest.mark.slow  # a second project's whole CI; .ci/run runs the slow tests
def test_the_scaffold_ci_from_python_types_passes(python_project: ScaffoldedVariant) -> None:
    """`make ci` runs `kgen crd --verify` as well as `kgen generate --verify`."""
    completed = _make(python_project.root, "ci")
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    assert completed.stdout.splitlines()[1:4:2] == [
        "deploy/crds: up to date (2 CRDs, 2 kind versions)",
        "widget_operator_api: up to date (2 kinds in 2 group/versions)",
    ]
    assert "15 passed" in completed.stdout


@pytest.mark.slow  # a second project's whole CI; .ci/run runs the slow tests
def test_a_field_added_to_the_python_types_reaches_the_crd_through_make_generate(
    tmp_path: Path, python_project: ScaffoldedVariant
) -> None:
    copy = tmp_path / "widget-operator"
    shutil.copytree(python_project.root, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    module = copy / "widget_operator/api/v1alpha1.py"
    anchor = '    """How many replicas to run."""\n'
    module.write_text(module.read_text().replace(
        anchor, anchor + '    colour: str | None = None\n    """The colour to paint it."""\n', 1))
    crd = copy / "deploy/crds/example.com_widgets.yaml"
    before = crd.read_bytes()
    completed = _make(copy, "verify")
    assert completed.returncode != 0
    assert completed.stderr.splitlines()[0] == "stale: deploy/crds/example.com_widgets.yaml"
    generated = _make(copy, "generate")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert crd.read_bytes() != before
    version = yaml.safe_load(crd.read_text())["spec"]["versions"][0]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["colour"] == {"description": "The colour to paint it.",
                                            "type": "string"}
    models = (copy / "widget_operator_api/example/v1alpha1/models.py").read_text()
    assert "colour: str | None" in models
    completed = _make(copy, "verify")
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_init_refuses_an_unknown_api_source(tmp_path: Path) -> None:
    code, output = _invoke("init", str(tmp_path / "op"), "--group", "example.com", "--kind",
                           "Widget", "--api-from", "go")
    assert code == 2
    assert "Invalid value for '--api-from': 'go' is not one of 'crd', 'python'." in output
    assert list(tmp_path.iterdir()) == []


def test_create_api_writes_nothing_when_the_python_types_do_not_import(
    tmp_path: Path, python_project: ScaffoldedVariant
) -> None:
    copy = tmp_path / "widget-operator"
    shutil.copytree(python_project.root, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    module = copy / "widget_operator/api/v1alpha1.py"
    module.write_text(module.read_text() + 'raise RuntimeError("broken on purpose")\n')
    before = _files(copy)
    code, output = _invoke("create", "api", "-C", str(copy), "--group", "example.com",
                           "--version", "v1", "--kind", "Gadget")
    assert (code, output) == (2, "widget_operator/api/v1_gadget.py: error: python -m kgen crd "
                                 "widget_operator.api -o deploy/crds failed: "
                                 "widget_operator.api: error: cannot import: RuntimeError: "
                                 "broken on purpose\n")
    assert _files(copy) == before
    assert [p.name for p in tmp_path.iterdir()] == ["widget-operator"]


def test_create_api_refuses_an_unknown_api_source_in_the_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.kgen]\npackage = "p"\napi-package = "p_api"\n'
                                             'crds = "deploy/crds"\napi-from = "go"\n')
    code, output = _invoke("create", "api", "-C", str(tmp_path), "--group", "example.com",
                           "--version", "v1", "--kind", "Gadget")
    assert (code, output) == (2, f"{tmp_path / 'pyproject.toml'}: error: [tool.kgen] api-from "
                                 "is 'go', not one of crd, python\n")
    assert [p.name for p in tmp_path.iterdir()] == ["pyproject.toml"]


# -- an asyncio operator: `kgen init --async` ------------------------------------------------------


@pytest.fixture(scope="module")
def async_project(tmp_path_factory: pytest.TempPathFactory) -> ScaffoldedVariant:
    """``kgen init --async``."""
    return ScaffoldedVariant(tmp_path_factory.mktemp("init-async") / "widget-operator",
                             "--async")


def test_init_async_writes_an_asyncio_operator(
    async_project: ScaffoldedVariant, project: Scaffolded
) -> None:
    files = async_project.after_init
    assert set(files) == set(project.after_init)  # the same layout
    assert "async = true" in files["pyproject.toml"].decode()
    assert "async = false" in project.after_init["pyproject.toml"].decode()
    manager = files["widget_operator/manager.py"].decode()
    assert "def new_manager(\n    transport: AsyncTransport" in manager
    assert "    manager = AsyncManager(\n" in manager
    controller = files["widget_operator/controllers/widget.py"].decode()
    assert "    async def reconcile(self, request: Request) -> Result | None:" in controller
    assert "obj = await self.client.get(Widget, request.namespace, request.name)" in controller
    cmd = files["widget_operator/cmd.py"].decode()
    assert ".start(\n            signals=(signal.SIGTERM, signal.SIGINT)\n        )" in cmd
    # The RBAC the async controllers need is the blocking ones' (the same builder rules).
    assert files["deploy/rbac/role.yaml"] == project.after_init["deploy/rbac/role.yaml"]


def test_create_api_in_an_async_project_adds_an_async_controller(
    async_project: ScaffoldedVariant,
) -> None:
    controller = async_project.after_create["widget_operator/controllers/policy.py"].decode()
    assert "    async def reconcile(self, request: Request) -> Result | None:" in controller
    setups = async_project.after_create["widget_operator/controllers/__init__.py"].decode()
    assert "SETUPS: list[Callable[[AsyncManager], object]] = [" in setups
    assert "    PolicyReconciler.setup_with_manager,\n" in setups


@pytest.mark.slow  # a third project's whole CI; .ci/run runs the slow tests
def test_the_async_scaffold_ci_passes(async_project: ScaffoldedVariant) -> None:
    """`make ci` of the async project: generated code and RBAC current, ruff, mypy
    --strict, and its tests (the reconcilers on the async fake, the manager over HTTP)."""
    completed = _make(async_project.root, "ci")
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    assert "widget_operator_api: up to date (2 kinds in 2 group/versions)" in completed.stdout
    assert "15 passed" in completed.stdout


def test_a_project_whose_async_setting_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kgen]\npackage = "p"\napi-package = "p_api"\ncrds = "deploy/crds"\n'
        'async = "yes"\n'
    )
    code, output = _invoke("create", "api", "-C", str(tmp_path), "--group", "example.com",
                           "--version", "v1", "--kind", "Thing")
    assert code != 0
    assert "[tool.kgen] async is 'yes', not true or false" in output


@pytest.fixture(scope="module")
def sharded_project(tmp_path_factory: pytest.TempPathFactory) -> ScaffoldedVariant:
    """``kgen init --sharded --replicas 4``."""
    return ScaffoldedVariant(tmp_path_factory.mktemp("init-sharded") / "widget-operator",
                             "--sharded", "--replicas", "4")


def test_init_sharded_writes_a_shard_ring_operator(
    sharded_project: ScaffoldedVariant, project: Scaffolded
) -> None:
    files = sharded_project.after_init
    assert set(files) == set(project.after_init)  # the same layout
    assert "sharded = true" in files["pyproject.toml"].decode()
    assert "sharded = false" in project.after_init["pyproject.toml"].decode()
    deployment = yaml.safe_load(files["deploy/manager.yaml"])
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert deployment["spec"]["replicas"] == 4
    assert "--leader-elect" not in container["args"]  # the ring replaces leader election
    assert container["env"] == [{"name": "POD_NAME",
                                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    unsharded = yaml.safe_load(project.after_init["deploy/manager.yaml"])
    assert unsharded["spec"]["replicas"] == 2
    assert "--leader-elect" in unsharded["spec"]["template"]["spec"]["containers"][0]["args"]
    roles = list(yaml.safe_load_all(files["deploy/rbac/role.yaml"]))
    lease_role = next(role for role in roles if role["kind"] == "Role")
    assert lease_role["metadata"]["namespace"] == "widget-operator-system"
    assert lease_role["rules"] == [{
        "apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
        "verbs": ["create", "delete", "get", "list", "update", "watch"]}]
    manager = files["widget_operator/manager.py"].decode()
    assert 'SHARD_RING = "widget-operator"' in manager
    assert "        sharding=ShardingConfig(\n            options.shard_ring,\n" in manager
    assert 'os.environ.get("POD_NAME")' in manager
    controller = files["widget_operator/controllers/widget.py"].decode()
    assert "            manager.controller_for(Widget)\n            .sharded()\n" in controller
    plain = project.after_init["widget_operator/controllers/widget.py"].decode()
    assert ".sharded()" not in plain


def test_create_api_in_a_sharded_project_adds_a_sharded_controller(
    sharded_project: ScaffoldedVariant,
) -> None:
    controller = sharded_project.after_create["widget_operator/controllers/policy.py"].decode()
    assert "            manager.controller_for(Policy)\n            .sharded()\n" in controller


@pytest.mark.slow  # another project's whole CI; .ci/run runs the slow tests
def test_the_sharded_scaffold_ci_passes(sharded_project: ScaffoldedVariant) -> None:
    """`make ci` of the sharded project: generated code and RBAC current, ruff, mypy
    --strict, and its tests (the manager joins the ring over HTTP and leaves it)."""
    completed = _make(sharded_project.root, "ci")
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    assert "widget_operator_api: up to date (2 kinds in 2 group/versions)" in completed.stdout


def test_init_refuses_zero_replicas(tmp_path: Path) -> None:
    code, output = _invoke("init", str(tmp_path / "p"), "--group", "example.com", "--kind",
                           "Widget", "--sharded", "--replicas", "0")
    assert code != 0
    assert "Invalid value for '--replicas': 0 is not in the range x>=1." in output
