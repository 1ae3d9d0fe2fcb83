"""``kgen generate --from-cluster`` against the test API server with CRDs installed.

The cluster's package must equal the one generated from the same definitions as files: the
CRDs' files for CRD groups, the shipped OpenAPI document for a built-in group. Only filtered
subsets are generated (formatting the 22 built-in groups takes a while).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kgen.cli import main
from kgen.diagnostics import GenerateError
from kgen.generate import load_package
from kgen.load.cluster import group_of, read_cluster
from kgen_runtime.rest import Config, HTTPTransport, Request, Response
from kgen_runtime.testing import TestAPIServer
from tests.shared import CORPUS, REPO, SHARED, requires_shared

from .conftest import crd

FOO_CRD = REPO / "examples" / "foo-crd" / "crds" / "foo.yaml"
RULES_CRD = CORPUS / "prometheus-operator__prometheus-operator__prometheusrules.yaml"
LEASE_DOCUMENT = SHARED / "openapi" / "apis_coordination.k8s.io_v1.json"
FOO_GROUP = "samplecontroller.k8s.io"
RULES_GROUP = "monitoring.coreos.com"
CLUSTER_ENV = "KGEN_TEST_KUBECONFIG"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FAILURES = {
    403: b'{"kind":"Status","status":"Failure","reason":"Forbidden","code":403}',
    503: b"service unavailable",
}
# A CRD group whose first label is a built-in group's ("apps").
# Cluster-scoped, an irregular plural, both subresources.
REPLICAS = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
GADGET_CRD = crd(
    "Gadget",
    {"type": "object", "properties": {"spec": REPLICAS, "status": REPLICAS}},
    group="apps.example.com",
    plural="gadgetry",
    scope="Cluster",
    subresources={
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    },
)

pytestmark = requires_shared(RULES_CRD)


def _manifest(path: Path) -> dict[str, Any]:
    (document,) = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return dict(document)


@pytest.fixture(scope="module")
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as running:
        for manifest in (_manifest(FOO_CRD), _manifest(RULES_CRD), GADGET_CRD):
            running.install_crd(manifest)
        yield running


def write_kubeconfig(path: Path, server_url: str, token: str = "secret") -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "test",
                "clusters": [{"name": "test", "cluster": {"server": server_url}}],
                "users": [{"name": "test", "user": {"token": token}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
            }
        )
    )
    return path


@pytest.fixture
def kubeconfig(tmp_path: Path, server: TestAPIServer) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", server.url)


def kgen(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def test_crd_groups_equal_generating_from_the_crd_files(kubeconfig: Path, tmp_path: Path) -> None:
    cluster, files = tmp_path / "cluster" / "api", tmp_path / "files" / "api"
    result = kgen(
        "generate",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--group",
        FOO_GROUP,
        "--group",
        RULES_GROUP,
        "-o",
        cluster,
    )
    assert result.exit_code == 0, result.output
    from_files = kgen("generate", FOO_CRD, RULES_CRD, "-o", files)
    assert from_files.exit_code == 0, from_files.output
    assert result.output.removeprefix(str(cluster)) == from_files.output.removeprefix(str(files))
    assert "3 kinds in 3 group/versions" in result.output
    for group_directory in ("samplecontroller", "monitoring"):
        assert tree(cluster / group_directory) == tree(files / group_directory)
    # Read from the CRD objects, not the lossy documents: short names and categories survive.
    register = (cluster / "monitoring" / "v1" / "register.py").read_text()
    assert 'short_names=("promrule",)' in register
    assert 'categories=("prometheus-operator",)' in register


@requires_shared(LEASE_DOCUMENT)
def test_builtin_group_equals_generating_from_its_document(
    kubeconfig: Path, tmp_path: Path
) -> None:
    cluster, files = tmp_path / "cluster" / "api", tmp_path / "files" / "api"
    result = kgen(
        "generate",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--group",
        "coordination.k8s.io",
        "-o",
        cluster,
        "-q",
    )
    assert (result.exit_code, result.output) == (0, "")
    assert kgen("generate", LEASE_DOCUMENT, "-o", files, "-q").exit_code == 0
    assert tree(cluster) == tree(files)


@requires_shared(LEASE_DOCUMENT)
@pytest.mark.skipif(not os.environ.get(CLUSTER_ENV), reason=f"${CLUSTER_ENV} is not set")
def test_real_cluster_builtin_group_equals_its_document(tmp_path: Path) -> None:
    """A v1.36 kube-apiserver serves the coordination.k8s.io/v1 document that ../shared holds."""
    cluster, files = tmp_path / "cluster" / "api", tmp_path / "files" / "api"
    result = kgen(
        "generate",
        "--from-cluster",
        "--kubeconfig",
        os.environ[CLUSTER_ENV],
        "--group",
        "coordination.k8s.io",
        "-o",
        cluster,
        "-q",
    )
    assert (result.exit_code, result.output) == (0, "")
    assert kgen("generate", LEASE_DOCUMENT, "-o", files, "-q").exit_code == 0
    assert tree(cluster) == tree(files)


def test_group_filters_select_documents_and_crds(server: TestAPIServer) -> None:
    by_group = {
        group: [
            d.location.file.removeprefix(server.url)
            for d in read_cluster(server.config(), [group]).documents
        ]
        for group in ("core", "", FOO_GROUP, "coordination.k8s.io")
    }
    assert by_group == {
        "core": ["/openapi/v3/api/v1"],
        "": ["/openapi/v3/api/v1"],
        FOO_GROUP: [f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.{FOO_GROUP}"],
        "coordination.k8s.io": ["/openapi/v3/apis/coordination.k8s.io/v1"],
    }
    two = read_cluster(server.config(), ["coordination.k8s.io", "core"]).documents
    assert [d.location.file.removeprefix(server.url) for d in two] == [
        "/openapi/v3/api/v1",
        "/openapi/v3/apis/coordination.k8s.io/v1",
    ]


def test_unfiltered_read_covers_every_served_group_version_once(server: TestAPIServer) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{server.url}/openapi/v3") as response:
        discovery = yaml.safe_load(response.read())
    served = sorted(p for p in discovery["paths"] if group_of(p) is not None)
    crd_paths = {f"apis/{g}/v1" for g in (RULES_GROUP, "apps.example.com")}
    crd_paths.update(f"apis/{FOO_GROUP}/{version}" for version in ("v1alpha1", "v1beta1"))
    inputs = read_cluster(server.config())
    crds = sorted(
        d.data["metadata"]["name"]
        for d in inputs.documents
        if d.data.get("kind") == "CustomResourceDefinition"
    )
    documents = [
        d.location.file.removeprefix(f"{server.url}/openapi/v3/")
        for d in inputs.documents
        if "openapi" in d.data
    ]
    assert crds == [
        "foos.samplecontroller.k8s.io",
        "gadgetry.apps.example.com",
        "prometheusrules.monitoring.coreos.com",
    ]
    assert documents == [p for p in served if p not in crd_paths]  # sorted, no CRD's twice
    assert inputs.warnings == ()


def test_verify_exit_codes(kubeconfig: Path, tmp_path: Path) -> None:
    output = tmp_path / "api"
    cluster = ("--from-cluster", "--kubeconfig", kubeconfig, "--group", FOO_GROUP, "-o", output)
    missing = kgen("generate", *cluster, "--verify")
    assert missing.exit_code == 1
    assert f"stale: {output / 'samplecontroller' / 'v1alpha1' / 'models.py'}" in missing.output
    assert not output.exists()
    assert kgen("generate", *cluster, "-q").exit_code == 0
    verified = kgen("generate", *cluster, "--verify")
    assert (verified.exit_code, verified.output) == (
        0,
        f"{output}: up to date (2 kinds in 2 group/versions)\n",
    )
    models = output / "samplecontroller" / "v1alpha1" / "models.py"
    models.write_text(models.read_text() + "# edited\n")
    stale = kgen("generate", *cluster, "--verify")
    assert (stale.exit_code, stale.output) == (1, f"stale: {models}\n")


def test_verify_sees_a_changed_cluster(tmp_path: Path) -> None:
    """The run cache is keyed by what the cluster served, not by the command line."""
    output, kubeconfig = tmp_path / "api", tmp_path / "kubeconfig"
    command = (
        "generate",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--group",
        "example.com",
        "-o",
        output,
    )
    sized = {"type": "object", "properties": {"size": {"type": "integer"}}}
    for schema, verify_code in ((None, 0), (sized, 1)):
        with TestAPIServer() as cluster:
            cluster.install_crd(crd("Widget", schema))
            write_kubeconfig(kubeconfig, cluster.url)
            if schema is None:
                assert kgen(*command, "-q").exit_code == 0
            result = kgen(*command, "--verify")
        assert result.exit_code == verify_code, result.output
    assert result.output.splitlines() == [
        f"stale: {output / 'crds.py'}",
        f"stale: {output / 'example' / 'v1' / 'applyconfigurations.py'}",
        f"stale: {output / 'example' / 'v1' / 'models.py'}",
    ]


def test_crd_documents_map_to_kinds_like_the_crd(server: TestAPIServer, tmp_path: Path) -> None:
    """Without permission to list CRDs, CRD groups come from the documents the server builds
    from them: plural, scope and subresources are read from the paths."""
    with contextlib.closing(_Failing(server.config())) as transport:
        inputs = read_cluster(server.config(), [FOO_GROUP, "apps.example.com"], transport=transport)
    (warning,) = inputs.warnings
    assert str(warning) == (
        f"{server.url}: warning: may not list CustomResourceDefinitions: apps.example.com, "
        f"{FOO_GROUP} generated from OpenAPI documents, without short names, categories and "
        "scale paths"
    )
    package = load_package([], "api", inputs.documents)
    kinds = {(gv.module, k.kind): k for gv in package.group_versions for k in gv.kinds}
    foo = kinds[(("samplecontroller", "v1alpha1"), "Foo")]
    gadget = kinds[(("apps", "v1"), "Gadget")]
    assert (foo.plural, foo.namespaced, foo.status_subresource) == ("foos", True, True)
    assert (gadget.plural, gadget.namespaced, gadget.status_subresource) == (
        "gadgetry",
        False,
        True,
    )
    assert gadget.scale_subresource is not None
    (tmp_path / "gadget.yaml").write_text(yaml.safe_dump(GADGET_CRD))
    from_files = load_package([FOO_CRD, tmp_path / "gadget.yaml"], "api")
    # The documents do not say which version is stored: every version reads as stored.
    foo_beta = dataclasses.replace(kinds[(("samplecontroller", "v1beta1"), "Foo")], storage=False)
    assert [k for gv in from_files.group_versions for k in gv.kinds] == [gadget, foo, foo_beta]


def test_crd_group_sharing_a_builtin_package_name_gets_its_whole_name(
    server: TestAPIServer,
) -> None:
    with contextlib.closing(_Failing(server.config())) as transport:
        inputs = read_cluster(server.config(), ["apps", "apps.example.com"], transport=transport)
    package = load_package([], "api", inputs.documents)
    groups = {gv.module: gv.group for gv in package.group_versions if gv.kinds}
    assert groups[("apps", "v1")] == "apps"
    assert groups[("apps_example_com", "v1")] == "apps.example.com"


def test_no_warning_when_no_crd_group_is_read(server: TestAPIServer) -> None:
    with contextlib.closing(_Failing(server.config())) as transport:
        inputs = read_cluster(server.config(), ["coordination.k8s.io"], transport=transport)
    assert [d.location.file for d in inputs.documents] == [
        f"{server.url}/openapi/v3/apis/coordination.k8s.io/v1"
    ]
    assert inputs.warnings == ()


def test_unavailable_document_is_skipped_unless_its_group_is_asked_for(
    server: TestAPIServer,
) -> None:
    """An aggregated API whose server is down answers 503 for its document."""
    path = "/openapi/v3/apis/policy/v1"
    with contextlib.closing(_Failing(server.config(), path, 503)) as transport:
        inputs = read_cluster(server.config(), transport=transport)
        with pytest.raises(GenerateError) as refused:
            read_cluster(server.config(), ["policy"], transport=transport)
    message = f"GET {path}: 503 ServiceUnavailable: the server responded with status 503: "
    assert [str(w) for w in inputs.warnings] == [
        f"{server.url}: warning: {message}service unavailable"
    ]
    fetched = {d.location.file.removeprefix(server.url) for d in inputs.documents}
    assert path not in fetched
    assert "/openapi/v3/apis/networking.k8s.io/v1" in fetched
    assert str(refused.value) == f"{server.url}: error: {message}service unavailable"


def test_inputs_do_not_depend_on_discovery_order(server: TestAPIServer) -> None:
    groups = [FOO_GROUP, RULES_GROUP, "coordination.k8s.io", "core", "policy"]
    read = read_cluster(server.config(), groups).documents
    with contextlib.closing(_Rewriting(server.config(), _reverse)) as transport:
        reversed_read = read_cluster(server.config(), groups, transport=transport).documents
    assert transport.rewritten == {"/openapi/v3", CRDS}
    assert read == reversed_read
    assert [d.location.file.removeprefix(server.url) for d in read] == [
        f"{CRDS}/foos.{FOO_GROUP}",
        f"{CRDS}/prometheusrules.{RULES_GROUP}",
        "/openapi/v3/api/v1",
        "/openapi/v3/apis/coordination.k8s.io/v1",
        "/openapi/v3/apis/policy/v1",
    ]


def test_crds_not_established_are_not_read(server: TestAPIServer) -> None:
    """A CRD whose names conflict, or one just created, is not served yet."""

    def unestablish_foos(path: str, data: Any) -> None:
        if path == CRDS:
            (foos,) = [c for c in data["items"] if c["spec"]["group"] == FOO_GROUP]
            for condition in foos["status"]["conditions"]:
                if condition["type"] == "Established":
                    condition["status"] = "False"

    with contextlib.closing(_Rewriting(server.config(), unestablish_foos)) as transport:
        inputs = read_cluster(server.config(), [FOO_GROUP, RULES_GROUP], transport=transport)
    assert transport.rewritten == {"/openapi/v3", CRDS}
    assert [d.location.file.removeprefix(server.url) for d in inputs.documents] == [
        f"{CRDS}/prometheusrules.{RULES_GROUP}",
        f"/openapi/v3/apis/{FOO_GROUP}/v1alpha1",  # what the server does serve for the group
        f"/openapi/v3/apis/{FOO_GROUP}/v1beta1",
    ]


def _aggregated_document(group: str, schema: str, plural: str) -> dict[str, Any]:
    kind = schema.rsplit(".", 1)[-1]
    gvk = {"group": group, "version": "v1beta1", "kind": kind}
    return {
        "openapi": "3.0.0",
        "components": {
            "schemas": {schema: {"type": "object", "x-kubernetes-group-version-kind": [gvk]}}
        },
        "paths": {
            f"/apis/{group}/v1beta1/{plural}": {"get": {"x-kubernetes-group-version-kind": gvk}}
        },
    }


def test_aggregated_groups_sharing_a_go_package_name_are_refused(tmp_path: Path) -> None:
    """Two aggregated APIs whose Go packages are both ``.../metrics/v1beta1``: one module
    cannot hold two groups, and no name is more theirs than the other's."""
    documents = {
        "metrics.json": _aggregated_document(
            "metrics.k8s.io", "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics", "nodes"
        ),
        "load.json": _aggregated_document(
            "metrics.example.com", "com.example.pkg.apis.metrics.v1beta1.PodLoad", "podloads"
        ),
    }
    for name, document in documents.items():
        (tmp_path / name).write_text(json.dumps(document))
    with pytest.raises(GenerateError) as refused:
        load_package([tmp_path], "api")
    assert str(refused.value) == (
        f"{tmp_path / 'metrics.json'}[0]: components.schemas."
        "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics: error: metrics.k8s.io/v1beta1 "
        "NodeMetrics would share module metrics/v1beta1 with group metrics.example.com "
        "(same Go package name)"
    )


def test_group_not_served(kubeconfig: Path, tmp_path: Path, server: TestAPIServer) -> None:
    result = kgen(
        "generate",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--group",
        "nope",
        "--group",
        "core",
        "--group",
        "nope.example.com",
        "-o",
        tmp_path / "api",
    )
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(
        f"{server.url}: error: group 'nope', 'nope.example.com' not served (served: "
        "admissionregistration.k8s.io, apiextensions.k8s.io,"
    )
    assert not (tmp_path / "api").exists()


def test_unreachable_server(tmp_path: Path) -> None:
    with TestAPIServer() as stopped:
        url = stopped.url
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
    result = kgen("generate", "--from-cluster", "--kubeconfig", kubeconfig, "-o", tmp_path / "api")
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(f"{url}: error: cannot reach the API server: ")
    assert "Connection refused" in line


@pytest.mark.parametrize(("code", "reason"), [(401, "Unauthorized"), (403, "Forbidden")])
def test_refused_credentials(
    kubeconfig: Path, tmp_path: Path, server: TestAPIServer, code: int, reason: str
) -> None:
    server.fail_next(1, code, reason, message="no entry for you")
    result = kgen("generate", "--from-cluster", "--kubeconfig", kubeconfig, "-o", tmp_path / "api")
    assert (result.exit_code, result.output) == (
        2,
        f"{server.url}: error: GET /openapi/v3: {code} {reason}: no entry for you\n",
    )


def test_server_without_openapi_v3(kubeconfig: Path, tmp_path: Path, server: TestAPIServer) -> None:
    server.fail_next(1, 404, "NotFound", message="the server could not find the requested resource")
    result = kgen("generate", "--from-cluster", "--kubeconfig", kubeconfig, "-o", tmp_path / "api")
    assert (result.exit_code, result.output) == (
        2,
        f"{server.url}: error: no /openapi/v3 (served from Kubernetes 1.27 on)\n",
    )


def test_bad_kubeconfig_and_usage(tmp_path: Path, kubeconfig: Path) -> None:
    result = kgen(
        "generate",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--context",
        "nope",
        "-o",
        tmp_path / "api",
    )
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert line.startswith(f"{kubeconfig}: error: cannot load kubeconfig {kubeconfig}: ")
    assert "nope" in line
    no_inputs = kgen("generate", "-o", tmp_path / "api")
    assert no_inputs.exit_code == 2
    assert "give INPUTS, --from-cluster or both" in no_inputs.output
    stray = kgen("generate", FOO_CRD, "--group", "apps", "-o", tmp_path / "api")
    assert stray.exit_code == 2
    assert "--group, --kubeconfig and --context need --from-cluster" in stray.output


class _Rewriting:
    """The HTTP transport, with the JSON answers for some paths changed by ``rewrite``."""

    def __init__(self, config: Config, rewrite: Callable[[str, Any], None]) -> None:
        self._http = HTTPTransport(config)
        self._rewrite = rewrite
        self.rewritten: set[str] = set()

    def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        response = self._http.send(request, stream=stream, read_timeout=read_timeout)
        if request.path not in ("/openapi/v3", CRDS):
            return response
        data = json.loads(response.read())
        self._rewrite(request.path, data)
        self.rewritten.add(request.path)
        return _Canned(200, json.dumps(data).encode())

    def close(self) -> None:
        self._http.close()


def _reverse(path: str, data: Any) -> None:
    """Discovery's paths and the CRD list in reverse order."""
    if path == CRDS:
        data["items"].reverse()
    else:
        data["paths"] = dict(reversed(data["paths"].items()))


class _Failing:
    """The HTTP transport, except that GETs of ``path`` are answered with ``status``; by
    default listing CRDs is forbidden (a user without RBAC on apiextensions.k8s.io)."""

    def __init__(self, config: Config, path: str = CRDS, status: int = 403) -> None:
        self._http = HTTPTransport(config)
        self._path = path
        self._status = status

    def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        if request.path == self._path:
            return _Canned(self._status, FAILURES[self._status])
        return self._http.send(request, stream=stream, read_timeout=read_timeout)

    def close(self) -> None:
        self._http.close()


class _Canned:
    """A response with a fixed status and body."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.headers: Mapping[str, str] = {}
        self._body = body

    def read(self) -> bytes:
        return self._body

    def iter_lines(self) -> Iterator[bytes]:
        raise NotImplementedError

    def close(self) -> None:
        pass
