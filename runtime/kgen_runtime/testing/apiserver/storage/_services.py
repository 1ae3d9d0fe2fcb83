"""Service IP and node-port allocation, as the API server's Service REST storage does it.

On create a Service gets a cluster IP from the service range (``10.0.0.0/24``, envtest's
``--service-cluster-ip-range`` and the recorded kube-apiserver's, handed out from
``10.0.0.10``; ``clusterIP: None`` stays headless; a requested IP outside the range is
refused with the allocator's 422), ``clusterIPs``, ``ipFamilies: [IPv4]``
and ``ipFamilyPolicy: SingleStack``; NodePort and LoadBalancer ports get a node port from
30000 to 32767. An update that leaves these out keeps the allocated values
(``patchAllocatedValues``). Allocations are per server and never reused.

As in kube-apiserver, where the Service storage allocates in ``BeginCreate`` (after the
mutating admission webhooks, before the validating ones), a dry run shows the values it would
allocate without taking them. Through the webhooks, the store's preview of a create takes
them for real and the commit keeps them (:func:`carry_allocations`), so the validating
webhooks see the cluster IP that is stored.
"""

from __future__ import annotations

import ipaddress
import json
import threading
from typing import Any

from kgen_runtime.testing._status import Cause, StatusError

__all__ = ["ServiceAllocator", "carry_allocations", "first_service_ip", "keep_allocated"]

Obj = dict[str, Any]
#: controller-runtime pkg/internal/testing/controlplane/apiserver.go ``defaultArgs``.
_SERVICE_RANGE = ipaddress.ip_network("10.0.0.0/24")
_FIRST_HOST = 10
_NODE_PORTS = range(30000, 32768)


def first_service_ip() -> str:
    """The range's first address, the ``kubernetes`` Service's (pkg/controlplane/
    services.go ``ServiceIPRange``: ``GetIndexedIP(serviceClusterIPRange, 1)``)."""
    return str(_SERVICE_RANGE[1])


class ServiceAllocator:
    """Hands out cluster IPs and node ports to the Services of one server. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next_host = _FIRST_HOST
        self._next_port = _NODE_PORTS.start

    def allocate(self, service: Obj, *, dry_run: bool = False) -> None:
        """Fill in a new Service's cluster IP and node ports, in place; a ``dry_run`` shows
        the next free values without taking them."""
        spec = service.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        _check_in_range(service)
        with self._lock:
            host, node_port = self._next_host, self._next_port
            if not spec.get("clusterIP"):
                if host >= _SERVICE_RANGE.num_addresses - 1:
                    raise StatusError.internal("failed to allocate a serviceIP: range is full")
                spec["clusterIP"] = str(_SERVICE_RANGE[host])
                host += 1
            if spec.get("type") in ("NodePort", "LoadBalancer"):
                for port in spec.get("ports") or ():
                    if isinstance(port, dict) and not port.get("nodePort"):
                        if node_port not in _NODE_PORTS:
                            raise RuntimeError("the test server's node ports are exhausted")
                        port["nodePort"] = node_port
                        node_port += 1
            if not dry_run:
                self._next_host, self._next_port = host, node_port
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")


def _check_in_range(service: Obj) -> None:
    """A requested cluster IP must be in the range (pkg/registry/core/service/ipallocator
    ``ErrMismatchedNetwork``, reported by the Service storage's ``allocIPs``)."""
    spec = service["spec"]
    requested = spec.get("clusterIPs") or [spec.get("clusterIP")]
    for ip in requested:
        try:
            address = ipaddress.ip_address(str(ip))
        except ValueError:
            continue  # empty, None (headless) or not an IP: validation's business
        if address not in _SERVICE_RANGE:
            name = str((service.get("metadata") or {}).get("name", ""))
            shown = json.dumps(requested, separators=(",", ":"))
            raise StatusError.invalid("", "Service", name, [Cause(
                "FieldValueInvalid", f"Invalid value: {shown}: failed to allocate IP {ip}: the "
                "provided network does not match the current range", "spec.clusterIPs")])


def carry_allocations(service: Obj, allocated: Obj) -> None:
    """Give ``service`` (to be created) the cluster IP, IP families and node ports that
    ``allocated`` (the preview of its create) took, where it has none of its own."""
    spec, allocated_spec = service.get("spec"), allocated.get("spec") or {}
    if not isinstance(spec, dict):
        return
    for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if not spec.get(field) and field in allocated_spec:
            spec[field] = allocated_spec[field]
    _carry_node_ports(spec, allocated_spec, only_missing_key=False)


def keep_allocated(service: Obj, old: Obj) -> None:
    """An update that leaves out the allocated values keeps them (patchAllocatedValues); one
    that changes only ``clusterIP`` has ``clusterIPs`` follow it (normalizeClusterIPs), for
    validation to refuse (pkg/registry/core/service/storage/storage.go)."""
    spec, old_spec = service.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if field not in spec and field in old_spec:
            spec[field] = old_spec[field]
    cluster_ip = spec.get("clusterIP")
    if (cluster_ip and cluster_ip != old_spec.get("clusterIP")
            and spec.get("clusterIPs") == old_spec.get("clusterIPs")):
        spec["clusterIPs"] = [cluster_ip]
    _carry_node_ports(spec, old_spec, only_missing_key=True)


def _carry_node_ports(spec: Obj, source: Obj, *, only_missing_key: bool) -> None:
    """Node ports of ``source``'s ports onto the same ports (port, protocol) of ``spec``
    that have none (``only_missing_key``: that leave the key out)."""
    source_ports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                    for p in source.get("ports") or () if isinstance(p, dict)}
    for port in spec.get("ports") or ():
        if not isinstance(port, dict):
            continue
        previous = source_ports.get((port.get("port"), port.get("protocol", "TCP")))
        missing = "nodePort" not in port if only_missing_key else not port.get("nodePort")
        if missing and previous:
            port["nodePort"] = previous
