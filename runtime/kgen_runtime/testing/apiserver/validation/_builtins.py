"""Defaults and checks of built-in kinds that users trip over most, as tables.

Not a twin of every Go defaulter and validator: the defaults a test sees in what it reads
back (a Deployment's strategy and history limit, a pod template's policies, a Service's type
and ports, a Namespace's phase) and the refusals a test most often needs (selectors that miss
their template, pod templates without containers, negative replicas, bad names, ConfigMap and
Secret keys, Service ports, Job restart policies), with kube-apiserver's paths and messages.

:data:`DEFAULTS` maps a kind to ``(path, default)`` rows applied in order; a path is dotted,
``[*]`` walks every list item, and a callable default computes the value from the object at
the path's parent. :data:`CHECKS` maps a kind to functions returning 422 causes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from kgen_runtime import _names
from kgen_runtime.labels import SelectorError, selector_from_label_selector
from kgen_runtime.testing._status import Cause
from kgen_runtime.testing.apiserver.validation._crd import crd_causes
from kgen_runtime.testing.apiserver.validation._webhook_configurations import (
    webhook_configuration_causes,
)

__all__ = [
    "NAME_RULES",
    "apply_builtin_defaults",
    "builtin_causes",
    "decode_error",
]

Obj = dict[str, Any]
Default = Any  # a JSON value, or Callable[[Obj], Any] of the parent object
Check = Callable[[Obj, Obj | None], Iterator[Cause]]


def _image_pull_policy(container: Obj) -> str:
    image = str(container.get("image", ""))
    name = image.rsplit("/", 1)[-1].split("@", 1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name else ""
    return "Always" if tag in ("", "latest") and "@" not in image else "IfNotPresent"


_CONTAINER: list[tuple[str, Default]] = [
    ("terminationMessagePath", "/dev/termination-log"),
    ("terminationMessagePolicy", "File"),
    ("imagePullPolicy", _image_pull_policy),
    ("resources", {}),
    ("ports[*].protocol", "TCP"),
]
_POD_SPEC: list[tuple[str, Default]] = [
    ("restartPolicy", "Always"),
    ("terminationGracePeriodSeconds", 30),
    ("dnsPolicy", "ClusterFirst"),
    ("securityContext", {}),
    ("schedulerName", "default-scheduler"),
    # v1 conversion (pkg/apis/core/v1/conversion.go Convert_v1_PodSpec_To_core_PodSpec and
    # back): serviceAccountName is read from the deprecated serviceAccount when empty, and
    # serviceAccount is always written as serviceAccountName.
    ("serviceAccountName", lambda spec: spec.get("serviceAccount")),
    ("serviceAccount", lambda spec: spec.get("serviceAccountName")),
    *((f"{list_name}[*].{path}", value) for list_name in ("initContainers", "containers")
      for path, value in _CONTAINER),
]


def _under(prefix: str, rows: list[tuple[str, Default]]) -> list[tuple[str, Default]]:
    return [(f"{prefix}.{path}", value) for path, value in rows]


_TEMPLATE = _under("spec.template.spec", _POD_SPEC)


def _rolling_update(kind: str) -> Callable[[Obj], Obj | None]:
    def default(strategy: Obj) -> Obj | None:
        if strategy.get("type") != "RollingUpdate":
            return None
        return {"maxUnavailable": 1, "maxSurge": 0} if kind == "DaemonSet" else {
            "maxUnavailable": "25%", "maxSurge": "25%"}

    return default


#: A webhook's defaults (admissionregistration/v1 defaults.go ``SetDefaults_ValidatingWebhook``
#: and ``SetDefaults_Rule``; ``SetDefaults_ServiceReference``'s port 443 is not set here).
_WEBHOOK: list[tuple[str, Default]] = [
    ("webhooks[*].failurePolicy", "Fail"),
    ("webhooks[*].matchPolicy", "Equivalent"),
    ("webhooks[*].namespaceSelector", {}),
    ("webhooks[*].objectSelector", {}),
    ("webhooks[*].timeoutSeconds", 10),
    ("webhooks[*].rules[*].scope", "*"),
]

#: Defaults per (group, kind), as the API server's defaulters set them.
DEFAULTS: dict[tuple[str, str], list[tuple[str, Default]]] = {
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOK,
    # SetDefaults_MutatingWebhook: the same and reinvocationPolicy
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): [
        *_WEBHOOK, ("webhooks[*].reinvocationPolicy", "Never")],
    # pkg/apis/core/v1/defaults.go SetDefaults_PodSpec, then SetDefaults_Pod.
    ("", "Pod"): [*_under("spec", _POD_SPEC), ("spec.enableServiceLinks", True)],
    ("", "PodTemplate"): _under("template.spec", _POD_SPEC),
    ("", "ReplicationController"): [("spec.replicas", 1), *_TEMPLATE],
    ("", "Service"): [
        ("spec.type", "ClusterIP"),
        ("spec.sessionAffinity", "None"),
        ("spec.sessionAffinityConfig", lambda spec: {"clientIP": {"timeoutSeconds": 10800}}
         if spec.get("sessionAffinity") == "ClientIP" else None),
        ("spec.ports[*].protocol", "TCP"),
        ("spec.ports[*].targetPort", lambda port: port.get("port")),
        ("spec.internalTrafficPolicy",
         lambda spec: None if spec.get("type") == "ExternalName" else "Cluster"),
        ("spec.externalTrafficPolicy",
         lambda spec: "Cluster" if spec.get("type") in ("NodePort", "LoadBalancer") else None),
    ],
    ("apps", "Deployment"): [
        ("spec.replicas", 1),
        ("spec.strategy.type", "RollingUpdate"),
        ("spec.strategy.rollingUpdate", _rolling_update("Deployment")),
        ("spec.revisionHistoryLimit", 10),
        ("spec.progressDeadlineSeconds", 600),
        *_TEMPLATE,
    ],
    ("apps", "ReplicaSet"): [("spec.replicas", 1), *_TEMPLATE],
    ("apps", "StatefulSet"): [
        ("spec.replicas", 1),
        ("spec.podManagementPolicy", "OrderedReady"),
        ("spec.updateStrategy.type", "RollingUpdate"),
        ("spec.updateStrategy.rollingUpdate", lambda s: {"partition": 0} if s.get(
            "type") == "RollingUpdate" else None),
        ("spec.revisionHistoryLimit", 10),
        ("spec.persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain",
                                                       "whenScaled": "Retain"}),
        *_TEMPLATE,
    ],
    ("apps", "DaemonSet"): [
        ("spec.updateStrategy.type", "RollingUpdate"),
        ("spec.updateStrategy.rollingUpdate", _rolling_update("DaemonSet")),
        ("spec.revisionHistoryLimit", 10),
        *_TEMPLATE,
    ],
    ("batch", "Job"): [
        ("spec.completions", lambda spec: None if "parallelism" in spec else 1),
        ("spec.parallelism", 1),
        ("spec.backoffLimit", 6),
        ("spec.completionMode", "NonIndexed"),
        ("spec.suspend", False),
        ("spec.podReplacementPolicy", "TerminatingOrFailed"),
        ("spec.manualSelector", False),
        *_TEMPLATE,
    ],
    ("batch", "CronJob"): [
        ("spec.concurrencyPolicy", "Allow"),
        ("spec.suspend", False),
        ("spec.successfulJobsHistoryLimit", 3),
        ("spec.failedJobsHistoryLimit", 1),
        *_under("spec.jobTemplate", _TEMPLATE),
    ],
}


def apply_builtin_defaults(group: str, kind: str, obj: Obj) -> None:
    """Fill in the defaults of :data:`DEFAULTS` for a built-in kind, in place, and what the
    kind's strategy sets on every write (:data:`_ON_WRITE`)."""
    for path, default in DEFAULTS.get((group, kind), ()):
        _set_default(obj, path.split("."), default)
    normalise = _ON_WRITE.get((group, kind))
    if normalise is not None:
        normalise(obj)


def _namespace_name_label(namespace: Obj) -> None:
    """Every Namespace carries ``kubernetes.io/metadata.name: <its name>``."""
    meta = namespace["metadata"]
    meta["labels"] = {**(meta.get("labels") or {}),
                      "kubernetes.io/metadata.name": str(meta.get("name", ""))}


def _secret_string_data(secret: Obj) -> None:
    """``stringData`` is written into ``data`` (base64) and not stored; ``type`` is Opaque."""
    secret.setdefault("type", "Opaque")
    string_data = secret.pop("stringData", None)
    if string_data:
        data = secret.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def _requests_from_limits(pod: Obj) -> None:
    """SetDefaults_Pod: a container's limit without a request is also its request."""
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        resources = container.get("resources") if isinstance(container, dict) else None
        limits = (resources or {}).get("limits")
        if isinstance(limits, dict) and limits:
            requests = resources.setdefault("requests", {})  # type: ignore[union-attr]
            for name, quantity in limits.items():
                requests.setdefault(name, quantity)


def _crd_defaults(crd: Obj) -> None:
    """apiextensions-apiserver pkg/apis/apiextensions/v1/defaults.go: ``listKind`` and
    ``singular`` from the kind, conversion strategy ``None``, a conversion webhook service's
    port 443."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("listKind", names["kind"] + "List")
        names.setdefault("singular", names["kind"].lower())
    conversion = spec.setdefault("conversion", {"strategy": "None"})
    service = (((conversion or {}).get("webhook") or {}).get("clientConfig") or {}).get(
        "service")
    if isinstance(service, dict):
        service.setdefault("port", 443)


_ON_WRITE: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd_defaults,
    ("", "Namespace"): _namespace_name_label,
    ("", "Pod"): _requests_from_limits,
    ("", "Secret"): _secret_string_data,
}


def _set_default(node: Any, parts: list[str], default: Default) -> None:
    if not isinstance(node, dict):
        return
    head, rest = parts[0], parts[1:]
    if head.endswith("[*]"):
        for item in node.get(head[:-3]) or ():
            if rest:
                _set_default(item, rest, default)
        return
    if rest:
        if head not in node and not _creates_parent(rest):
            return
        _set_default(node.setdefault(head, {}), rest, default)
        return
    if head in node:
        return
    value = default(node) if callable(default) else orjson.loads(orjson.dumps(default))
    if value is not None:
        node[head] = value


def _creates_parent(rest: list[str]) -> bool:
    """Defaults create missing objects on the way (``spec.strategy``), except under lists
    and the pod template (a template without a spec is refused, not defaulted)."""
    return not any(part.endswith("[*]") for part in rest) and "template" not in rest


# -- checks ---------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _containers(spec: Obj, path: str) -> Iterator[Cause]:
    containers = spec.get("containers")
    if not containers:
        yield Cause("FieldValueRequired", "Required value", f"{path}.containers")
        return
    seen: set[str] = set()
    for list_name in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(list_name) or ()):
            where = f"{path}.{list_name}[{index}]"
            name = str(container.get("name") or "")
            if not name:
                yield Cause("FieldValueRequired", "Required value", f"{where}.name")
            elif errors := _names.dns1123_label_errors(name):
                yield Cause("FieldValueInvalid", f"Invalid value: {_json(name)}: {errors[0]}",
                            f"{where}.name")
            elif name in seen:
                yield Cause("FieldValueDuplicate", f"Duplicate value: {_json(name)}",
                            f"{where}.name")
            seen.add(name)
            if not container.get("image"):
                yield Cause("FieldValueRequired", "Required value", f"{where}.image")
            yield from _container_ports(container, where)


def _container_ports(container: Obj, where: str) -> Iterator[Cause]:
    """validateContainerPorts: a containerPort is required and a port number."""
    for index, port in enumerate(container.get("ports") or ()):
        number = port.get("containerPort") if isinstance(port, dict) else None
        field = f"{where}.ports[{index}].containerPort"
        if not number:
            yield Cause("FieldValueRequired", "Required value", field)
        elif isinstance(number, int) and not 1 <= number <= 65535:
            yield Cause("FieldValueInvalid", f"Invalid value: {number}: must be between 1 and "
                        "65535, inclusive", field)


def _pod_spec(path: str, restart_policies: tuple[str, ...] = ()) -> Check:
    def check(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
        spec = _at(obj, path)
        if not isinstance(spec, dict):
            yield Cause("FieldValueRequired", "Required value", path)
            return
        yield from _containers(spec, path)
        policy = spec.get("restartPolicy")
        if restart_policies and policy not in restart_policies:
            supported = ", ".join(_json(p) for p in restart_policies)
            yield Cause("FieldValueNotSupported", f"Unsupported value: {_json(policy)}: "
                        f"supported values: {supported}", f"{path}.restartPolicy")

    return check


def _selector_matches_template(template: str) -> Check:
    def check(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
        selector = _at(obj, "spec.selector")
        if not isinstance(selector, dict):
            yield Cause("FieldValueRequired", "Required value", "spec.selector")
            return
        labels = _at(obj, f"{template}.metadata.labels")
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            yield Cause("FieldValueInvalid", f"Invalid value: {_json(selector)}: empty selector "
                        f"is invalid for deployment", "spec.selector")
        elif not _selects(selector, labels or {}):
            yield Cause("FieldValueInvalid", f"Invalid value: {_json(labels)}: `selector` does "
                        f"not match template `labels`", f"{template}.metadata.labels")

    return check


def _selects(selector: Obj, labels: Obj) -> bool:
    expressions = [(e.get("key", ""), e.get("operator", ""), e.get("values") or ())
                   for e in selector.get("matchExpressions") or ()]
    try:
        return selector_from_label_selector(selector.get("matchLabels"), expressions).matches(
            labels)
    except SelectorError:
        return False


def _non_negative(path: str) -> Check:
    def check(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
        value = _at(obj, path)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            yield Cause("FieldValueInvalid", f"Invalid value: {value}: must be greater than or "
                        f"equal to 0", path)

    return check


def _data_keys(*fields: str) -> Check:
    def check(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
        seen: set[str] = set()
        for name in fields:
            for key in obj.get(name) or {}:
                for error in _names.config_map_key_errors(key):
                    yield Cause("FieldValueInvalid", f"Invalid value: {_json(key)}: {error}",
                                f"{name}[{key}]")
                if key in seen:
                    yield Cause("FieldValueInvalid", f"Invalid value: {_json(key)}: duplicate "
                                f"of key present in {fields[0]}", f"{name}[{key}]")
                seen.add(key)

    return check


def _service_ports(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
    spec = obj.get("spec") or {}
    ports = spec.get("ports") or []
    if not ports and spec.get("type", "ClusterIP") != "ExternalName" and spec.get(
            "clusterIP") != "None":
        yield Cause("FieldValueRequired", "Required value", "spec.ports")
    names: set[str] = set()
    for index, port in enumerate(ports):
        where = f"spec.ports[{index}]"
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            yield Cause("FieldValueRequired", "Required value", f"{where}.name")
        elif name in names:
            yield Cause("FieldValueDuplicate", f"Duplicate value: {_json(name)}", f"{where}.name")
        names.add(name)
        number = port.get("port")
        if not (isinstance(number, int) and 1 <= number <= 65535):
            yield Cause("FieldValueInvalid", f"Invalid value: {_json(number)}: must be between "
                        f"1 and 65535, inclusive", f"{where}.port")
        protocol = port.get("protocol", "TCP")
        if protocol not in ("SCTP", "TCP", "UDP"):
            yield Cause("FieldValueNotSupported", f"Unsupported value: {_json(protocol)}: "
                        f'supported values: "SCTP", "TCP", "UDP"', f"{where}.protocol")
        # validateServicePort: a numeric targetPort (defaulted to the port) is a port number
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool) and not (
                1 <= target <= 65535):
            yield Cause("FieldValueInvalid", f"Invalid value: {target}: must be between 1 and "
                        "65535, inclusive", f"{where}.targetPort")


def _immutable_when_set(*fields: str) -> Check:
    """A ConfigMap or Secret with ``immutable: true`` keeps it and its data
    (pkg/apis/core/validation ``ValidateConfigMapUpdate``/``ValidateSecretUpdate``)."""
    def check(obj: Obj, old: Obj | None) -> Iterator[Cause]:
        if old is None or old.get("immutable") is not True:
            return
        message = "Forbidden: field is immutable when `immutable` is set"
        if obj.get("immutable") is not True:
            yield Cause("FieldValueForbidden", message, "immutable")
        for field in fields:
            if obj.get(field) != old.get(field):
                yield Cause("FieldValueForbidden", message, field)

    return check


def _secret_type_kept(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """``ValidateSecretUpdate``: ``ValidateImmutableField(newSecret.Type, oldSecret.Type)``."""
    if old is not None and obj.get("type") != old.get("type"):
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(obj.get('type'))}: field is "
                    f"immutable", "type")


def _cluster_ips_kept(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """A Service's cluster IPs may be added or dropped, never changed, unless it is or
    becomes an ExternalName (``validateUpgradeDowngradeClusterIPs``)."""
    if old is None:
        return
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return
    ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    if len(ips) == len(old_ips):
        for index, (ip, old_ip) in enumerate(zip(ips, old_ips, strict=True)):
            if ip != old_ip:
                yield Cause("FieldValueInvalid", f"Invalid value: {_json(ips)}: may not change "
                            f"once set", f"spec.clusterIPs[{index}]")


def _role_ref_kept(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """A (Cluster)RoleBinding's ``roleRef`` never changes (pkg/apis/rbac/validation
    ``ValidateRoleBindingUpdate``), printed as Go's ``%v`` of the RoleRef struct would be
    through ``field.Invalid`` (JSON of its Go field names)."""
    if old is None or obj.get("roleRef") == old.get("roleRef"):
        return
    ref = obj.get("roleRef") or {}
    shown = _json({"APIGroup": ref.get("apiGroup", ""), "Kind": ref.get("kind", ""),
                   "Name": ref.get("name", "")})
    yield Cause("FieldValueInvalid", f"Invalid value: {shown}: cannot change roleRef",
                "roleRef")


#: The data keys a Secret of a type must have (pkg/apis/core/validation ``ValidateSecret``).
_SECRET_TYPE_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _secret_type_data(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
    """The keys of :data:`_SECRET_TYPE_KEYS` (ssh-auth's must not be empty either), a
    basic-auth Secret's username or password, a service-account-token Secret's account."""
    secret_type, data = obj.get("type"), obj.get("data") or {}
    for key in _SECRET_TYPE_KEYS.get(str(secret_type), ()):
        if key not in data or (secret_type == "kubernetes.io/ssh-auth" and not data[key]):
            yield Cause("FieldValueRequired", "Required value", f"data[{key}]")
    if secret_type == "kubernetes.io/basic-auth" and not {"username", "password"} & set(data):
        for key in ("username", "password"):
            yield Cause("FieldValueRequired", "Required value", f"data[{key}]")
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if secret_type == "kubernetes.io/service-account-token" and not annotations.get(
            "kubernetes.io/service-account.name"):
        yield Cause("FieldValueRequired", "Required value",
                    "metadata.annotations[kubernetes.io/service-account.name]")


def _lease_spec(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
    """pkg/apis/coordination/validation ``ValidateLeaseSpec``."""
    spec = obj.get("spec") or {}
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if isinstance(duration, int) and duration <= 0:
        yield Cause("FieldValueInvalid", f"Invalid value: {duration}: must be greater than 0",
                    "spec.leaseDurationSeconds")
    if isinstance(transitions, int) and transitions < 0:
        yield Cause("FieldValueInvalid", f"Invalid value: {transitions}: must be greater than "
                    "or equal to 0", "spec.leaseTransitions")


_CRON_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily",
                               "@midnight", "@hourly"})


def _cron_schedule(path: str) -> Check:
    """``validateScheduleFormat``: robfig/cron ``ParseStandard``'s descriptors and field
    count (the ranges of each field are not checked here)."""
    def check(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
        schedule = _at(obj, path)
        if not isinstance(schedule, str):
            return
        if schedule.startswith("@"):
            if schedule not in _CRON_DESCRIPTORS and not schedule.startswith("@every "):
                yield Cause("FieldValueInvalid", f"Invalid value: {_json(schedule)}: "
                            f"unrecognized descriptor: {schedule}", path)
            return
        fields = schedule.split()
        if len(fields) != 5:
            yield Cause("FieldValueInvalid", f"Invalid value: {_json(schedule)}: expected "
                        f"exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]", path)

    return check


_POD_UPDATABLE = ("`spec.containers[*].image`,`spec.initContainers[*].image`,"
                  "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
                  "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
                  "if it was previously negative)")


def _pod_update(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """pkg/apis/core/validation ``ValidatePodUpdate``: with the fields a Pod update may
    change put back to their old values, the spec must be the old one. (The real message
    goes on with a diff of Go's dump of the two specs, which is not reproduced.)"""
    if old is None:
        return
    # The stored pod as it comes back from etcd: defaulted (a fake's seed may not be).
    old = orjson.loads(orjson.dumps(old))
    apply_builtin_defaults("", "Pod", old)
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    munged = dict(spec)
    for list_name in ("containers", "initContainers"):
        new_list, old_list = spec.get(list_name) or [], old_spec.get(list_name) or []
        if new_list and len(new_list) == len(old_list):
            munged[list_name] = [
                {**new, "image": previous.get("image")} if "image" in previous else
                {k: v for k, v in new.items() if k != "image"}
                for new, previous in zip(new_list, old_list, strict=True)]
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged.pop(field, None)
        if field in old_spec:
            munged[field] = old_spec[field]
    grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = grace
    if munged != old_spec:
        yield Cause("FieldValueForbidden", f"Forbidden: pod updates may not change fields "
                    f"other than {_POD_UPDATABLE}", "spec")
    new_tolerations = [_without_seconds(t) for t in spec.get("tolerations") or ()]
    if any(_without_seconds(t) not in new_tolerations for t in old_spec.get("tolerations") or ()):
        yield Cause("FieldValueForbidden", "Forbidden: existing toleration can not be modified "
                    "except its tolerationSeconds", "spec.tolerations")  # validateOnlyAdded...


def _without_seconds(toleration: Any) -> Any:
    if not isinstance(toleration, dict):
        return toleration
    return {k: v for k, v in toleration.items() if k != "tolerationSeconds"}


_SCHEDULING_DIRECTIVES = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def _job_template_kept(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """pkg/apis/batch/validation ``ValidateJobSpecUpdate``: a Job's pod template spec is
    immutable, but for the scheduling directives of a suspended Job that never started
    (``AllowMutableSchedulingDirectives``). The real message prints Go's dump of the internal
    PodSpec (Go field names); here it is the JSON."""
    if old is None:
        return
    spec, old_spec = _at(obj, "spec.template.spec"), _at(old, "spec.template.spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return
    compared, old_compared = dict(spec), dict(old_spec)
    if (_at(obj, "spec.suspend") is True and _at(old, "spec.suspend") is True
            and not _at(old, "status.startTime")):
        for field in _SCHEDULING_DIRECTIVES:
            compared.pop(field, None)
            old_compared.pop(field, None)
    if compared != old_compared:
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(spec)}: field is immutable",
                    "spec.template.spec")


#: The kinds whose ObjectMeta name rule is not the default DNS-1123 subdomain (the ``nameFn``
#: each kind's Validate passes to ValidateObjectMeta: ValidateNamespaceName,
#: ValidateServiceName).
NAME_RULES: dict[tuple[str, str], Callable[[str], list[str]]] = {
    ("", "Namespace"): _names.dns1123_label_errors,
    ("", "Service"): _names.dns1035_label_errors,
}


def _crd_spec(obj: Obj, _old: Obj | None) -> Iterator[Cause]:
    """A CRD's own problems, checked before any write (create, update, patch)."""
    yield from crd_causes(obj.get("spec") or {})[0]


def _workload(template: str = "spec.template") -> list[Check]:
    # ValidatePodTemplateSpecForReplicaSet (and its StatefulSet/DaemonSet twins): Always only
    return [_non_negative("spec.replicas"), _selector_matches_template(template),
            _pod_spec(f"{template}.spec", ("Always",))]


#: Checks per (group, kind), each yielding 422 causes.
CHECKS: dict[tuple[str, str], list[Check]] = {
    ("", "Pod"): [_pod_spec("spec"), _pod_update],
    ("", "Service"): [_service_ports, _cluster_ips_kept],
    ("", "ConfigMap"): [_data_keys("data", "binaryData"),
                        _immutable_when_set("data", "binaryData")],
    ("", "Secret"): [_data_keys("data"), _secret_type_data, _immutable_when_set("data"),
                     _secret_type_kept],
    ("coordination.k8s.io", "Lease"): [_lease_spec],
    ("batch", "CronJob"): [_cron_schedule("spec.schedule")],
    ("rbac.authorization.k8s.io", "RoleBinding"): [_role_ref_kept],
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): [_role_ref_kept],
    ("apps", "Deployment"): _workload(),
    ("apps", "ReplicaSet"): _workload(),
    ("apps", "StatefulSet"): _workload(),
    ("apps", "DaemonSet"): _workload()[1:],
    ("apiextensions.k8s.io", "CustomResourceDefinition"): [_crd_spec],
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"):
        [webhook_configuration_causes],
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"):
        [webhook_configuration_causes],
    ("batch", "Job"): [_non_negative("spec.parallelism"), _non_negative("spec.completions"),
                       _non_negative("spec.backoffLimit"),
                       _pod_spec("spec.template.spec", ("OnFailure", "Never")),
                       _job_template_kept],
}


_BASE64_FIELDS = {("", "Secret"): "data", ("", "ConfigMap"): "binaryData"}
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def decode_error(group: str, kind: str, obj: Obj, into: str = "") -> str | None:
    """Why the body cannot be decoded (base64 ``data`` of a Secret, ``binaryData`` of a
    ConfigMap), as the server's 400 says it (``transformDecodeError``: the body's kind, then
    the kind the request wanted, ``into``, default ``kind``); None when it can."""
    field = _BASE64_FIELDS.get((group, kind))
    for value in (obj.get(field) or {}).values() if field else ():
        position = _base64_error_at(value) if isinstance(value, str) else 0
        if position is not None:
            return (f'{kind} in version "v1" cannot be handled as a {into or kind}: illegal base64 '
                    f"data at input byte {position}")
    return None


def _base64_error_at(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` fails on ``text``, or None if it decodes."""
    body = text.rstrip("=")
    padding = len(text) - len(body)
    for index, char in enumerate(body):
        if char not in _BASE64:
            return index
    # encoding/base64 decodeQuantum: an unpadded partial quantum fails where it starts; a
    # "=" after 0 or 1 characters of a quantum fails where it is; after 2, a missing second
    # "=" fails at the end; anything after the padding fails where it starts
    done = len(body) % 4
    if not padding:
        return None if not done else len(body) - done
    if done in (0, 1):
        return len(body)
    expected = 2 if done == 2 else 1
    if padding < expected:
        return len(text)
    return None if padding == expected else len(body) + expected


def builtin_causes(group: str, kind: str, obj: Obj, old: Obj | None) -> list[Cause]:
    """The causes of :data:`CHECKS` for a built-in kind (empty for kinds without checks)."""
    return [cause for check in CHECKS.get((group, kind), ()) for cause in check(obj, old)]


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj
