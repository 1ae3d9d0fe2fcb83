"""Which OpenAPI ``enum`` lists of built-in kinds a real API server enforces, and how it says so.

The ``enum`` of a built-in kind's property in the OpenAPI document is generated from the Go
type's ``+enum`` marker; kube-apiserver never checks it. It decodes the body into Go structs
and runs the validators of ``pkg/apis/*/validation``, which refuse a value outside the set
with ``field.NotSupported`` (``Unsupported value: "X": supported values: "a", "b"``) only for
some fields, listing the values in the validator's own order (``validateRestartPolicy``:
``"Always", "OnFailure", "Never"``; a ``sets.List`` is sorted). Status fields are mostly not
checked at all (``PodStatus.phase``, ``NodeStatus.phase``, the PV/PVC phases), some fields are
checked with other messages (``NodeSelectorRequirement.operator``: ``Invalid value``,
``Container.terminationMessagePolicy``: ``must be 'File' or 'FallbackToLogsOnError'``) or
only in some contexts (``ServiceSpec.externalTrafficPolicy`` only for NodePort/LoadBalancer
Services), and some accept fewer values than the enum (``StorageClass.reclaimPolicy``: no
Recycle). A webhook's ``sideEffects`` is checked against all four classes; the further v1 rule
that a new configuration may only say None or NoneOnDryRun is not applied, so tests can hold
a webhook with side effects as a cluster upgraded from v1beta1 can.

:data:`ENFORCED_ENUMS` lists, by schema name (without ``io.k8s.api.``), the properties whose
validator answers ``field.NotSupported`` for any value outside its set, with that set in the
message's order, read from v1.36's ``pkg/apis/{core,apps,batch,networking,storage,policy,
discovery,admissionregistration}/validation``. A property not listed is not checked here.
"""

from __future__ import annotations

__all__ = ["ENFORCED_ENUMS", "enforced_enum"]

_PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # validatePullPolicy
_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List(supportedPortProtocols)
_FAILURE_POLICIES = ("Fail", "Ignore")  # sets.List(supportedFailurePolicies)
_MATCH_POLICIES = ("Equivalent", "Exact")  # sets.List(supportedMatchPolicies)
_SIDE_EFFECTS = ("None", "NoneOnDryRun", "Some", "Unknown")  # supportedSideEffectClasses
_OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")  # supportedOperations
_SCOPES = ("*", "Cluster", "Namespaced")  # supportedScopes
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")  # sets.List(supportedVolumeModes)

ENFORCED_ENUMS: dict[str, dict[str, tuple[str, ...]]] = {
    # core: validateRestartPolicy, validateDNSPolicy, validatePullPolicy, validateContainerPorts,
    # validateEndpointPort, ValidateService, validateHTTPGetAction, validateMountPropagation,
    # validateSeccompProfileField, validateAppArmorProfileField, validatePodSecurityContext,
    # validateTopologySpreadConstraints, ValidatePersistentVolume(ClaimSpec)
    "core.v1.PodSpec": {
        "restartPolicy": ("Always", "OnFailure", "Never"),
        "dnsPolicy": ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"),
    },
    "core.v1.Container": {"imagePullPolicy": _PULL_POLICIES},
    "core.v1.EphemeralContainer": {"imagePullPolicy": _PULL_POLICIES},
    "core.v1.ImageVolumeSource": {"pullPolicy": _PULL_POLICIES},
    "core.v1.ContainerPort": {"protocol": _PROTOCOLS},
    "core.v1.ServicePort": {"protocol": _PROTOCOLS},
    "core.v1.EndpointPort": {"protocol": _PROTOCOLS},
    "core.v1.ServiceSpec": {
        "type": ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"),
        "sessionAffinity": ("ClientIP", "None"),
    },
    "core.v1.HTTPGetAction": {"scheme": ("HTTP", "HTTPS")},
    "core.v1.VolumeMount": {"mountPropagation": ("Bidirectional", "HostToContainer", "None")},
    "core.v1.SeccompProfile": {"type": ("Localhost", "RuntimeDefault", "Unconfined")},
    "core.v1.AppArmorProfile": {"type": ("Localhost", "RuntimeDefault", "Unconfined")},
    "core.v1.PodSecurityContext": {
        "fsGroupChangePolicy": ("Always", "OnRootMismatch"),
        "supplementalGroupsPolicy": ("Merge", "Strict"),
    },
    "core.v1.TopologySpreadConstraint": {
        "whenUnsatisfiable": ("DoNotSchedule", "ScheduleAnyway"),
        "nodeAffinityPolicy": ("Honor", "Ignore"),
        "nodeTaintsPolicy": ("Honor", "Ignore"),
    },
    "core.v1.PersistentVolumeClaimSpec": {"accessModes": _ACCESS_MODES,
                                          "volumeMode": _VOLUME_MODES},
    "core.v1.PersistentVolumeSpec": {
        "accessModes": _ACCESS_MODES,
        "volumeMode": _VOLUME_MODES,
        "persistentVolumeReclaimPolicy": ("Delete", "Recycle", "Retain"),
    },
    # apps: ValidateDeploymentStrategy (ValidateStatefulSetSpec says Invalid value: "must be
    # 'OrderedReady' or 'Parallel'" for podManagementPolicy, so that one is not here)
    "apps.v1.DeploymentStrategy": {"type": ("Recreate", "RollingUpdate")},
    # batch: validateConcurrencyPolicy
    "batch.v1.CronJobSpec": {"concurrencyPolicy": ("Allow", "Forbid", "Replace")},
    # networking: validateHTTPIngressRuleValue (sets.List(supportedPathTypes))
    "networking.v1.HTTPIngressPath": {"pathType": ("Exact", "ImplementationSpecific",
                                                   "Prefix")},
    # discovery: validateEndpointSlice*, validatePorts
    "discovery.v1.EndpointSlice": {"addressType": ("FQDN", "IPv4", "IPv6")},
    "discovery.v1.EndpointPort": {"protocol": _PROTOCOLS},
    # policy: ValidatePodDisruptionBudgetSpec
    "policy.v1.PodDisruptionBudgetSpec": {
        "unhealthyPodEvictionPolicy": ("AlwaysAllow", "IfHealthyBudget")},
    # storage: ValidateStorageClass (no Recycle for a class)
    "storage.v1.StorageClass": {
        "reclaimPolicy": ("Delete", "Retain"),
        "volumeBindingMode": ("Immediate", "WaitForFirstConsumer"),
    },
    # admissionregistration: validateValidatingWebhook/validateMutatingWebhook, validateRule,
    # validateMatchResources, validateValidatingAdmissionPolicySpec, validateValidationActions
    "admissionregistration.v1.ValidatingWebhook": {
        "failurePolicy": _FAILURE_POLICIES,
        "matchPolicy": _MATCH_POLICIES,
        "sideEffects": _SIDE_EFFECTS,
    },
    "admissionregistration.v1.MutatingWebhook": {
        "failurePolicy": _FAILURE_POLICIES,
        "matchPolicy": _MATCH_POLICIES,
        "sideEffects": _SIDE_EFFECTS,
        "reinvocationPolicy": ("IfNeeded", "Never"),
    },
    "admissionregistration.v1.RuleWithOperations": {"operations": _OPERATIONS,
                                                    "scope": _SCOPES},
    "admissionregistration.v1.NamedRuleWithOperations": {"operations": _OPERATIONS,
                                                         "scope": _SCOPES},
    "admissionregistration.v1.MatchResources": {"matchPolicy": _MATCH_POLICIES},
    "admissionregistration.v1.ValidatingAdmissionPolicySpec": {
        "failurePolicy": _FAILURE_POLICIES},
    "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec": {
        "validationActions": ("Audit", "Deny", "Warn")},
}


def enforced_enum(schema_name: str, property_name: str) -> tuple[str, ...] | None:
    """The values a real server accepts for ``property_name`` of ``schema_name`` (in its
    message's order), or None when it does not check the property against a set."""
    return ENFORCED_ENUMS.get(schema_name.removeprefix("io.k8s.api."), {}).get(property_name)
