"""The wire types of webhook calls: AdmissionReview (``admission.k8s.io/v1`` and
``v1beta1``) and ConversionReview (``apiextensions.k8s.io/v1`` and ``v1beta1``).

kube-apiserver does not serve these kinds, so they are not in its OpenAPI documents and
``kgen_runtime.api`` has no generated models for them; these are written by hand after
``k8s.io/api/admission/v1/types.go`` and ``apiextensions/v1``'s ``ConversionReview``. The
``v1beta1`` types have the same fields on the wire, so one model reads both; the answer
carries the request's ``apiVersion`` (kube-apiserver checks it for ``v1``:
``VerifyAdmissionResponse``, ``getConvertedObjectsFromResponse``).

Decoding is as lenient as for every other wire object: every Go slice and map may come as
``null`` (a nil slice), and kube-apiserver sends each ConversionReview with the zero-valued
response it decodes the answer into, ``"response": {"uid": "", "convertedObjects": null,
"result": {"metadata": {}}}`` (``createConversionReviewObjects`` in apiextensions-apiserver's
``webhook_converter.go``). Embedded objects stay plain JSON dicts: a webhook decodes them
into the registered model.
"""

from __future__ import annotations

from typing import Any, Literal

from kgen_runtime.meta import Field, KubeModel, Status

__all__ = [
    "ADMISSION_VERSIONS",
    "CONVERSION_VERSIONS",
    "AdmissionRequest",
    "AdmissionResponse",
    "AdmissionReview",
    "ConversionRequest",
    "ConversionResponse",
    "ConversionReview",
    "GroupVersionKindRef",
    "GroupVersionResourceRef",
    "UserInfo",
]

Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"] | str
"""admissionv1.Operation; a newer server's operation is kept as sent (the lenient spelling)."""

ADMISSION_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
"""The AdmissionReview versions kube-apiserver sends (``CreateAdmissionObjects``)."""

CONVERSION_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
"""The ConversionReview versions kube-apiserver sends (``createConversionReviewObjects``)."""


class GroupVersionKindRef(KubeModel):
    """metav1.GroupVersionKind as it appears in an AdmissionRequest."""

    group: str = ""
    version: str = ""
    kind: str = ""


class GroupVersionResourceRef(KubeModel):
    """metav1.GroupVersionResource as it appears in an AdmissionRequest."""

    group: str = ""
    version: str = ""
    resource: str = ""


class UserInfo(KubeModel):
    """authenticationv1.UserInfo: who made the request the webhook is asked about."""

    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str] | None] | None = None


class AdmissionRequest(KubeModel):
    """admissionv1.AdmissionRequest: one write the API server asks the webhook about.

    ``object`` is the new object (absent for DELETE), ``old_object`` the stored one
    (UPDATE, DELETE), both as the API server sent them.
    """

    uid: str = ""
    kind: GroupVersionKindRef = Field(default_factory=GroupVersionKindRef)
    resource: GroupVersionResourceRef = Field(default_factory=GroupVersionResourceRef)
    sub_resource: str | None = None
    request_kind: GroupVersionKindRef | None = None
    request_resource: GroupVersionResourceRef | None = None
    request_sub_resource: str | None = None
    name: str | None = None
    namespace: str | None = None
    operation: Operation = "CREATE"
    user_info: UserInfo = Field(default_factory=UserInfo)
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool | None = None
    options: dict[str, Any] | None = None


class AdmissionResponse(KubeModel):
    """admissionv1.AdmissionResponse: allowed or not, why, and an optional JSON patch.

    ``patch`` is the base64 text of a JSON Patch (RFC 6902) document, as on the wire.
    """

    uid: str = ""
    allowed: bool = False
    status: Status | None = None
    patch: str | None = None
    patch_type: Literal["JSONPatch"] | str | None = None
    audit_annotations: dict[str, str] | None = None
    warnings: list[str] | None = None


class AdmissionReview(KubeModel):
    """admissionv1.AdmissionReview: the request and, in the answer, the response."""

    api_version: str = "admission.k8s.io/v1"
    kind: str = "AdmissionReview"
    request: AdmissionRequest | None = None
    response: AdmissionResponse | None = None


class ConversionRequest(KubeModel):
    """apiextensionsv1.ConversionRequest: convert ``objects`` to ``desired_api_version``."""

    uid: str = ""
    desired_api_version: str = Field(default="", alias="desiredAPIVersion")
    objects: list[dict[str, Any]] | None = None


class ConversionResponse(KubeModel):
    """apiextensionsv1.ConversionResponse: the converted objects, in order, or a Failure."""

    uid: str = ""
    converted_objects: list[dict[str, Any]] | None = None
    result: Status = Field(default_factory=Status)


class ConversionReview(KubeModel):
    """apiextensionsv1.ConversionReview: the request and, in the answer, the response."""

    api_version: str = "apiextensions.k8s.io/v1"
    kind: str = "ConversionReview"
    request: ConversionRequest | None = None
    response: ConversionResponse | None = None
