"""The in-tree admission plugins that change a Pod on create, and which of them run.

kube-apiserver's default plugins include three that mutate every new Pod (in this order in
pkg/kubeapiserver/options/plugins.go ``AllOrderedPlugins``):

* ``ServiceAccount`` (plugin/pkg/admission/serviceaccount/admission.go): an empty
  ``serviceAccountName`` becomes ``default``; the ServiceAccount must exist (else 403
  ``error looking up service account <ns>/<name>: serviceaccount "<name>" not found``); unless
  the pod or the account turns automounting off, a projected ``kube-api-access-<5>`` volume
  (token, ``kube-root-ca.crt``, namespace) is added and mounted read-only at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` in every container that has no mount
  there; a pod without ``imagePullSecrets`` gets the account's.
* ``DefaultTolerationSeconds`` (plugin/pkg/admission/defaulttolerationseconds): tolerations
  of the ``not-ready`` and ``unreachable`` NoExecute taints for 300 s, unless tolerated.
* ``Priority`` (plugin/pkg/admission/priority): ``priority`` and ``preemptionPolicy`` from
  the named PriorityClass (403 if there is none), else from the one with ``globalDefault``,
  else 0 and ``PreemptLowerPriority``.

They run after the field manager recorded the request (a Pod's creator owns none of what
they add) and before the Pod strategy's ``PrepareForCreate``.

Which run is the server's choice, as ``--disable-admission-plugins`` is kube-apiserver's. The
default disables ``ServiceAccount``, as controller-runtime's envtest does ("if enabled, default
SA is missing which would force all tests to create one"; pkg/internal/testing/controlplane/
apiserver.go): without a controller-manager nobody creates the ``default`` ServiceAccount, and
every Pod of a user's test would be refused. ``disabled_admission_plugins=()`` runs all three,
as the recorded kube-apiserver of ../shared/fidelity did.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._store import ObjectStore, generated_name

__all__ = ["ENVTEST_DISABLED", "PLUGINS", "PodAdmission"]

Obj = dict[str, Any]

#: The mutating plugins of Pod creates this server knows, in kube-apiserver's order.
PLUGINS = ("ServiceAccount", "DefaultTolerationSeconds", "Priority")
#: What envtest passes as ``--disable-admission-plugins``: the default here.
ENVTEST_DISABLED = ("ServiceAccount",)

_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_TOKEN_VOLUME = "kube-api-access"
#: serviceaccount.WarnOnlyBoundTokenExpirationSeconds
_TOKEN_EXPIRATION_SECONDS = 3607
_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_DEFAULT_TOLERATION_SECONDS = 300


class PodAdmission:
    """The enabled plugins of :data:`PLUGINS` over one server's objects (see the module
    docstring). ``admit`` is called under the store's lock, from its write hook."""

    def __init__(self, store: ObjectStore, registry: Registry,
                 disabled: Iterable[str] = ENVTEST_DISABLED) -> None:
        unknown = set(disabled) - set(PLUGINS)
        if unknown:
            raise ValueError(f"unknown admission plugins: {sorted(unknown)}; known: {PLUGINS}")
        self._store = store
        self._registry = registry
        self.enabled = tuple(name for name in PLUGINS if name not in set(disabled))

    def admit(self, pod: Obj) -> None:
        """Run the enabled plugins on a Pod being created, in place; 403 when one refuses."""
        if "ServiceAccount" in self.enabled:
            self._service_account(pod)
        if "DefaultTolerationSeconds" in self.enabled:
            _default_tolerations(pod)
        if "Priority" in self.enabled:
            self._priority(pod)

    def _service_account(self, pod: Obj) -> None:
        meta, spec = pod["metadata"], pod.setdefault("spec", {})
        if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
            return  # a mirror pod is only validated
        name = spec.get("serviceAccountName") or "default"
        spec["serviceAccountName"] = spec["serviceAccount"] = name
        namespace = meta.get("namespace", "")
        account = self._get("serviceaccounts", namespace, name)
        if account is None:
            raise _forbidden(pod, f"error looking up service account {namespace}/{name}: "
                             f'serviceaccount "{name}" not found')
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = account.get("automountServiceAccountToken")
        if automount is not False:
            _mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [dict(s) for s in account["imagePullSecrets"]]

    def _priority(self, pod: Obj) -> None:
        spec = pod.setdefault("spec", {})
        class_name = spec.get("priorityClassName")
        if class_name:
            found = self._get("priorityclasses", "", class_name)
            if found is None:
                raise _forbidden(pod, f"no PriorityClass with name {class_name} was found")
        else:
            found = next((c for c in self._classes() if c.get("globalDefault")), None)
            if found is not None:
                spec["priorityClassName"] = found["metadata"]["name"]
        priority = found.get("value", 0) if found else 0
        policy = (found or {}).get("preemptionPolicy", "PreemptLowerPriority")
        if spec.get("priority") is not None and spec["priority"] != priority:
            raise _forbidden(pod, f"the integer value of priority ({spec['priority']}) must "
                             f"not be provided in pod spec; priority admission controller "
                             f"computed {priority} from the given PriorityClass name")
        if spec.get("preemptionPolicy") not in (None, policy):
            raise _forbidden(pod, f"the string value of PreemptionPolicy "
                             f"({spec['preemptionPolicy']}) must not be provided in pod spec; "
                             f"priority admission controller computed {policy} from the given "
                             f"PriorityClass name")
        spec["priority"], spec["preemptionPolicy"] = priority, policy

    def _get(self, plural: str, namespace: str, name: str) -> Obj | None:
        group = "scheduling.k8s.io" if plural == "priorityclasses" else ""
        info = self._registry.lookup(group, "v1", plural)
        if info is None:
            return None
        try:
            return self._store.get(info, namespace, name)
        except StatusError:
            return None

    def _classes(self) -> list[Obj]:
        return self._store.stored("scheduling.k8s.io", "priorityclasses")


def _mount_token(spec: Obj) -> None:
    """``mountServiceAccountToken``: the projected token volume, mounted where needed."""
    volumes = spec.get("volumes") or []
    existing = next((v.get("name") for v in volumes if isinstance(v, dict)
                     and str(v.get("name", "")).startswith(f"{_TOKEN_VOLUME}-")), None)
    name = existing or generated_name(f"{_TOKEN_VOLUME}-")
    needed = False
    for list_name in ("initContainers", "containers"):
        for container in spec.get(list_name) or ():
            mounts = container.get("volumeMounts") or []
            if not any(m.get("mountPath") == _TOKEN_PATH for m in mounts):
                container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True,
                                                       "mountPath": _TOKEN_PATH}]
                needed = True
    if needed and existing is None:
        spec["volumes"] = [*volumes, {"name": name, "projected": _token_volume_source()}]


def _token_volume_source() -> Obj:
    """serviceaccount ``TokenVolumeSource``."""
    return {"sources": [
        {"serviceAccountToken": {"expirationSeconds": _TOKEN_EXPIRATION_SECONDS,
                                 "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt",
                                                              "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ], "defaultMode": 420}


def _default_tolerations(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for taint in _TAINTS:
        if not any(t.get("key", "") in ("", taint) and t.get("effect", "") in ("", "NoExecute")
                   for t in tolerations if isinstance(t, dict)):
            tolerations.append({"key": taint, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": _DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


def _forbidden(pod: Obj, why: str) -> StatusError:
    """``admission.NewForbidden`` of a Pod create."""
    return StatusError.forbidden("", "pods", str(pod["metadata"].get("name", "")), why)
