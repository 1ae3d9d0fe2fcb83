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
"""

from __future__ import annotations

from typing import Any

from foo_api.samplecontroller import v1beta1
from foo_api.samplecontroller.v1alpha1 import GROUP_VERSION as HUB_VERSION
from foo_api.samplecontroller.v1alpha1 import Foo

from kgen_runtime.webhook import Converter, Spoke, stash_fields, unstash_fields

__all__ = ["DEFAULT_IMAGE", "FOO_CONVERTER", "deployment_image", "v1beta1_from_hub",
           "v1beta1_to_hub"]

DEFAULT_IMAGE = "nginx:latest"
"""The image a Foo's Deployment runs unless v1beta1's ``spec.deployment.image`` says."""

_KIND = "Foo"


def v1beta1_to_hub(foo: v1beta1.Foo) -> Foo:
    """``foo`` as v1alpha1: ``spec.deployment.name`` is ``spec.deploymentName`` there, the
    image goes to the annotation. Everything else is copied; ``foo`` is not changed."""
    wire = foo.model_dump(mode="json")
    wire["apiVersion"] = str(HUB_VERSION)
    spec: dict[str, Any] | None = wire.get("spec")
    deployment: dict[str, Any] = (spec.pop("deployment", None) or {}) if spec else {}
    if spec is not None and "name" in deployment:
        spec["deploymentName"] = deployment["name"]
    hub = Foo.model_validate(wire)
    stash_fields(hub, _KIND, {"image": deployment.get("image")})
    return hub


def v1beta1_from_hub(foo: Foo) -> v1beta1.Foo:
    """``foo`` as v1beta1, the inverse of :func:`v1beta1_to_hub` (the image taken back from
    the annotation); ``foo`` is not changed.

    ``spec.deployment`` is left out when there is neither a name nor an image: an empty
    ``deployment`` is not a valid v1beta1 object (its ``name`` is required).
    """
    hub = foo.deepcopy()
    image = unstash_fields(hub, _KIND).get("image")
    wire = hub.model_dump(mode="json")
    wire["apiVersion"] = str(v1beta1.GROUP_VERSION)
    spec = wire.get("spec")
    if spec is None and image is not None:
        spec = wire["spec"] = {}
    if spec is not None:
        deployment = {key: value for key, value in (
            ("name", spec.pop("deploymentName", None)), ("image", image)) if value is not None}
        if deployment:
            spec["deployment"] = deployment
    return v1beta1.Foo.model_validate(wire)


FOO_CONVERTER: Converter[Foo] = Converter.of(
    Foo, Spoke(v1beta1.Foo, to_hub=v1beta1_to_hub, from_hub=v1beta1_from_hub))
"""Converts Foos between v1alpha1 and v1beta1 (the conversion webhook's, and the test
server's in-process converter)."""


def deployment_image(foo: Foo) -> str:
    """The image ``foo``'s Deployment runs: v1beta1's ``spec.deployment.image`` as kept on
    the stored v1alpha1 object, else :data:`DEFAULT_IMAGE`."""
    image = unstash_fields(foo.deepcopy(), _KIND).get("image")
    return image if isinstance(image, str) and image else DEFAULT_IMAGE
