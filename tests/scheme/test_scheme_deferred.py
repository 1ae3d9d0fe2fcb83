"""Kinds registered by name (``Scheme.add_deferred``, resources with ``ModelRef`` models):
imported on first use, and then indistinguishable from kinds registered with their class."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import orjson
import pytest

from kgen_runtime.api.apps.v1 import DEPLOYMENT_RESOURCE, Deployment, DeploymentList
from kgen_runtime.codec import DecodeError, decode, encode
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import ModelRef, Resource
from kgen_runtime.scheme import (
    AlreadyRegisteredError,
    NoResourceMatchError,
    NotRegisteredError,
    RESTMapper,
    Scheme,
)

MODELS = "kgen_runtime.api.apps.v1.models"
DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
DEPLOYMENT_LIST = GroupVersionKind("apps", "v1", "DeploymentList")
DOCUMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    },
}


def eager() -> Scheme:
    scheme = Scheme()
    scheme.add_known_type(DEPLOYMENT, Deployment)
    scheme.add_known_type(DEPLOYMENT_LIST, DeploymentList)
    return scheme


def deferred() -> Scheme:
    scheme = Scheme()
    scheme.add_deferred(DEPLOYMENT, MODELS, "Deployment")
    scheme.add_deferred(DEPLOYMENT_LIST, MODELS, "DeploymentList")
    return scheme


def test_a_deferred_kind_decodes_and_encodes_as_an_eager_one() -> None:
    raw = orjson.dumps(DOCUMENT)
    late, early = decode(raw, deferred()), decode(raw, eager())
    assert type(late) is type(early) is Deployment
    assert late == early
    assert orjson.loads(encode(late, deferred())) == orjson.loads(encode(early, eager()))
    listed = decode(orjson.dumps({**DOCUMENT, "kind": "DeploymentList", "items": []}), deferred())
    assert type(listed) is DeploymentList


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"spec": {**DOCUMENT["spec"], "replicas": "many"}}, "spec.replicas"),  # type: ignore[dict-item]
        ({"metadata": {"name": 3}}, "metadata.name"),
        ({"spec": {"template": {"spec": {"containers": "web"}}}}, "spec.template.spec.containers"),
    ],
)
def test_a_deferred_kind_rejects_bad_documents_with_the_eager_error(
    change: dict[str, object], path: str
) -> None:
    raw = orjson.dumps({**DOCUMENT, **change})
    errors = []
    for scheme in (deferred(), eager()):
        with pytest.raises(DecodeError) as info:
            decode(raw, scheme)
        errors.append((info.value.path, str(info.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] == path


def test_new_lookup_and_object_kind_resolve_a_deferred_kind() -> None:
    scheme = deferred()
    assert scheme.recognizes(DEPLOYMENT)
    assert scheme.object_kind(Deployment) == DEPLOYMENT  # a class imported by its user
    assert scheme.object_kind(DeploymentList()) == DEPLOYMENT_LIST
    assert scheme.new(DEPLOYMENT) == eager().new(DEPLOYMENT)
    assert scheme.lookup(DEPLOYMENT_LIST) is DeploymentList
    assert scheme.all_known_types() == eager().all_known_types()


def test_resources_by_reference_register_deferred_and_equal_their_eager_twin() -> None:
    by_ref: Resource[Deployment] = Resource(
        group="apps",
        version="v1",
        kind="Deployment",
        list_kind="DeploymentList",
        plural="deployments",
        singular="deployment",
        namespaced=True,
        model=ModelRef(MODELS, "Deployment"),
        list_model=ModelRef(MODELS, "DeploymentList"),
        status_subresource=True,
        scale_subresource=DEPLOYMENT_RESOURCE.scale_subresource,
    )
    eager_twin = Resource(
        group="apps",
        version="v1",
        kind="Deployment",
        list_kind="DeploymentList",
        plural="deployments",
        singular="deployment",
        namespaced=True,
        model=Deployment,
        list_model=DeploymentList,
        status_subresource=True,
        scale_subresource=DEPLOYMENT_RESOURCE.scale_subresource,
    )
    assert by_ref == eager_twin and hash(by_ref) == hash(eager_twin)
    assert not by_ref.models_imported
    scheme = Scheme()
    scheme.add_resource(by_ref)
    assert scheme.resource_for(DEPLOYMENT) is by_ref
    assert not by_ref.models_imported
    scheme.add_resource(eager_twin)  # an equal resource is no conflict
    assert scheme.class_for(DEPLOYMENT) is Deployment
    assert by_ref.model is Deployment and not by_ref.models_imported
    assert by_ref.list_model is DeploymentList and by_ref.models_imported
    assert pickle.loads(pickle.dumps(by_ref)) == by_ref
    with pytest.raises(AttributeError, match="Resource is immutable"):
        by_ref.plural = "other"


def test_a_missing_class_fails_on_first_use_naming_the_kind() -> None:
    scheme = Scheme()
    scheme.add_deferred(DEPLOYMENT, MODELS, "Deploymnet")
    assert scheme.recognizes(DEPLOYMENT)
    with pytest.raises(ImportError) as info:
        scheme.class_for(DEPLOYMENT)
    assert str(info.value) == (
        "cannot import the class registered for apps/v1, Kind=Deployment: "
        f"module '{MODELS}' does not define 'Deploymnet'"
    )


def test_a_deferred_class_that_is_no_api_object_is_refused_on_first_use() -> None:
    scheme = Scheme()
    scheme.add_deferred(DEPLOYMENT, "kgen_runtime.meta", "KubeModel")
    with pytest.raises(TypeError, match="is not an APIObject subclass"):
        scheme.class_for(DEPLOYMENT)


def test_conflicting_registrations_are_refused() -> None:
    scheme = deferred()
    scheme.add_deferred(DEPLOYMENT, MODELS, "Deployment")  # the same name again: a no-op
    with pytest.raises(AlreadyRegisteredError, match=f"already registered as {MODELS}.Deployment"):
        scheme.add_deferred(DEPLOYMENT, MODELS, "DaemonSet")

    class Other(KubeObject):
        kind: str = "Deployment"

    with pytest.raises(AlreadyRegisteredError) as info:
        scheme.add_known_type(DEPLOYMENT, Other)
    assert str(info.value) == (
        f"apps/v1, Kind=Deployment is already registered as {MODELS}.Deployment, not "
        "test_conflicting_registrations_are_refused.<locals>.Other"
    )
    scheme.add_known_type(DEPLOYMENT, Deployment)  # the class the name stands for
    assert scheme.lookup(DEPLOYMENT) is Deployment
    with pytest.raises(AlreadyRegisteredError, match="registered as Deployment, not DaemonSet"):
        eager().add_deferred(DEPLOYMENT, MODELS, "DaemonSet")


def test_not_registered_errors_list_deferred_kinds() -> None:
    with pytest.raises(NotRegisteredError) as info:
        deferred().class_for(GroupVersionKind("apps", "v1", "Deploy"))
    assert str(info.value) == (
        'no kind is registered for apps/v1, Kind=Deploy; registered in group "apps": '
        "apps/v1, Kind=Deployment; apps/v1, Kind=DeploymentList"
    )
    with pytest.raises(NoResourceMatchError, match="no resource is registered for apps/v1"):
        deferred().resource_for(DEPLOYMENT)  # kinds only, no resource added


def test_the_generated_scheme_imports_no_model_until_a_kind_is_used() -> None:
    """In a fresh interpreter: names and scope come from the registration; the model module
    is imported by the first decode of its kind."""
    script = textwrap.dedent(
        f"""
        import sys
        from kgen_runtime.api.scheme import scheme
        from kgen_runtime.codec import decode
        from kgen_runtime.groupversion import GroupVersionKind
        from kgen_runtime.scheme import RESTMapper

        models = [m for m in sys.modules if m.endswith(".models")]
        assert models == [], models
        gvk = GroupVersionKind("apps", "v1", "Deployment")
        resource = scheme.resource_for(gvk)
        mapper = RESTMapper(scheme.resources())
        print(resource.plural, resource.namespaced, mapper.find("deployments").kind,
              scheme.recognizes(gvk))
        assert {MODELS!r} not in sys.modules
        obj = decode({orjson.dumps(DOCUMENT)!r}, scheme)
        print(type(obj).__module__, type(obj).__name__, obj.spec.replicas)
        print({MODELS!r} in sys.modules)
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "deployments True Deployment True",
        f"{MODELS} Deployment 3",
        "True",
    ]


def test_names_and_scope_of_a_resource_by_reference_need_no_import() -> None:
    widget: Resource[KubeObject] = Resource(
        group="example.com",
        version="v1",
        kind="Widget",
        plural="widgets",
        singular="widget",
        namespaced=False,
        model=ModelRef("example_never_imported.models", "Widget"),
        list_model=ModelRef("example_never_imported.models", "WidgetList"),
    )
    scheme = Scheme()
    scheme.add_resource(widget)
    mapper = RESTMapper(scheme.resources())
    assert mapper.find("widget").gvk == GroupVersionKind("example.com", "v1", "Widget")
    assert mapper.scope_for(widget.gvk).value == "Cluster"
    assert "example_never_imported" not in sys.modules
    with pytest.raises(ImportError, match="No module named 'example_never_imported'"):
        scheme.class_for(widget.gvk)
