"""Which OpenAPI ``required`` properties of built-in kinds a real API server enforces.

kube-apiserver never checks a built-in object against the ``required`` lists of its OpenAPI
document: it decodes the body into Go structs (a missing field becomes its zero value) and runs
the Go validators of ``pkg/apis/*/validation``. A ``required`` property is therefore refused
with ``Required value`` only where its validator tests the zero value and says so. Elsewhere
the zero value is accepted (``ContainerStatus.image``/``imageID``/``ready``/``restartCount``,
status counters, condition ``type``/``status``) or refused with another message, which the
checks of :mod:`kgen_runtime.testing.apiserver.validation._builtins` give
(``ServicePort.port``: ``Invalid value: 0: must be between 1 and 65535, inclusive``;
``DeploymentSpec.template``: the template's own errors).

:data:`ENFORCED_REQUIRED` lists, by schema name (without ``io.k8s.api.``), the properties
whose validator answers ``field.Required`` for the zero value, read from v1.36's
``pkg/apis/{core,rbac,batch,networking,storage,autoscaling,events,admissionregistration}/
validation``; a property not listed is not enforced.
"""

from __future__ import annotations

__all__ = ["ENFORCED_REQUIRED", "enforced_required"]

ENFORCED_REQUIRED: dict[str, frozenset[str]] = {
    name: frozenset(fields)
    for name, fields in {
        # core: validateContainers, validateContainerPorts, ValidateEnv, ValidateVolumes,
        # ValidateVolumeMounts, validateVolumeDevices, validateKeyToPath, the env selectors,
        # validateDownwardAPIVolumeFile, validateSysctls, validateTopologySpreadConstraints
        "core.v1.PodSpec": ("containers",),
        "core.v1.Container": ("name",),
        "core.v1.EphemeralContainer": ("name",),
        "core.v1.ContainerPort": ("containerPort",),
        "core.v1.EnvVar": ("name",),
        "core.v1.Volume": ("name",),
        "core.v1.VolumeMount": ("name", "mountPath"),
        "core.v1.VolumeDevice": ("name", "devicePath"),
        "core.v1.KeyToPath": ("key", "path"),
        "core.v1.ConfigMapKeySelector": ("key",),
        "core.v1.SecretKeySelector": ("key",),
        "core.v1.ObjectFieldSelector": ("fieldPath",),
        "core.v1.ResourceFieldSelector": ("resource",),
        "core.v1.DownwardAPIVolumeFile": ("path",),
        "core.v1.ServiceAccountTokenProjection": ("path",),
        "core.v1.PersistentVolumeClaimVolumeSource": ("claimName",),
        "core.v1.HostPathVolumeSource": ("path",),
        "core.v1.NFSVolumeSource": ("server", "path"),
        "core.v1.CSIVolumeSource": ("driver",),
        "core.v1.Sysctl": ("name",),
        "core.v1.TopologySpreadConstraint": ("topologyKey",),
        # rbac: ValidatePolicyRule, ValidateRoleBinding, ValidateRoleBindingSubject
        "rbac.v1.PolicyRule": ("verbs",),
        "rbac.v1.RoleRef": ("name",),
        "rbac.v1.Subject": ("name",),
        # batch: validateCronJobSpec
        "batch.v1.CronJobSpec": ("schedule",),
        # networking: validateHTTPIngressRuleValue, validateIngressBackend, ValidateIPBlock
        "networking.v1.HTTPIngressRuleValue": ("paths",),
        "networking.v1.HTTPIngressPath": ("pathType",),
        "networking.v1.IngressServiceBackend": ("name",),
        "networking.v1.IPBlock": ("cidr",),
        # storage: validateProvisioner
        "storage.v1.StorageClass": ("provisioner",),
        # autoscaling: ValidateCrossVersionObjectReference
        "autoscaling.v1.CrossVersionObjectReference": ("kind", "name"),
        "autoscaling.v2.CrossVersionObjectReference": ("kind", "name"),
        # events.k8s.io: ValidateEventCreate
        "events.v1.Event": ("eventTime",),
        # admissionregistration: validateAdmissionReviewVersions, validateMatchCondition,
        # validateVariable, validateValidation, validateAuditAnnotation,
        # validateValidatingAdmissionPolicyBindingSpec, validateWebhookService (a webhook's
        # sideEffects: _webhook_configurations, with validateXxxWebhook's message)
        "admissionregistration.v1.ValidatingWebhook": ("admissionReviewVersions",),
        "admissionregistration.v1.MutatingWebhook": ("admissionReviewVersions",),
        "admissionregistration.v1.MatchCondition": ("name", "expression"),
        "admissionregistration.v1.Variable": ("name", "expression"),
        "admissionregistration.v1.Validation": ("expression",),
        "admissionregistration.v1.AuditAnnotation": ("key", "valueExpression"),
        "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec": (
            "policyName", "validationActions"),
        "admissionregistration.v1.ServiceReference": ("namespace", "name"),
    }.items()
}


def enforced_required(schema_name: str, required: list[str]) -> list[str]:
    """The properties of ``required`` (of the schema ``schema_name``) a real server refuses
    to see missing, sorted."""
    enforced = ENFORCED_REQUIRED.get(schema_name.removeprefix("io.k8s.api."), frozenset())
    return sorted(name for name in required if name in enforced)
