"""Service IP and node-port allocation, as the API server's Service REST storage does it.

On create a Service gets a cluster IP from the service range (``10.96.0.0/12`` here, starting
at ``10.96.0.10``; ``clusterIP: None`` stays headless), ``clusterIPs``, ``ipFamilies: [IPv4]``
and ``ipFamilyPolicy: SingleStack``; NodePort and LoadBalancer ports get a node port from
30000 to 32767. An update that leaves these out keeps the allocated values
(``patchAllocatedValues``). Allocations are per server and never reused.
"""

from __future__ import annotations

import ipaddress
import itertools
import threading
from typing import Any

__all__ = ["ServiceAllocator", "keep_allocated"]

Obj = dict[str, Any]
_SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")
_FIRST_HOST = 10
_NODE_PORTS = range(30000, 32768)


class ServiceAllocator:
    """Hands out cluster IPs and node ports to the Services of one server. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hosts = itertools.count(_FIRST_HOST)
        self._ports = iter(_NODE_PORTS)

    def allocate(self, service: Obj) -> None:
        """Fill in a new Service's cluster IP and node ports, in place."""
        spec = service.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        with self._lock:
            if not spec.get("clusterIP"):
                spec["clusterIP"] = str(_SERVICE_RANGE[next(self._hosts)])
            if spec.get("type") in ("NodePort", "LoadBalancer"):
                for port in spec.get("ports") or ():
                    if isinstance(port, dict) and not port.get("nodePort"):
                        port["nodePort"] = next(self._ports)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")


def keep_allocated(service: Obj, old: Obj) -> None:
    """An update that leaves out the allocated values keeps them (patchAllocatedValues)."""
    spec, old_spec = service.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if field not in spec and field in old_spec:
            spec[field] = old_spec[field]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                 for p in old_spec.get("ports") or () if isinstance(p, dict)}
    for port in spec.get("ports") or ():
        previous = old_ports.get((port.get("port"), port.get("protocol", "TCP")))
        if isinstance(port, dict) and "nodePort" not in port and previous:
            port["nodePort"] = previous
