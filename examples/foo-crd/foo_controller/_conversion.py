"""Conversion between the Foo's versions: v1alpha1 is the hub, v1beta1 a spoke.

What changed in v1beta1: ``spec.deploymentName`` became ``spec.deployment.name`` (the
settings of the Deployment a Foo owns are grouped under ``spec.deployment``, as Ingress
v1 grouped ``serviceName``/``servicePort`` under ``backend.service``), and
``spec.deployment.image`` is new (v1alpha1 always runs ``nginx:latest``).

The hub is the storage version, v1alpha1: the controllers, their informers and every object
already stored speak it, so nothing but a v1beta1 request needs the conversion webhook, and
a rollback to a release that knows only v1alpha1 still reads every stored object
(``status.storedVersions`` stays ``[v1alpha1]``). v1alpha1 has no image field, so a v1beta1
image is kept in an annotation of the stored object (:func:`~kgen_runtime.webhook.stash_fields`,
as autoscaling/v1 kept v2's metrics) and restored when read as v1beta1: both round trips,
v1alpha1 → v1beta1 → v1alpha1 and v1beta1 → v1alpha1 → v1beta1, give back the same object
(property-tested). The controllers read the image from there with :func:`deployment_image`.

The generated ``foo_api.samplecontroller.v1beta1.conversion`` compares the two schemas and
copies what matches (metadata, ``spec.replicas``, ``status``); this module writes only what
the schemas cannot decide: the rename and the image.
"""

from __future__ import annotations

from foo_api.samplecontroller import v1beta1
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1beta1.conversion import foo_spoke
from foo_api.samplecontroller.v1beta1.models import FooSpec as BetaSpec
from foo_api.samplecontroller.v1beta1.models import FooSpecDeployment

from kgen_runtime.webhook import Converter, stash_fields, unstash_fields

__all__ = ["DEFAULT_IMAGE", "FOO_CONVERTER", "deployment_image", "v1beta1_from_hub",
           "v1beta1_to_hub"]

DEFAULT_IMAGE = "nginx:latest"
"""The image a Foo's Deployment runs unless v1beta1's ``spec.deployment.image`` says."""

_KIND = "Foo"


def _deployment_to_hub(foo: v1beta1.Foo, hub: Foo) -> None:
    """v1beta1's ``spec.deployment``: its name is v1alpha1's ``spec.deploymentName``, its
    image goes to the annotation (the generated part copied everything else)."""
    deployment = foo.spec.deployment if foo.spec is not None else None
    if deployment is None:
        return
    assert hub.spec is not None  # copied from foo.spec, with spec.replicas
    if deployment.name is not None:
        hub.spec.deployment_name = deployment.name
    stash_fields(hub, _KIND, {"image": deployment.image})


def _deployment_from_hub(foo: Foo, beta: v1beta1.Foo) -> None:
    """v1beta1's ``spec.deployment`` from v1alpha1's ``spec.deploymentName`` and the image
    kept in the annotation (which came over with the metadata; taken off ``beta`` here).

    ``spec.deployment`` is left out when there is neither a name nor an image: an empty
    ``deployment`` is not a valid v1beta1 object (its ``name`` is required).
    """
    image = unstash_fields(beta, _KIND).get("image")
    name = foo.spec.deployment_name if foo.spec is not None else None
    if name is None and image is None:
        return
    if beta.spec is None:
        beta.spec = BetaSpec()
    beta.spec.deployment = FooSpecDeployment.model_validate(
        {key: value for key, value in (("name", name), ("image", image)) if value is not None})


_V1BETA1 = foo_spoke(to_hub=_deployment_to_hub, from_hub=_deployment_from_hub)


def v1beta1_to_hub(foo: v1beta1.Foo) -> Foo:
    """``foo`` as v1alpha1: ``spec.deployment.name`` is ``spec.deploymentName`` there, the
    image goes to the annotation. Everything else is copied; ``foo`` is not changed."""
    return _V1BETA1.to_hub(foo)


def v1beta1_from_hub(foo: Foo) -> v1beta1.Foo:
    """``foo`` as v1beta1, the inverse of :func:`v1beta1_to_hub` (the image taken back from
    the annotation); ``foo`` is not changed."""
    return _V1BETA1.from_hub(foo)


FOO_CONVERTER: Converter[Foo] = Converter.of(Foo, _V1BETA1)
"""Converts Foos between v1alpha1 and v1beta1 (the conversion webhook's, and the test
server's in-process converter)."""


def deployment_image(foo: Foo) -> str:
    """The image ``foo``'s Deployment runs: v1beta1's ``spec.deployment.image`` as kept on
    the stored v1alpha1 object, else :data:`DEFAULT_IMAGE`."""
    image = unstash_fields(foo.deepcopy(), _KIND).get("image")
    return image if isinstance(image, str) and image else DEFAULT_IMAGE
