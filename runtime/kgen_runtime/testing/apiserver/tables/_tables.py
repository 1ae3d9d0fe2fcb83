"""Server-side printing: ``Accept: application/json;as=Table;g=meta.k8s.io;v=v1`` answers a get
or a list with a ``meta.k8s.io`` Table, as kubectl asks for it.

The columns are the real server's:

* a custom resource: ``Name`` plus its version's ``additionalPrinterColumns`` (JSONPath cells
  typed integer, number, boolean, string or date), or ``Name`` and ``Age`` (the
  creationTimestamp, a date) when it declares none (apiextensions' tableconvertor); date
  cells are the time since then, as kubectl prints them (``5m``);
* pods, deployments, services, configmaps and namespaces: the columns of kube-apiserver's
  printers, wide ones at priority 1 (:data:`_PRINTERS`);
* CustomResourceDefinitions: ``Name`` and ``Created At`` (a date), apiextensions' default;
* any other built-in kind: ``Name`` and ``Age`` (kube-apiserver prints at least those).

Built-in ``Age`` cells are human durations (``5m``, ``3h2m``) too.
A watch asking for a Table gets each event's object as a one-row Table, with the column
definitions in the first event only.
Each row carries the object as ``includeObject`` says: ``Metadata`` (default) a
``PartialObjectMetadata``, ``Object`` the object, ``None`` null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.openapi._openapi import builtin_document, group_version_path
from kgen_runtime.testing.apiserver.storage._resources import ServedResource
from kgen_runtime.testing.apiserver.tables._jsonpath import find

__all__ = ["human_duration", "include_option", "table_version", "to_table"]

Obj = dict[str, Any]
Cell = Callable[[Obj, datetime], Any]

_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
_CREATED_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    "#metadata")
_INCLUDE = ("Metadata", "Object", "None")


@dataclass(frozen=True, slots=True)
class _Column:
    """A column; its ``description`` is a text or, as printers.go takes most of them from
    ``SwaggerDoc()``, a :class:`_Doc` read from the shipped OpenAPI document."""

    name: str
    type: str
    cell: Cell
    description: str | _Doc = ""
    format: str = ""
    priority: int = 0

    def definition(self) -> Obj:
        description = self.description
        if isinstance(description, _Doc):
            description = description.text()
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": description, "priority": self.priority}


@dataclass(frozen=True, slots=True)
class _Doc:
    """A field's documentation (``<Type>{}.SwaggerDoc()[field]``) in the v1.36 OpenAPI."""

    group: str
    schema: str  # io.k8s.api.apps.v1.DeploymentStatus
    field: str

    def text(self) -> str:
        document = builtin_document(group_version_path(self.group, "v1")) or {}
        schema = document.get("components", {}).get("schemas", {}).get(self.schema, {})
        text = str(schema.get("properties", {}).get(self.field, {}).get("description", ""))
        # openapi-gen appends an enum's values to the description; SwaggerDoc has no such tail
        return text.split("\n\nPossible enum values:", 1)[0]


def table_version(accept: str | None) -> str | None:
    """The Table version (``v1`` or ``v1beta1``) an Accept header asks for, if any."""
    return meta_media(accept, "Table")


def meta_media(accept: str | None, kind: str) -> str | None:
    """The ``meta.k8s.io`` version (``v1``, ``v1beta1``) in which an Accept header asks for
    a response transformed to ``kind`` (``as=Table``, ``as=PartialObjectMetadataList``...)."""
    for media_range in (accept or "").split(","):
        media_type, *parameters = (part.strip() for part in media_range.split(";"))
        params = dict(p.split("=", 1) for p in parameters if "=" in p)
        if (media_type == "application/json" and params.get("as") == kind
                and params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1")):
            return params["v"]
    return None


def include_option(value: str) -> str:
    """The ``includeObject`` parameter, ``Metadata`` when empty; 400 if unknown."""
    include = value or "Metadata"
    if include not in _INCLUDE:
        raise StatusError.bad_request(f'unrecognized includeObject value: "{value}"')
    return include


def to_table(
    info: ServedResource, body: Obj, version: str, include_object: str, now: datetime,
    *, headers: bool = True,
) -> Obj:
    """``body`` (an object or a list of ``info``'s kind) as a Table of ``meta.k8s.io/version``.

    Without ``headers`` (watch events after the first) ``columnDefinitions`` is null.
    """
    include = include_option(include_object)
    columns = _columns(info)
    is_list = body.get("kind") == info.list_kind and isinstance(body.get("items"), list)
    items: list[Obj] = body["items"] if is_list else [body]
    api_version = f"meta.k8s.io/{version}"
    # A Table's ListMeta is typed: an empty continue (a custom resource list has one) is
    # left out (omitempty, apimachinery pkg/apis/meta/v1/types.go).
    metadata = {key: value for key, value in (body.get("metadata") or {}).items()
                if value != ""} if is_list else {
        "resourceVersion": (body.get("metadata") or {}).get("resourceVersion", "")}
    return {
        "kind": "Table", "apiVersion": api_version, "metadata": metadata,
        "columnDefinitions": [column.definition() for column in columns] if headers else None,
        "rows": [{"cells": [column.cell(item, now) for column in columns],
                  "object": _row_object(item, include, api_version)} for item in items],
    }


def _row_object(obj: Obj, include: str, api_version: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}}


def _columns(info: ServedResource) -> list[_Column]:
    name = _Column("Name", "string", lambda obj, now: _meta(obj).get("name", ""), _NAME_DOC,
                   "name")
    if info.custom:
        printer = info.printer_columns or ({"name": "Age", "type": "date",
                                            "description": _CREATED_DOC,
                                            "jsonPath": ".metadata.creationTimestamp"},)
        return [name, *(_custom_column(column) for column in printer)]
    if (info.group, info.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        return [name, _CREATED_AT]  # apiextensions' default table convertor
    printer_columns = _PRINTERS.get((info.group, info.kind), ())
    return [name, *printer_columns] if printer_columns else [name, _AGE]


def _custom_column(column: Mapping[str, Any]) -> _Column:
    path, kind = str(column.get("jsonPath", "")), str(column.get("type", "string"))

    def cell(obj: Obj, now: datetime) -> Any:
        found = find(obj, path)
        return _json_cell(kind, found[0], now) if found else None

    description = column.get("description") or (
        f"Custom resource definition column (in JSONPath format): {path}")
    return _Column(str(column.get("name", "")), kind, cell, str(description),
                   str(column.get("format", "")), int(column.get("priority", 0)))


def _json_cell(kind: str, value: Any, now: datetime) -> Any:
    """A printer-column cell as apiextensions' ``cellForJSONValue`` types it (a date becomes
    the human duration since then, as ``ConvertToHumanReadableDateType``)."""
    if value is None:
        return None
    if kind == "string":
        return _go_print(value)
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return _since(value, now)
    return None


def _go_print(value: Any) -> str:
    """A JSON value as JSONPath's ``PrintResults`` prints it (Go's ``fmt.Fprint``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{_go_print(value[key])}"
                                 for key in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_print(item) for item in value) + "]"
    return "<nil>" if value is None else str(value)


def _since(timestamp: str, now: datetime) -> str:
    """``ConvertToHumanReadableDateType`` of an RFC 3339 string (``<invalid>`` if it is not)."""
    if timestamp in ("", "null"):
        return "<unknown>"
    try:
        then = datetime.fromisoformat(timestamp)
    except ValueError:
        return "<invalid>"
    if then.tzinfo is None:
        return "<invalid>"
    return human_duration((now - then).total_seconds())


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``5h``, ``2d3h``, ``1y``."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes, hours = whole // 60, whole // 3600
    if minutes < 10:
        return f"{minutes}m{whole % 60}s" if whole % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


# -- the built-in printers --------------------------------------------------------------------


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _at(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _age(obj: Obj, now: datetime) -> str:
    return _since(str(_meta(obj).get("creationTimestamp") or ""), now)


def _or_none(value: Any) -> str:
    return str(value) if value else "<none>"


def _pod_status(pod: Obj, now: datetime) -> str:
    if _meta(pod).get("deletionTimestamp"):
        return "Terminating"
    reason = _at(pod, "status", "reason") or _at(pod, "status", "phase") or ""
    for status in _at(pod, "status", "containerStatuses") or ():
        state = status.get("state") or {}
        waiting, terminated = state.get("waiting") or {}, state.get("terminated") or {}
        reason = waiting.get("reason") or terminated.get("reason") or reason
    return str(reason)


def _pod_ready(pod: Obj, now: datetime) -> str:
    statuses = _at(pod, "status", "containerStatuses") or ()
    ready = sum(1 for status in statuses if status.get("ready"))
    return f"{ready}/{len(_at(pod, 'spec', 'containers') or ())}"


def _pod_restarts(pod: Obj, now: datetime) -> str:
    return str(sum(int(s.get("restartCount") or 0)
                   for s in _at(pod, "status", "containerStatuses") or ()))


def _containers(obj: Obj, now: datetime) -> str:
    return ",".join(str(c.get("name", "")) for c in
                    _at(obj, "spec", "template", "spec", "containers") or ())


def _images(obj: Obj, now: datetime) -> str:
    return ",".join(str(c.get("image", "")) for c in
                    _at(obj, "spec", "template", "spec", "containers") or ())


def _label_selector(obj: Obj, now: datetime) -> str:
    selector = _at(obj, "spec", "selector") or {}
    terms = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {})
                                                       .items())]
    return ",".join(terms) or "<none>"


def _ports(service: Obj, now: datetime) -> str:
    ports = _at(service, "spec", "ports") or ()
    return ",".join(
        f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/"
        f"{p.get('protocol') or 'TCP'}" for p in ports) or "<none>"


def _external_ips(service: Obj, now: datetime) -> str:
    ingress = _at(service, "status", "loadBalancer", "ingress") or ()
    addresses = [*(_at(service, "spec", "externalIPs") or ()),
                 *(i.get("ip") or i.get("hostname") or "" for i in ingress)]
    if addresses:
        return ",".join(addresses)
    return "<pending>" if _at(service, "spec", "type") == "LoadBalancer" else "<none>"


def _field(*path: str, default: Any = 0) -> Cell:
    return lambda obj, now: _at(obj, *path) or default


_AGE = _Column("Age", "string", _age, _CREATED_DOC)
_CREATED_AT = _Column("Created At", "date", lambda obj, now: _meta(obj).get("creationTimestamp"),
                      _CREATED_DOC)

_SERVICE_SPEC = "io.k8s.api.core.v1.ServiceSpec"

_PRINTERS: Mapping[tuple[str, str], tuple[_Column, ...]] = {
    ("", "Pod"): (
        _Column("Ready", "string", _pod_ready,
                "The aggregate readiness state of this pod for accepting traffic."),
        _Column("Status", "string", _pod_status,
                "The aggregate status of the containers in this pod."),
        _Column("Restarts", "string", _pod_restarts,
                "The number of times the containers in this pod have been restarted and when "
                "the last container in this pod has restarted."),
        _AGE,
        _Column("IP", "string", lambda p, now: _or_none(_at(p, "status", "podIP")),
                "The IP address assigned to the pod", priority=1),
        _Column("Node", "string", lambda p, now: _or_none(_at(p, "spec", "nodeName")),
                "The name of the node where the pod is scheduled", priority=1),
        _Column("Nominated Node", "string",
                lambda p, now: _or_none(_at(p, "status", "nominatedNodeName")),
                "The name of the node where the pod is nominated to be scheduled",
                priority=1),
        _Column("Readiness Gates", "string",
                lambda p, now: _or_none(len(_at(p, "spec", "readinessGates") or ())),
                "The readiness gates of the pod", priority=1),
    ),
    # pkg/printers/internalversion/printers.go AddHandlers: the counts are string columns
    ("apps", "Deployment"): (
        _Column("Ready", "string", lambda d, now: f"{_at(d, 'status', 'readyReplicas') or 0}/"
                f"{_at(d, 'spec', 'replicas') or 0}",
                "Number of the pod with ready state"),
        _Column("Up-to-date", "string", _field("status", "updatedReplicas"),
                _Doc("apps", "io.k8s.api.apps.v1.DeploymentStatus", "updatedReplicas")),
        _Column("Available", "string", _field("status", "availableReplicas"),
                _Doc("apps", "io.k8s.api.apps.v1.DeploymentStatus", "availableReplicas")),
        _AGE,
        _Column("Containers", "string", _containers,
                "Names of each container in the template.", priority=1),
        _Column("Images", "string", _images, "Images referenced by each container in the "
                "template.", priority=1),
        _Column("Selector", "string", _label_selector,
                _Doc("apps", "io.k8s.api.apps.v1.DeploymentSpec", "selector"), priority=1),
    ),
    ("", "Service"): (
        _Column("Type", "string", _field("spec", "type", default="ClusterIP"),
                _Doc("", _SERVICE_SPEC, "type")),
        _Column("Cluster-IP", "string",
                lambda s, now: _or_none(_at(s, "spec", "clusterIP")),
                _Doc("", _SERVICE_SPEC, "clusterIP")),
        _Column("External-IP", "string", _external_ips, _Doc("", _SERVICE_SPEC, "externalIPs")),
        _Column("Port(s)", "string", _ports, _Doc("", _SERVICE_SPEC, "ports")),
        _AGE,
        _Column("Selector", "string", lambda s, now: ",".join(
            f"{k}={v}" for k, v in sorted((_at(s, "spec", "selector") or {}).items()))
            or "<none>", _Doc("", _SERVICE_SPEC, "selector"), priority=1),
    ),
    ("", "ConfigMap"): (
        _Column("Data", "string", lambda c, now: len(c.get("data") or {})
                + len(c.get("binaryData") or {}), _Doc("", "io.k8s.api.core.v1.ConfigMap", "data")),
        _AGE,
    ),
    ("", "Namespace"): (
        _Column("Status", "string", _field("status", "phase", default=""),
                "The status of the namespace"),
        _AGE,
    ),
}
