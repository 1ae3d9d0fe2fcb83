"""A live cluster's API definitions as generator inputs (``kgen generate --from-cluster``).

The API server's ``/openapi/v3`` lists one document per served group/version — built-in,
aggregated (kube-aggregator proxies them) and CRD-served alike. Each selected document is
fetched at its ``serverRelativeURL``. Group/versions served by CustomResourceDefinitions are
read from the established CRD objects instead (``GET /apis/apiextensions.k8s.io/v1/
customresourcedefinitions``) when the user may list them: the document the server builds
from a CRD drops its short names, categories, printer columns and scale paths, the CRD does
not — so a CRD's group comes out byte-identical to generating from the CRD's file. Without
that permission the CRD groups are generated from their documents, with a warning.

Everything is returned sorted by path and name, so the output does not depend on discovery
order. Any failure is one :class:`~kgen.diagnostics.GenerateError` naming the server, except
that an unfiltered read skips, with a warning, a document the server cannot give (5xx: an
aggregated API whose backend is down), as kubectl's discovery carries on past one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.load.documents import Document
from kgen_runtime.rest import Config, ConfigError, HTTPTransport, Request, Transport
from kgen_runtime.rest.errors import api_error_from_response

__all__ = ["ClusterInputs", "group_of", "load_cluster_config", "read_cluster"]

_CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_CRDS_GROUP_VERSION = "apis/apiextensions.k8s.io/v1"
_CONNECTION_PREFIX = re.compile(r"^HTTPS?Connection\([^)]*\): ")
_CRD_DOCUMENT_TITLE = "Kubernetes CRD Swagger"
"""The title apiextensions-apiserver gives the documents it builds from CRDs."""
_MAX_RETRIES = 2
"""Retries of one request: enough for a 429 while a CRD's storage initialises, few enough
that an unreachable server fails within a second."""


@dataclass(frozen=True, slots=True)
class ClusterInputs:
    """What a cluster serves, as documents for the loader, and what the user should know."""

    documents: tuple[Document, ...]
    warnings: tuple[Diagnostic, ...]


def load_cluster_config(kubeconfig: str | None, context: str | None) -> Config:
    """The connection to use: ``kubeconfig``/``context`` when given, else client-go's rules
    (in a pod its service account, else ``$KUBECONFIG`` or ``~/.kube/config``)."""
    try:
        if kubeconfig is None and context is None:
            return Config.load(max_retries=_MAX_RETRIES)
        return Config.from_kubeconfig(kubeconfig, context, max_retries=_MAX_RETRIES)
    except ConfigError as error:
        where = Location(kubeconfig or "kubeconfig")
        raise GenerateError([Diagnostic(where, _one_line(error))]) from None


def group_of(path: str) -> str | None:
    """``apis/apps/v1`` → ``apps``, ``api/v1`` → ``""``; ``None`` for paths that are not a
    group/version's document (``apis``, ``apis/apps``, ``version``, ``.well-known/...``)."""
    parts = path.split("/")
    if parts == ["api", "v1"]:
        return ""
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1]
    return None


def read_cluster(
    config: Config, groups: Collection[str] = (), *, transport: Transport | None = None
) -> ClusterInputs:
    """Fetch every served group/version's definitions, or only those of ``groups`` (API group
    names; ``core`` or ``""`` is the core group). A requested group that is not served is an
    error listing the served ones. ``transport`` replaces the HTTP one made from ``config``."""
    wanted = {"" if g == "core" else g for g in groups}
    if transport is not None:
        return _Reader(config.host, transport).read(wanted)
    http = HTTPTransport(config)
    try:
        return _Reader(config.host, http).read(wanted)
    finally:
        http.close()


class _Reader:
    """One read of a cluster's definitions."""

    def __init__(self, host: str, transport: Transport) -> None:
        self._host = host.rstrip("/")
        self._transport = transport

    def read(self, wanted: set[str]) -> ClusterInputs:
        urls = self._discover()
        served = {str(group_of(path)) for path in urls}
        missing = sorted(wanted - served)
        if missing:
            names = ", ".join(repr(g or "core") for g in missing)
            listed = ", ".join(sorted(g or "core" for g in served))
            raise self._error(f"group {names} not served (served: {listed})")
        selected = {p: u for p, u in urls.items() if not wanted or group_of(p) in wanted}
        documents: list[Document] = []
        warnings: list[Diagnostic] = []
        crds = self._crds(wanted) if _CRDS_GROUP_VERSION in urls else []
        for name, crd in crds or ():
            documents.append(Document(Location(f"{self._host}{_CRDS_PATH}/{name}"), crd))
            spec = crd["spec"]
            for version in spec.get("versions") or ():
                selected.pop(f"apis/{spec['group']}/{version.get('name')}", None)
        crd_built = set()
        for path, url in sorted(selected.items()):
            try:
                data = self._get_json(url)
            except _StatusFailure as failure:
                # An aggregated API whose server is down answers 503: skip it unless asked for.
                if failure.code < 500 or wanted:
                    raise
                warnings.append(replace(failure.diagnostics[0], severity="warning"))
                continue
            documents.append(Document(Location(f"{self._host}/openapi/v3/{path}"), data))
            if _crd_built(data):
                crd_built.add(str(group_of(path)))
        if crds is None and crd_built:
            message = (
                f"may not list CustomResourceDefinitions: {', '.join(sorted(crd_built))} "
                "generated from OpenAPI documents, without short names, categories and scale paths"
            )
            warnings.append(Diagnostic(Location(self._host), message, "warning"))
        return ClusterInputs(tuple(documents), tuple(warnings))

    def _discover(self) -> dict[str, str]:
        """``/openapi/v3``: each group/version document's path and URL, by path."""
        try:
            discovery = self._get_json("/openapi/v3")
        except _StatusFailure as failure:
            if failure.code != 404:
                raise
            raise self._error("no /openapi/v3 (served from Kubernetes 1.27 on)") from None
        paths = discovery.get("paths") if isinstance(discovery, Mapping) else None
        if not isinstance(paths, Mapping):
            raise self._error("GET /openapi/v3: no 'paths' mapping in the answer")
        return {
            path: str(entry.get("serverRelativeURL") or f"/openapi/v3/{path}")
            for path, entry in sorted(paths.items())
            if group_of(path) is not None and isinstance(entry, Mapping)
        }

    def _crds(self, wanted: set[str]) -> list[tuple[str, Any]] | None:
        """The served CRDs of the wanted groups, by name; ``None`` when the user may not list
        them."""
        try:
            listed = self._get_json(_CRDS_PATH)
        except _StatusFailure as failure:
            if failure.code != 403:
                raise
            return None
        crds = []
        for item in listed.get("items") or ():
            spec = item.get("spec") if isinstance(item, Mapping) else None
            if not isinstance(spec, Mapping) or (wanted and spec.get("group") not in wanted):
                continue
            if _established(item) and any(
                isinstance(v, Mapping) and v.get("served") for v in spec.get("versions", ())
            ):
                item = dict(
                    item, apiVersion="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
                )
                crds.append((str((item.get("metadata") or {}).get("name", "")), item))
        return sorted(crds, key=lambda c: c[0])

    def _get_json(self, url: str, *, redirected: bool = False) -> Any:
        """GET ``url`` (path and query) as JSON; follows one redirect, as a document's hash
        may change between discovery and the fetch (kube-openapi answers 301)."""
        parts = urlsplit(url)
        request = Request("GET", parts.path, tuple(parse_qsl(parts.query)))
        try:
            response = self._transport.send(request)
            body = response.read()
        except (ConnectionError, TimeoutError) as error:
            raise self._error(f"cannot reach the API server: {_one_line(error)}") from None
        location = response.headers.get("Location")
        if response.status in (301, 302, 307, 308) and location and not redirected:
            return self._get_json(location, redirected=True)
        if response.status != 200:
            problem = api_error_from_response(response.status, body, response.headers)
            message = f"GET {parts.path}: {response.status} {problem.reason}"
            if problem.message:
                message += f": {_one_line(problem.message)}"
            raise _StatusFailure(response.status, Diagnostic(Location(self._host), message))
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise self._error(f"GET {parts.path}: invalid JSON: {error}") from None

    def _error(self, message: str) -> GenerateError:
        return GenerateError([Diagnostic(Location(self._host), message)])


class _StatusFailure(GenerateError):
    """The server answered a GET with an error status (``code``)."""

    def __init__(self, code: int, diagnostic: Diagnostic) -> None:
        super().__init__([diagnostic])
        self.code = code


def _established(crd: Mapping[str, Any]) -> bool:
    """Whether the API server serves the CRD (condition ``Established``; not while its names
    conflict with another's, nor in the moment after its creation)."""
    conditions = (crd.get("status") or {}).get("conditions") or ()
    return any(
        isinstance(c, Mapping) and c.get("type") == "Established" and c.get("status") == "True"
        for c in conditions
    )


def _crd_built(document: Any) -> bool:
    """Whether ``document`` is one apiextensions-apiserver built from CRDs."""
    info = document.get("info") if isinstance(document, Mapping) else None
    return isinstance(info, Mapping) and info.get("title") == _CRD_DOCUMENT_TITLE


def _one_line(value: object) -> str:
    """``value`` on one line, without urllib3's ``HTTPConnection(host=…, port=…): `` prefix
    (the diagnostic names the server already)."""
    return _CONNECTION_PREFIX.sub("", " ".join(str(value).split()))
