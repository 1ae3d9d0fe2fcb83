"""Admission and conversion webhooks served by the Manager (controller-runtime's
``pkg/webhook``), typed by the generated models::

    def default_foo(foo: Foo) -> None:
        if foo.spec is not None and foo.spec.replicas is None:
            foo.spec.replicas = 1

    def check_update(old: Foo, new: Foo) -> Warnings:
        if new.spec.deployment_name != old.spec.deployment_name:
            raise AdmissionDenied("spec.deploymentName is immutable")
        return None

    manager.webhooks.defaulter(Foo, default_foo)   # /mutate-samplecontroller-k8s-io-v1alpha1-foo
    manager.webhooks.validator(Foo, on_update=check_update)  # /validate-samplecontroller-...
    manager.webhooks.converter(Converter.of(Foo, Spoke(FooV1beta1, to_hub, from_hub)))  # hub: Foo

The API server reaches the server over HTTPS with the certificate in ``cert_dir``
(``tls.crt``/``tls.key``, reloaded when they change).
"""

from kgen_runtime.webhook._admission import (
    AdmissionDenied,
    AdmissionHandler,
    Defaulter,
    DefaultingHandler,
    ValidatingHandler,
    Warnings,
    allowed,
    denied,
    errored,
)
from kgen_runtime.webhook._certs import CertWatcher
from kgen_runtime.webhook._conversion import (
    ConversionError,
    Converter,
    Spoke,
    stash_fields,
    unstash_fields,
)
from kgen_runtime.webhook._review import (
    AdmissionRequest,
    AdmissionResponse,
    AdmissionReview,
    ConversionRequest,
    ConversionResponse,
    ConversionReview,
    GroupVersionKindRef,
    GroupVersionResourceRef,
    UserInfo,
)
from kgen_runtime.webhook._scaffold import EACH, FieldPath, SpokeScaffold, format_path
from kgen_runtime.webhook._selfsigned import write_self_signed_certificate
from kgen_runtime.webhook._server import DEFAULT_CERT_DIR, WebhookServer, webhook_path

__all__ = [
    "DEFAULT_CERT_DIR",
    "EACH",
    "AdmissionDenied",
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "AdmissionReview",
    "CertWatcher",
    "ConversionError",
    "ConversionRequest",
    "ConversionResponse",
    "ConversionReview",
    "Converter",
    "Defaulter",
    "DefaultingHandler",
    "FieldPath",
    "GroupVersionKindRef",
    "GroupVersionResourceRef",
    "Spoke",
    "SpokeScaffold",
    "UserInfo",
    "ValidatingHandler",
    "Warnings",
    "WebhookServer",
    "allowed",
    "denied",
    "errored",
    "format_path",
    "stash_fields",
    "unstash_fields",
    "webhook_path",
    "write_self_signed_certificate",
]
