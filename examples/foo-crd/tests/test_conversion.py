"""The Foo's conversion and admission rules without a server: exact conversions, lossless
round trips between every pair of versions (hypothesis), and the webhooks' edge cases.

The round trips hold for every object a version's schema admits and its server stores:
no ``null`` values (the API server drops them), no empty ``labels``, ``annotations`` or
``finalizers`` (ObjectMeta omits them), ``spec.deployment.name`` present when
``spec.deployment`` is (v1beta1 requires it), and the image annotation only on a v1alpha1
object with a spec (only the conversion writes it, from a v1beta1 spec).
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from foo_api.fake import FakeClientset
from foo_api.samplecontroller import v1alpha1, v1beta1
from foo_controller import (
    DEFAULT_IMAGE,
    FOO_CONVERTER,
    conversion_webhook,
    default_foo,
    deployment_image,
    new_deployment,
    v1beta1_from_hub,
    v1beta1_to_hub,
    validate_create,
    validate_update,
    webhook_configurations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen_runtime.webhook import AdmissionDenied

ALPHA = "samplecontroller.k8s.io/v1alpha1"
BETA = "samplecontroller.k8s.io/v1beta1"
STASH = "conversion.kgen.io/foo-fields"

Obj = dict[str, Any]

# -- strategies ----------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_names = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,14}[a-z0-9])?", fullmatch=True)
_replicas = st.integers(min_value=1, max_value=10)
_images = st.sampled_from(["nginx:1.27", "redis", "ghcr.io/x/y@sha256:00", ""]) | _text


def _optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Obj]:
    """Objects holding any subset of ``fields``."""
    return st.fixed_dictionaries({}, optional=fields)


def _metadata() -> st.SearchStrategy[Obj]:
    annotations = st.dictionaries(_names.filter(lambda key: key != STASH), _text, min_size=1,
                                  max_size=2)
    return st.fixed_dictionaries({"name": _names}, optional={
        "namespace": _names, "uid": st.uuids().map(str), "resourceVersion": st.just("7"),
        "generation": st.integers(1, 5),
        "labels": st.dictionaries(_names, _names, min_size=1, max_size=2),
        "annotations": annotations, "finalizers": st.lists(_names, min_size=1, max_size=2),
    })


_status = _optional(availableReplicas=st.integers(0, 10))


@st.composite
def alpha_foos(draw: st.DrawFn) -> Obj:
    """v1alpha1 Foos as the server stores them, some with a v1beta1 image kept."""
    foo: Obj = {"apiVersion": ALPHA, "kind": "Foo", "metadata": draw(_metadata())}
    spec = draw(st.none() | _optional(deploymentName=_names, replicas=_replicas))
    if spec is not None:
        foo["spec"] = spec
        image = draw(st.none() | _images)
        if image is not None:
            annotations = foo["metadata"].setdefault("annotations", {})
            annotations[STASH] = orjson.dumps({"image": image}).decode()
    if (status := draw(st.none() | _status)) is not None:
        foo["status"] = status
    return foo


@st.composite
def beta_foos(draw: st.DrawFn) -> Obj:
    """v1beta1 Foos as the server serves them."""
    foo: Obj = {"apiVersion": BETA, "kind": "Foo", "metadata": draw(_metadata())}
    deployment = st.fixed_dictionaries({"name": _names}, optional={"image": _images})
    spec = draw(st.none() | _optional(deployment=deployment, replicas=_replicas))
    if spec is not None:
        foo["spec"] = spec
    if (status := draw(st.none() | _status)) is not None:
        foo["status"] = status
    return foo


FOOS_OF = {ALPHA: alpha_foos(), BETA: beta_foos()}
PAIRS = list(itertools.permutations(FOO_CONVERTER.api_versions, 2))


def test_every_version_has_objects_to_try() -> None:
    assert sorted(FOOS_OF) == sorted(FOO_CONVERTER.api_versions)
    assert PAIRS == [(ALPHA, BETA), (BETA, ALPHA)]


@pytest.mark.parametrize(("start", "through"), PAIRS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_round_trip_through_another_version_is_lossless(
    start: str, through: str, data: st.DataObject
) -> None:
    foo = data.draw(FOOS_OF[start])
    there = FOO_CONVERTER.convert(orjson.loads(orjson.dumps(foo)), through)
    assert there["apiVersion"] == through
    assert FOO_CONVERTER.convert(there, start) == foo


# -- exact conversions ---------------------------------------------------------------------------


def test_v1beta1_to_v1alpha1_renames_the_deployment_name_and_keeps_the_image() -> None:
    beta = v1beta1.Foo.model_validate({
        "metadata": {"name": "a", "annotations": {"team": "x"}},
        "spec": {"deployment": {"name": "web", "image": "redis:7"}, "replicas": 2},
        "status": {"availableReplicas": 1}})
    hub = v1beta1_to_hub(beta)
    assert hub.model_dump(mode="json") == {
        "apiVersion": ALPHA, "kind": "Foo",
        "metadata": {"name": "a", "annotations": {"team": "x", STASH: '{"image":"redis:7"}'}},
        "spec": {"deploymentName": "web", "replicas": 2}, "status": {"availableReplicas": 1}}
    assert beta.metadata.annotations == {"team": "x"}  # the input is left alone
    assert deployment_image(hub) == "redis:7"
    back = v1beta1_from_hub(hub)
    assert back.model_dump(mode="json") == beta.model_dump(mode="json")
    assert hub.metadata.annotations is not None and STASH in hub.metadata.annotations


def test_a_v1beta1_foo_without_an_image_needs_no_annotation() -> None:
    beta = v1beta1.Foo.model_validate({"metadata": {"name": "a"},
                                       "spec": {"deployment": {"name": "web"}}})
    hub = v1beta1_to_hub(beta)
    assert hub.model_dump(mode="json") == {"apiVersion": ALPHA, "kind": "Foo",
                                           "metadata": {"name": "a"},
                                           "spec": {"deploymentName": "web"}}
    assert deployment_image(hub) == DEFAULT_IMAGE


def test_the_controller_runs_the_image_v1beta1_asked_for() -> None:
    hub = v1beta1_to_hub(v1beta1.Foo.model_validate({
        "metadata": {"name": "a", "namespace": "ns", "uid": "u-1"},
        "spec": {"deployment": {"name": "web", "image": "redis:7"}, "replicas": 1}}))
    containers = new_deployment(hub).model_dump(mode="json")["spec"]["template"]["spec"]
    assert containers == {"containers": [{"name": "nginx", "image": "redis:7"}]}


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError) as refused:
        FOO_CONVERTER.convert({"apiVersion": ALPHA, "kind": "Foo", "metadata": {}},
                              "samplecontroller.k8s.io/v2")
    assert str(refused.value) == (
        f"Foo: unknown version 'samplecontroller.k8s.io/v2'; known: {ALPHA}, {BETA}")


def test_the_generated_fake_converts_with_the_converter_registered() -> None:
    fake = FakeClientset()
    fake.core.conversions.register(FOO_CONVERTER)  # the fake calls no webhook
    fake.samplecontroller_v1beta1.foos("ns").create(v1beta1.Foo.model_validate({
        "metadata": {"name": "a"},
        "spec": {"deployment": {"name": "web", "image": "redis:7"}, "replicas": 2}}))
    stored = fake.samplecontroller_v1alpha1.foos("ns").get("a")
    assert stored.model_dump(mode="json")["spec"] == {"deploymentName": "web", "replicas": 2}
    assert deployment_image(stored) == "redis:7"
    read = fake.samplecontroller_v1beta1.foos("ns").get("a")
    assert read.model_dump(mode="json")["spec"] == {
        "deployment": {"name": "web", "image": "redis:7"}, "replicas": 2}


# -- admission rules -----------------------------------------------------------------------------


def test_defaulting_leaves_set_fields_and_a_nameless_foo_alone() -> None:
    kept = v1beta1.Foo.model_validate({"metadata": {"name": "a"}, "spec": {
        "deployment": {"name": "web"}, "replicas": 3}})
    default_foo(kept)
    assert kept.model_dump(mode="json")["spec"] == {"deployment": {"name": "web"}, "replicas": 3}
    generated = v1alpha1.Foo.model_validate({"metadata": {"generateName": "a-"}})
    default_foo(generated)
    assert generated.model_dump(mode="json")["spec"] == {"replicas": 1}
    with pytest.raises(AdmissionDenied) as refused:
        validate_create(generated)
    assert (refused.value.code, refused.value.message) == (
        422, "spec.deploymentName: Required value")


def test_every_problem_with_a_name_is_reported_at_once() -> None:
    long_name = "X" * 254
    with pytest.raises(AdmissionDenied) as refused:
        validate_create(v1alpha1.Foo.model_validate({"spec": {"deploymentName": long_name}}))
    message = refused.value.message
    assert message.startswith(f'[spec.deploymentName: Invalid value: "{long_name}": must be '
                              "no more than 253 characters, spec.deploymentName: Invalid value")
    assert message.endswith("regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                            "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]")


def test_an_update_may_set_a_missing_name_but_not_to_an_invalid_one() -> None:
    legacy = v1alpha1.Foo.model_validate({"spec": {"replicas": 1}})
    assert validate_update(legacy, v1alpha1.Foo.model_validate(
        {"spec": {"deploymentName": "web", "replicas": 1}})) == []
    with pytest.raises(AdmissionDenied, match='Invalid value: "Web"'):
        validate_update(legacy, v1alpha1.Foo.model_validate({"spec": {"deploymentName": "Web"}}))


@pytest.mark.parametrize(("image", "warned"), [
    ("redis:7.2", False), ("registry:5000/team/redis:7", False),
    ("ghcr.io/x/y@sha256:0123", False), ("redis", True), ("redis:latest", True),
    ("registry:5000/redis", True),
])
def test_images_without_a_pinned_tag_are_warned_about(image: str, warned: bool) -> None:
    foo = v1beta1.Foo.model_validate({"spec": {"deployment": {"name": "a", "image": image}}})
    warnings = validate_create(foo)
    assert warnings == ([f'spec.deployment.image: "{image}" has no tag or the tag latest: '
                         "each new pod may pull a different image"] if warned else [])


def test_the_configurations_register_each_version_by_url() -> None:
    mutating, validating = webhook_configurations("https://127.0.0.1:9443/", b"PEM", name="n.x.io")
    assert mutating.model_dump(mode="json") == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "n.x.io"},
        "webhooks": [{
            "name": f"default-{version}.n.x.io",
            "clientConfig": {
                "url": f"https://127.0.0.1:9443/mutate-samplecontroller-k8s-io-{version}-foo",
                "caBundle": "UEVN"},
            "rules": [{"operations": ["CREATE", "UPDATE"],
                       "apiGroups": ["samplecontroller.k8s.io"], "apiVersions": [version],
                       "resources": ["foos"], "scope": "Namespaced"}],
            "admissionReviewVersions": ["v1"], "sideEffects": "None", "matchPolicy": "Exact",
            "failurePolicy": "Fail", "timeoutSeconds": 10, "reinvocationPolicy": "Never",
        } for version in ("v1alpha1", "v1beta1")]}
    assert [(w.name, w.client_config.url if w.client_config else None)
            for w in validating.webhooks or ()] == [
        (f"validate-{version}.n.x.io",
         f"https://127.0.0.1:9443/validate-samplecontroller-k8s-io-{version}-foo")
        for version in ("v1alpha1", "v1beta1")]
    assert conversion_webhook("https://h:1", b"PEM").model_dump(mode="json") == {
        "strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://h:1/convert", "caBundle": "UEVN"}}}
