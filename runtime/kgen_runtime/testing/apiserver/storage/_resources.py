"""What the test server knows about each kind it serves, and the built-in catalogue.

A :class:`ServedResource` comes from one of three places: a generated package's
:class:`~kgen_runtime.resource.Resource` (:meth:`ServedResource.from_resource`), a posted
CustomResourceDefinition (:func:`from_crd`, one per served version, with its schema), or the
built-in table (:data:`BUILTINS`, checked by the tables of ``_builtin_schema`` and
``_builtins``).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any

from kgen_runtime._names import dns1123_subdomain_errors
from kgen_runtime.cel import CompiledRules
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.resource import Resource, ScaleSubresource
from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.openapi._builtin_schema import decode_builtin, schema_causes
from kgen_runtime.testing.apiserver.openapi._builtin_warnings import builtin_warnings
from kgen_runtime.testing.apiserver.openapi._schema import apply_defaults, prune, ratchet, validate
from kgen_runtime.testing.apiserver.openapi._zero_values import decode_metadata
from kgen_runtime.testing.apiserver.validation._builtins import (
    NAME_RULES,
    apply_builtin_defaults,
    builtin_causes,
    decode_error,
)
from kgen_runtime.testing.apiserver.validation._crd import crd_causes
from kgen_runtime.testing.apiserver.validation._metadata import metadata_causes

__all__ = ["BUILTINS", "CRD_RESOURCE", "CUSTOM_RESOURCE_VERBS", "ServedResource", "WriteOptions",
           "builtin", "from_crd"]

#: The verbs of a custom resource in discovery, in apiextensions-apiserver's order
#: (pkg/apiserver/customresource_discovery_controller.go).
CUSTOM_RESOURCE_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create",
                         "update", "watch")


@dataclass(slots=True)
class WriteOptions:
    """Per-request write options: ``dryRun=All``, ``fieldValidation`` and the field manager.

    ``warnings`` collects the ``Warning`` header texts the request produced. ``applying``
    marks a server-side apply, whose managedFields the apply itself computes.
    ``keep_allocations`` marks the dry run that previews a write for the validating
    webhooks: a Service's cluster IP and node ports it allocates are taken, for the write
    that follows to keep. ``requested`` holds the options as the request carried them (the
    fields of ``meta.k8s.io/v1`` CreateOptions, UpdateOptions or DeleteOptions), which the
    admission webhooks see as ``request.options``. ``admitted`` is the object the request
    carried and what the mutating webhooks made of it: the field manager records nobody for
    the fields they added (kube-apiserver's handlers run it before admission).
    """

    dry_run: bool = False
    field_validation: str = "Warn"
    warnings: list[str] = field(default_factory=list)
    field_manager: str = ""
    applying: bool = False
    keep_allocations: bool = False
    requested: dict[str, Any] = field(default_factory=dict)
    #: The version the request used (a write converted to the storage version records its
    #: managedFields entry under it); empty: the stored resource's own.
    api_version: str = ""
    #: The object's managedFields are already recorded, in the request's version before its
    #: conversion to the storage version: the store keeps them.
    fields_recorded: bool = False
    admitted: tuple[dict[str, Any], dict[str, Any]] | None = None
    #: The paths of the fields the request's JSON body repeats (``_duplicate_fields``).
    duplicates: list[str] = field(default_factory=list)

    def report_strict(self, kind: str, version: str, unknown: list[str]) -> None:
        """Apply the field-validation mode to the body's strict decoding errors: its
        duplicate fields, then the fields the schema does not know. Strict refuses them as
        handlers' ``transformDecodeError`` words a decode error (``%v in version %q cannot
        be handled as a %v: %v``); Warn makes each a warning."""
        errors = [f'duplicate field "{path}"' for path in self.duplicates]
        errors += [f'unknown field "{path}"' for path in unknown]
        if errors and self.field_validation == "Strict":
            raise StatusError.bad_request(
                f'{kind} in version "{version}" cannot be handled as a {kind}: '
                "strict decoding error: " + ", ".join(errors))
        if self.field_validation == "Warn":
            self.warnings += errors


@dataclass(frozen=True, slots=True)
class ServedResource:
    """One served (group, version, plural), with the facts the server's semantics need.

    ``schema`` is the structural ``openAPIV3Schema`` of a custom resource (``None`` for
    built-in kinds, which the built-in tables check); ``rules`` are its compiled
    ``x-kubernetes-validations``. ``selectable_fields`` and ``printer_columns`` are a CRD
    version's ``selectableFields`` JSON paths and ``additionalPrinterColumns``.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    status_subresource: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    schema: dict[str, Any] | None = None
    custom: bool = False
    scale: ScaleSubresource | None = None
    selectable_fields: tuple[str, ...] = ()
    printer_columns: tuple[dict[str, Any], ...] = ()
    rules: CompiledRules | None = None
    storage_version: str = ""  # a custom resource's: its CRD's storage version

    @classmethod
    def from_resource(cls, resource: Resource[Any]) -> ServedResource:
        return cls(
            group=resource.group,
            version=resource.version,
            kind=resource.kind,
            plural=resource.plural,
            singular=resource.singular,
            namespaced=resource.namespaced,
            status_subresource=resource.status_subresource,
            short_names=resource.short_names,
            categories=resource.categories,
            scale=resource.scale_subresource,
        )

    @property
    def gvr(self) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, self.plural)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def present(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object as read through this version: only ``apiVersion`` differs."""
        if obj.get("apiVersion") == self.api_version:
            return obj
        return {**obj, "apiVersion": self.api_version}

    def admit(
        self, obj: dict[str, Any], options: WriteOptions | None = None,
        old: dict[str, Any] | None = None, *, seed: bool = False,
    ) -> None:
        """Default, prune and validate ``obj`` in place, as the server does on every write.

        Metadata is checked for every kind; built-in kinds get their defaults and checks
        (:mod:`~kgen_runtime.testing.apiserver.validation._builtins`); the schema (custom
        resources) adds defaults, pruning, its rules and then its CEL rules (``old``: the
        stored object, on update).
        Unknown (pruned) fields are refused with 400 under ``fieldValidation=Strict`` and
        reported in ``options.warnings`` under ``Warn``, as are ratcheted rule failures.
        Raises a 422 Invalid :class:`StatusError` listing every broken rule. A ``seed`` (a
        fake clientset's fixture, client-go's ``tracker.Add``) skips the built-in kinds'
        defaults and checks.
        """
        decode_metadata(obj)
        if not (self.custom or seed):
            self._decode_builtin(obj, options)
            apply_builtin_defaults(self.group, self.kind, obj)
        name_rule = None if self.custom else NAME_RULES.get((self.group, self.kind))
        causes = metadata_causes(obj.get("metadata") or {},
                                 name_rule or dns1123_subdomain_errors)
        if not (self.custom or seed):
            found = [*builtin_causes(self.group, self.kind, obj, old),
                     *schema_causes(self.group, self.version, self.kind, obj)]
            causes += [c for i, c in enumerate(found) if c not in found[:i]]
        if self.schema is not None:
            apply_defaults(obj, self.schema)
            unknown = prune(obj, self.schema)
            if options is not None:
                options.report_strict(self.kind, self.version, unknown)
            found = validate(obj, self.schema)
            causes += found if old is None else ratchet(found, obj, old)
        if self.rules is not None and not self.rules.empty:
            causes += self._rule_causes(obj, causes, options, old)
        if causes:
            name = str((obj.get("metadata") or {}).get("name", ""))
            raise StatusError.invalid(self.group, self.kind, name, causes)
        if options is not None and not (self.custom or seed):
            # rest.BeforeCreate/BeforeUpdate: the strategy's warnings once it validated
            options.warnings += builtin_warnings(self.group, self.kind, obj)

    def _decode_builtin(self, obj: dict[str, Any], options: WriteOptions | None) -> None:
        """What decoding into the kind's Go type refuses (400) or drops (unknown fields)."""
        undecodable = decode_error(self.group, self.kind, obj)
        unknown, type_error = decode_builtin(self.group, self.version, self.kind, obj)
        if type_error and not undecodable:
            undecodable = (f'{self.kind} in version "{self.version}" cannot be handled as a '
                           f"{self.kind}: {type_error}")
        if undecodable:
            raise StatusError.bad_request(undecodable)
        if options is not None:
            options.report_strict(self.kind, self.version, unknown)

    def _rule_causes(
        self, obj: dict[str, Any], causes: list[Cause], options: WriteOptions | None,
        old: dict[str, Any] | None,
    ) -> list[Cause]:
        """The CEL rules' causes; not run when the schema found a blocking error, as the
        apiserver does."""
        assert self.rules is not None
        if any(cause.reason in _BLOCKING for cause in causes):
            return [Cause("FieldValueInvalid", "Invalid value: null: some validation rules "
                          "were not checked because the object was invalid; correct the "
                          "existing errors to complete validation", "<nil>")]
        outcome = self.rules.validate(obj, old)
        if options is not None:
            options.warnings += outcome.warnings
        return [Cause(error.reason, error.message, error.field) for error in outcome.errors]

    def describe(self) -> list[dict[str, Any]]:
        """The discovery ``APIResource`` entries: the resource and its subresources."""
        verbs = list(CUSTOM_RESOURCE_VERBS) if self.custom else [
            "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
        entries: list[dict[str, Any]] = [{
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
            **({"shortNames": list(self.short_names)} if self.short_names else {}),
            **({"categories": list(self.categories)} if self.categories else {}),
            **({"storageVersionHash": storage_version_hash(
                self.group, self.storage_version, self.kind)} if self.storage_version else {}),
        }]
        if self.status_subresource:
            entries.append({
                "name": f"{self.plural}/status",
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            })
        if self.scale is not None:
            entries.append({
                "name": f"{self.plural}/scale",
                "singularName": "",
                "namespaced": self.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            })
        return entries


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """apiserver pkg/endpoints/discovery/storageversionhash.go: the first 8 bytes of the
    SHA-256 of ``group/version/kind``, in base64."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def builtin(
    group: str,
    version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    status_subresource: bool = False,
    short_names: tuple[str, ...] = (),
    scale: ScaleSubresource | None = None,
) -> ServedResource:
    """A built-in kind (validated and defaulted by the built-in tables, not a schema)."""
    return ServedResource(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        status_subresource=status_subresource,
        short_names=short_names,
        scale=scale,
    )


#: Schema failures after which the apiserver does not run CEL rules (``hasBlockingErr``).
_BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong",
                       "FieldValueTooMany", "FieldValueTypeInvalid"})

#: Where the workload kinds keep their replicas and selector (shown as a string, see
#: ``_scale``).
_REPLICAS = ScaleSubresource(".spec.replicas", ".status.replicas", ".spec.selector")

CRD_RESOURCE = builtin(
    "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
    namespaced=False, status_subresource=True, short_names=("crd", "crds"),
)

#: The built-in kinds every test server serves from the start.
BUILTINS: tuple[ServedResource, ...] = (
    builtin("", "v1", "Namespace", "namespaces", namespaced=False, status_subresource=True,
            short_names=("ns",)),
    builtin("", "v1", "Pod", "pods", status_subresource=True, short_names=("po",)),
    builtin("", "v1", "Service", "services", status_subresource=True, short_names=("svc",)),
    builtin("", "v1", "ConfigMap", "configmaps", short_names=("cm",)),
    builtin("", "v1", "Secret", "secrets"),
    builtin("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",)),
    builtin("", "v1", "Event", "events", short_names=("ev",)),
    builtin("events.k8s.io", "v1", "Event", "events", short_names=("ev",)),
    builtin("apps", "v1", "Deployment", "deployments", status_subresource=True,
            short_names=("deploy",), scale=_REPLICAS),
    builtin("apps", "v1", "ReplicaSet", "replicasets", status_subresource=True,
            short_names=("rs",), scale=_REPLICAS),
    builtin("apps", "v1", "StatefulSet", "statefulsets", status_subresource=True,
            short_names=("sts",), scale=_REPLICAS),
    builtin("apps", "v1", "DaemonSet", "daemonsets", status_subresource=True,
            short_names=("ds",)),
    builtin("batch", "v1", "Job", "jobs", status_subresource=True),
    builtin("coordination.k8s.io", "v1", "Lease", "leases"),
    CRD_RESOURCE,
    # The rest of kgen_runtime.api's kinds (tests/testing/test_builtins.py keeps them in step).
    builtin("", "v1", "Endpoints", "endpoints", short_names=("ep",)),
    builtin("", "v1", "LimitRange", "limitranges", short_names=("limits",)),
    builtin("", "v1", "Node", "nodes", namespaced=False, status_subresource=True,
            short_names=("no",)),
    builtin("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False,
            status_subresource=True, short_names=("pv",)),
    builtin("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
            status_subresource=True, short_names=("pvc",)),
    builtin("", "v1", "PodTemplate", "podtemplates"),
    builtin("", "v1", "ReplicationController", "replicationcontrollers",
            status_subresource=True, short_names=("rc",), scale=_REPLICAS),
    builtin("", "v1", "ResourceQuota", "resourcequotas", status_subresource=True,
            short_names=("quota",)),
    builtin("apps", "v1", "ControllerRevision", "controllerrevisions"),
    builtin("batch", "v1", "CronJob", "cronjobs", status_subresource=True, short_names=("cj",)),
    builtin("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    builtin("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
            namespaced=False),
    builtin("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    builtin("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    builtin("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
            status_subresource=True, short_names=("hpa",)),
    builtin("networking.k8s.io", "v1", "IPAddress", "ipaddresses", namespaced=False),
    builtin("networking.k8s.io", "v1", "Ingress", "ingresses", status_subresource=True,
            short_names=("ing",)),
    builtin("networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False),
    builtin("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies",
            short_names=("netpol",)),
    builtin("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", namespaced=False,
            status_subresource=True),
    builtin("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets",
            status_subresource=True, short_names=("pdb",)),
    builtin("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies", namespaced=False),
    builtin("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings", namespaced=False),
    builtin("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations", namespaced=False),
    builtin("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies", namespaced=False, status_subresource=True),
    builtin("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings", namespaced=False),
    builtin("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations", namespaced=False),
    builtin("apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False,
            status_subresource=True),
    # autoscaling/v1 shares v2's storage, as on a real server (but without its conversion).
    builtin("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
            status_subresource=True, short_names=("hpa",)),
    builtin("certificates.k8s.io", "v1", "CertificateSigningRequest",
            "certificatesigningrequests", namespaced=False, status_subresource=True,
            short_names=("csr",)),
    builtin("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    builtin("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas",
            namespaced=False, status_subresource=True),
    builtin("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration",
            "prioritylevelconfigurations", namespaced=False, status_subresource=True),
    builtin("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False),
    builtin("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", namespaced=False),
    builtin("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims",
            status_subresource=True),
    builtin("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
    builtin("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", namespaced=False),
    builtin("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False,
            short_names=("pc",)),
    builtin("storage.k8s.io", "v1", "CSIDriver", "csidrivers", namespaced=False),
    builtin("storage.k8s.io", "v1", "CSINode", "csinodes", namespaced=False),
    builtin("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities"),
    builtin("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False,
            short_names=("sc",)),
    builtin("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments",
            namespaced=False, status_subresource=True),
    builtin("storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses",
            namespaced=False, short_names=("vac",)),
)


def from_crd(crd: dict[str, Any]) -> list[ServedResource]:
    """The served versions of an ``apiextensions.k8s.io/v1`` CustomResourceDefinition.

    Raises 422 Invalid when the manifest lacks the fields the server needs to serve it, or
    has what the server refuses (see :mod:`~kgen_runtime.testing.apiserver.validation._crd`).
    """
    name = str((crd.get("metadata") or {}).get("name", ""))
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    plural = names.get("plural", "")
    missing = [
        path
        for path, value in (
            ("spec.group", group),
            ("spec.names.plural", plural),
            ("spec.names.kind", names.get("kind")),
            ("spec.scope", spec.get("scope")),
            ("spec.versions", spec.get("versions")),
        )
        if not value
    ]
    if missing or name != f"{plural}.{group}":
        causes = [Cause("FieldValueRequired", "Required value", path) for path in missing]
        if not missing:
            causes.append(Cause("FieldValueInvalid", f'Invalid value: "{name}": must be '
                                f"spec.names.plural+\".\"+spec.group", "metadata.name"))
        raise StatusError.invalid("apiextensions.k8s.io", "CustomResourceDefinition", name,
                                  causes)
    causes, rules = crd_causes(spec)
    storage = next((str(v.get("name")) for v in spec["versions"] if v.get("storage")), "")
    if causes:
        raise StatusError.invalid("apiextensions.k8s.io", "CustomResourceDefinition", name,
                                  causes)
    served = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        served.append(ServedResource(
            group=group,
            version=version["name"],
            kind=names["kind"],
            plural=plural,
            singular=names.get("singular") or names["kind"].lower(),
            namespaced=spec["scope"] == "Namespaced",
            status_subresource="status" in subresources,
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()),
            schema=version["schema"]["openAPIV3Schema"],  # crd_causes required it
            custom=True,
            rules=rules.get(version["name"]),
            scale=None if scale is None else ScaleSubresource(
                scale.get("specReplicasPath", ".spec.replicas"),
                scale.get("statusReplicasPath", ".status.replicas"),
                scale.get("labelSelectorPath")),
            selectable_fields=tuple(str(field.get("jsonPath", ""))
                                    for field in version.get("selectableFields") or ()),
            printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            storage_version=storage,
        ))
    return served
