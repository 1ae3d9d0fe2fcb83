"""What a bare kube-apiserver creates by itself when it starts.

No controller-manager is needed for these; the API server's own controllers and post-start
hooks write them (as user ``kube-apiserver``):

* the namespaces ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``
  (pkg/controlplane/controller/systemnamespaces);
* the ``kubernetes`` Service in ``default``: the first IP of the service range, port 443
  ``https`` to the secure port (6443 by default), labels ``component: apiserver`` and
  ``provider: kubernetes`` (pkg/controlplane/controller/kubernetesservice);
* the PriorityClasses ``system-node-critical`` and ``system-cluster-critical``
  (pkg/registry/scheduling/rest/storage_scheduling.go ``AddSystemPriorityClasses``, values
  from pkg/apis/scheduling ``SystemPriorityClasses``).
"""

from __future__ import annotations

from typing import Any

from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import WriteOptions
from kgen_runtime.testing.apiserver.storage._services import first_service_ip
from kgen_runtime.testing.apiserver.storage._store import ObjectStore

__all__ = ["SYSTEM_NAMESPACES", "create_system_objects"]

Obj = dict[str, Any]

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_SECURE_PORT = 6443
_PRIORITY_CLASSES = (
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be "
     "moved from their current node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in "
     "the cluster, but can be moved to another node if necessary."),
)


def create_system_objects(store: ObjectStore, registry: Registry) -> None:
    """Create the objects of the module docstring in ``store``, in the order above."""
    def create(group: str, plural: str, namespace: str, obj: Obj) -> None:
        info = registry.lookup(group, "v1", plural)
        assert info is not None  # built-in kinds, always served
        store.create(info, namespace, obj, options=WriteOptions(field_manager="kube-apiserver"))

    for name in SYSTEM_NAMESPACES:
        create("", "namespaces", "", {"metadata": {"name": name}})
    create("", "services", "default", {
        "metadata": {"name": "kubernetes",
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "sessionAffinity": "None", "clusterIP": first_service_ip(),
                 "ports": [{"name": "https", "protocol": "TCP", "port": 443,
                            "targetPort": _SECURE_PORT}]},
    })
    for name, value, description in _PRIORITY_CLASSES:
        create("scheduling.k8s.io", "priorityclasses", "", {
            "metadata": {"name": name}, "value": value, "description": description,
            "preemptionPolicy": "PreemptLowerPriority"})
