"""A Pod's ``exec``, ``attach``, ``portforward`` and ``log`` subresources, up to the kubelet.

kube-apiserver answers these by finding the Pod's node and proxying to its kubelet
(pkg/registry/core/pod/strategy.go ``ExecLocation``, ``AttachLocation``,
``PortForwardLocation``, ``LogLocation``). The test server has no kubelet, but everything
decided before the proxying is the API server's own:

* the Pod must exist (404);
* ``exec``, ``attach`` and ``log`` pick the container (``validateContainer``): the one
  named by ``container`` (400 ``container <c> is not valid for pod <p>``), else the only one
  (400 ``a container name must be specified for pod <p>, choose one of: [a b]``);
* a Pod without ``spec.nodeName`` has no host: ``exec``, ``attach`` and ``portforward`` answer
  400 ``pod <p> does not have a host assigned``; ``log`` answers 200 with an empty
  ``text/plain`` body (a nil location streams nothing: apiserver ``LocationStreamer``);
* a Pod on a node that does not exist gets that node's 404 (``GetConnectionInfo``); one on a
  node that does exist would be proxied to a kubelet, which this server cannot do (500).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.endpoints._responses import BufferedResponse, CoreResponse

__all__ = ["CONNECT_SUBRESOURCES", "connect"]

Obj = dict[str, Any]
#: Pod subresources and the methods each accepts (the connect verbs; ``log`` is a GET).
CONNECT_SUBRESOURCES: dict[str, tuple[str, ...]] = {
    "exec": ("GET", "POST"), "attach": ("GET", "POST"), "portforward": ("GET", "POST"),
    "log": ("GET",),
}


def connect(subresource: str, method: str, pod: Obj, query: dict[str, str],
            node_exists: Callable[[str], bool]) -> CoreResponse:
    """The answer to ``method`` on a Pod's ``subresource`` (see the module docstring)."""
    if method not in CONNECT_SUBRESOURCES[subresource]:
        raise StatusError.method_not_allowed()
    name = str(pod["metadata"].get("name", ""))
    spec = pod.get("spec") or {}
    if subresource != "portforward":
        _container(spec, name, query.get("container", ""))
    node = spec.get("nodeName")
    if not node:
        if subresource == "log":
            return BufferedResponse(200, b"", {"Content-Type": "text/plain"})
        raise StatusError.bad_request(f"pod {name} does not have a host assigned")
    if not node_exists(node):
        raise StatusError.not_found("", "nodes", node)
    raise StatusError.internal(f"the test server runs no kubelet to reach on node {node}")


def _container(spec: Obj, pod: str, container: str) -> str:
    """``validateContainer``."""
    names = [str(c.get("name", "")) for list_name in ("initContainers", "containers",
                                                      "ephemeralContainers")
             for c in spec.get(list_name) or () if isinstance(c, dict)]
    if container:
        if container not in names:
            raise StatusError.bad_request(f"container {container} is not valid for pod {pod}")
        return container
    containers = spec.get("containers") or []
    if len(containers) == 1:
        return str(containers[0].get("name", ""))
    if not containers:
        raise StatusError.bad_request(f"a container name must be specified for pod {pod}")
    raise StatusError.bad_request(f"a container name must be specified for pod {pod}, choose "
                                  f"one of: [{' '.join(names)}]")
