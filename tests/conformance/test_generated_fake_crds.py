"""A generated ``FakeClientset`` knows the CRDs its package came from: their kinds are
defaulted, pruned and validated by schema from the start, with no ``install_crd``."""

from __future__ import annotations

import pytest
from foo_api.fake import FakeClientset
from foo_api.samplecontroller.v1alpha1 import Foo

from kgen_runtime.rest.errors import InvalidError
from kgen_runtime.testing import StatusError


def wire_foo(**spec: object) -> Foo:
    """A Foo as decoded from the wire: not checked client-side."""
    return Foo.model_validate({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                               "metadata": {"name": "f", "namespace": "default"},
                               "spec": spec})


def test_a_plain_fake_validates_foos_by_their_crd() -> None:
    foos = FakeClientset().samplecontroller_v1alpha1.foos("default")
    with pytest.raises(InvalidError) as caught:
        foos.create(wire_foo(deploymentName="d", replicas=99))
    assert [(c.field, c.reason) for c in caught.value.causes] == [
        ("spec.replicas", "FieldValueInvalid")]
    assert foos.list().items == []


def test_a_plain_fake_prunes_unknown_fields_and_drops_disallowed_nulls() -> None:
    fake = FakeClientset()
    created = fake.samplecontroller_v1alpha1.foos("default").create(
        wire_foo(deploymentName=None, replicas=2, bogus="x"))
    assert created.model_dump()["spec"] == {"replicas": 2}
    crds = fake.core.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert crds is not None
    assert fake.core.store.get(crds, "", "foos.samplecontroller.k8s.io")["status"][
        "acceptedNames"]["kind"] == "Foo"


def test_seeding_an_invalid_foo_is_refused() -> None:
    with pytest.raises(StatusError) as caught:
        FakeClientset(wire_foo(deploymentName="d", replicas=0))
    assert caught.value.code == 422 and "spec.replicas" in str(caught.value)
