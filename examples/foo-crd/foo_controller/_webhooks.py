"""The Foo's admission and conversion webhooks (kubebuilder's ``foo_webhook.go``).

Defaulting, for both versions (``/mutate-samplecontroller-k8s-io-<version>-foo``):
``spec.replicas`` becomes 1 when unset (sample-controller leaves the Deployment's default
then), and the Deployment's name becomes the Foo's own when unset (the controller refuses
a Foo without one).

Validation, for both versions (``/validate-samplecontroller-k8s-io-<version>-foo``), with
the field paths of the request's version in every message:

- the Deployment's name must be set and be a valid Deployment name (an RFC 1123
  subdomain): refused with 422 Invalid otherwise;
- an update may not change it: the controller would create a second Deployment and leave
  the first one running, owned by the Foo;
- warnings, not refusals: an image without a tag or tagged ``latest`` (each new pod may run
  a different image), and an update lowering ``spec.replicas`` (pods will be deleted).

Conversion (``/convert``): :data:`~foo_controller.FOO_CONVERTER`.

:func:`add_webhooks` registers all of them on a :class:`~kgen_runtime.webhook.WebhookServer`
(the Manager's ``manager.webhooks``); :func:`webhook_configurations` and
:func:`conversion_webhook` are what to register with the API server for a webhook server
reachable at a URL.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from foo_api.samplecontroller import v1alpha1, v1beta1
from foo_api.samplecontroller.v1alpha1.models import FooSpec as AlphaSpec
from foo_api.samplecontroller.v1beta1.models import FooSpec as BetaSpec
from foo_api.samplecontroller.v1beta1.models import FooSpecDeployment as BetaDeployment

from foo_controller._conversion import FOO_CONVERTER
from kgen_runtime.api.admissionregistration.v1 import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kgen_runtime.api.admissionregistration.v1.models import MutatingWebhook, ValidatingWebhook
from kgen_runtime.api.apiextensions.v1.models import CustomResourceConversion, WebhookConversion
from kgen_runtime.api.apiextensions.v1.models import (
    WebhookClientConfig as ConversionClientConfig,
)
from kgen_runtime.meta import LabelSelector, ObjectMeta
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer, webhook_path

__all__ = [
    "DEFAULT_REPLICAS",
    "WEBHOOK_CONFIGURATION_NAME",
    "add_webhooks",
    "conversion_webhook",
    "default_foo",
    "validate_create",
    "validate_update",
    "webhook_configurations",
]

AnyFoo = v1alpha1.Foo | v1beta1.Foo

DEFAULT_REPLICAS = 1
WEBHOOK_CONFIGURATION_NAME = "foos.samplecontroller.k8s.io"
"""The name of both webhook configurations :func:`webhook_configurations` makes."""

_VERSIONS: tuple[tuple[str, type[AnyFoo]], ...] = (
    (v1alpha1.VERSION, v1alpha1.Foo), (v1beta1.VERSION, v1beta1.Foo))
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    f"regex used for validation is '{_DNS1123_SUBDOMAIN.pattern}')")
_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class _Fields:
    """What the webhooks check, read from either version, with the paths it has there."""

    name_path: str
    deployment_name: str | None
    image: str | None
    replicas: int | None


def _fields(foo: AnyFoo) -> _Fields:
    if isinstance(foo, v1beta1.Foo):
        beta = foo.spec
        deployment = beta.deployment if beta is not None else None
        return _Fields("spec.deployment.name", deployment.name if deployment else None,
                       deployment.image if deployment else None,
                       beta.replicas if beta else None)
    alpha = foo.spec
    return _Fields("spec.deploymentName", alpha.deployment_name if alpha else None, None,
                   alpha.replicas if alpha else None)


# -- defaulting ----------------------------------------------------------------------------------


def default_foo(foo: AnyFoo) -> None:
    """Set ``spec.replicas`` (to 1) and the Deployment's name (to the Foo's) when unset.

    The name is left unset when the Foo has none yet (``generateName``: the API server names
    it after the mutating webhooks); validation then refuses it.
    """
    name = foo.metadata.name if foo.metadata is not None else None
    if isinstance(foo, v1beta1.Foo):
        spec = foo.spec = foo.spec or BetaSpec()
        if spec.deployment is None and name:
            spec.deployment = BetaDeployment(name=name)
        elif spec.deployment is not None and not spec.deployment.name and name:
            spec.deployment.name = name
    else:
        alpha = foo.spec = foo.spec or AlphaSpec()
        if not alpha.deployment_name and name:
            alpha.deployment_name = name
    if foo.spec.replicas is None:
        foo.spec.replicas = DEFAULT_REPLICAS


# -- validation ----------------------------------------------------------------------------------


def validate_create(foo: AnyFoo) -> Warnings:
    """Refuse a Foo whose Deployment name is missing or invalid; warn about its image."""
    fields = _fields(foo)
    _refuse_if(_name_errors(fields))
    return _image_warnings(fields)


def validate_update(old: AnyFoo, new: AnyFoo) -> Warnings:
    """Refuse a change of the Deployment's name (setting one that was missing is fine);
    warn about the image and about fewer replicas."""
    before, after = _fields(old), _fields(new)
    if before.deployment_name and after.deployment_name != before.deployment_name:
        _refuse_if([
            f"{after.name_path}: Invalid value: {_quoted(after.deployment_name)}: field is "
            f"immutable: the Foo's Deployment {_quoted(before.deployment_name)} would be "
            "left running; delete the Foo and create it again to use another Deployment"])
    if after.deployment_name != before.deployment_name:
        _refuse_if(_name_errors(after))
    warnings = _image_warnings(after) if after.image != before.image else []
    if before.replicas is not None and after.replicas is not None \
            and after.replicas < before.replicas:
        warnings.append(f"spec.replicas lowered from {before.replicas} to {after.replicas}: "
                        f"the Deployment will delete {before.replicas - after.replicas} pods")
    return warnings


def _name_errors(fields: _Fields) -> list[str]:
    name = fields.deployment_name
    if not name:
        return [f"{fields.name_path}: Required value"]
    errors = []
    if len(name) > 253:
        errors.append(f"{fields.name_path}: Invalid value: {_quoted(name)}: must be no more "
                      "than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        errors.append(f"{fields.name_path}: Invalid value: {_quoted(name)}: {_DNS1123_MESSAGE}")
    return errors


def _image_warnings(fields: _Fields) -> list[str]:
    image = fields.image
    if image is None or "@" in image:
        return []
    tag = image.rpartition("/")[2].partition(":")[2]
    if tag in ("", "latest"):
        return [f"spec.deployment.image: {_quoted(image)} has no tag or the tag latest: "
                "each new pod may pull a different image"]
    return []


def _refuse_if(errors: list[str]) -> None:
    """Refuse with 422 Invalid, the errors as apimachinery's ``ToAggregate`` prints them."""
    if errors:
        message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        raise AdmissionDenied(message, code=422)


def _quoted(value: str | None) -> str:
    """A value as Go's ``%q`` prints it in a field error."""
    return '"' + (value or "").replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- registration --------------------------------------------------------------------------------


def add_webhooks(server: WebhookServer) -> list[str]:
    """Serve the Foo's defaulting and validating webhooks (per version) and its conversion
    webhook on ``server``; returns the paths."""
    paths = []
    for _, model in _VERSIONS:
        paths.append(server.defaulter(model, default_foo))
        paths.append(server.validator(model, on_create=validate_create,
                                      on_update=validate_update))
    paths.append(server.converter(FOO_CONVERTER))
    return paths


def webhook_configurations(
    base_url: str,
    ca_bundle: bytes,
    *,
    name: str = WEBHOOK_CONFIGURATION_NAME,
    namespace_selector: LabelSelector | None = None,
) -> tuple[MutatingWebhookConfiguration, ValidatingWebhookConfiguration]:
    """The configurations registering :func:`add_webhooks`' admission webhooks with the API
    server, for a webhook server at ``base_url`` (``https://host:port``) whose certificate
    ``ca_bundle`` (PEM) verifies.

    One webhook per version, each matching only its own version (``matchPolicy: Exact``:
    the API server converts nothing for them), called on CREATE and UPDATE of ``foos`` (not
    of ``foos/status``: the controllers' status writes are not checked). ``sideEffects:
    None`` lets dry-run requests through them; ``failurePolicy: Fail`` refuses writes while
    the webhooks cannot be reached. ``namespace_selector`` confines them (the tests use it
    to leave other namespaces alone).

    Both configurations are called ``name``, their webhooks ``default-<version>.<name>`` and
    ``validate-<version>.<name>`` (the API server wants webhook names of three dot-separated
    parts at least, which the default's suffix has).
    """
    base_url = base_url.rstrip("/")
    mutating, validating = [], []
    for version, model in _VERSIONS:
        mutating.append(MutatingWebhook.model_validate({
            **_webhook(f"default-{version}.{name}", version,
                       base_url + webhook_path("mutate", model), ca_bundle, namespace_selector),
            "reinvocationPolicy": "Never"}))
        validating.append(ValidatingWebhook.model_validate(
            _webhook(f"validate-{version}.{name}", version,
                     base_url + webhook_path("validate", model), ca_bundle, namespace_selector)))
    return (
        MutatingWebhookConfiguration(metadata=ObjectMeta(name=name), webhooks=mutating),
        ValidatingWebhookConfiguration(metadata=ObjectMeta(name=name), webhooks=validating),
    )


def _webhook(name: str, version: str, url: str, ca_bundle: bytes,
             namespace_selector: LabelSelector | None) -> dict[str, Any]:
    """A mutating or validating webhook of one version, as wire JSON."""
    webhook: dict[str, Any] = {
        "name": name,
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_bundle).decode()},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [v1alpha1.GROUP],
                   "apiVersions": [version], "resources": ["foos"], "scope": "Namespaced"}],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "matchPolicy": "Exact",
        "failurePolicy": "Fail",
        "timeoutSeconds": _TIMEOUT_SECONDS,
    }
    if namespace_selector is not None:
        webhook["namespaceSelector"] = namespace_selector.model_dump(mode="json")
    return webhook


def conversion_webhook(base_url: str, ca_bundle: bytes) -> CustomResourceConversion:
    """The CRD's ``spec.conversion`` for a webhook server at ``base_url`` (see
    :func:`webhook_configurations`)."""
    return CustomResourceConversion(strategy="Webhook", webhook=WebhookConversion(
        conversion_review_versions=["v1"],
        client_config=ConversionClientConfig(url=base_url.rstrip("/") + "/convert",
                                             ca_bundle=base64.b64encode(ca_bundle).decode())))
