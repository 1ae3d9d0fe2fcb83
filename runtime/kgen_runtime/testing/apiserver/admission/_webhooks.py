"""The admission webhook chain of the test API server and the fake.

kube-apiserver calls the webhooks of every stored ``MutatingWebhookConfiguration`` and
``ValidatingWebhookConfiguration`` whose rules match a write: mutating webhooks first (in
configuration-name order, each seeing the previous one's patch), then schema validation,
then validating webhooks. This module decides which webhooks match a request (rules,
scope, ``namespaceSelector``, ``objectSelector``, ``matchConditions``, all against the object
as the webhooks before have patched it), builds the AdmissionReview, calls the webhook and
turns its answer into the object to store or into the error the real server returns:

- a refusal: the response's status code (400 when none or below 400), ``admission webhook "NAME"
  denied the request: MESSAGE``;
- a failed call under ``failurePolicy: Fail`` (the v1 default): 500 ``Internal error
  occurred: failed calling webhook "NAME": ...``; under ``Ignore`` the webhook is skipped;
- a dry-run request to a webhook whose ``sideEffects`` is ``Some`` or ``Unknown``: 400,
  without calling it;
- warnings become ``Warning`` headers: each webhook's are added to the request's as its
  answer comes, before its refusal or a later failure is raised (mutating/dispatcher.go:
  ``warning.AddWarning`` before the ``Allowed`` check), so they come back with the error.

Webhooks are reached at ``clientConfig.url`` over HTTPS verified with ``caBundle``, or
through ``service_resolver`` for ``clientConfig.service`` (a test server has no Services to
resolve). ``matchConditions`` are CEL expressions; they are evaluated when an evaluator is
given and otherwise refused, so a test never silently calls a webhook the real server would
skip.

``reinvocationPolicy`` (kube-apiserver's reinvocation, one extra round): a mutating webhook
of ``IfNeeded`` that was called before another webhook changed the object is called once more
after the first round, in order, if it still matches; ``Never`` (the default) webhooks and
webhooks first matching in that round are not. The test server has no in-tree mutating
admission plugins, whose changes in the real server's second round also trigger it.
"""

from __future__ import annotations

import base64
import dataclasses
import ssl
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit, urlunsplit

import jsonpatch  # type: ignore[import-untyped,unused-ignore]
import orjson
import urllib3

from kgen_runtime import labels as label_selectors
from kgen_runtime.testing._status import StatusError

__all__ = [
    "ADMISSION_REVIEW_VERSIONS",
    "AdmissionAttributes",
    "AdmissionChain",
    "HTTPSWebhookCaller",
    "MatchConditionEvaluator",
    "ServiceResolver",
    "WebhookCaller",
    "review_version",
    "webhook_endpoint",
]

Obj = dict[str, Any]

ServiceResolver = Callable[[str, str, int], str]
"""``(namespace, name, port) -> "https://host:port"`` for ``clientConfig.service``."""

MatchConditionEvaluator = Callable[[str, Mapping[str, Any]], bool]
"""Evaluates one ``matchConditions`` CEL expression against the request's variables."""


class WebhookCaller(Protocol):
    """Sends an AdmissionReview to a webhook and returns its answer (raising on failure)."""

    def call(self, url: str, ca_bundle: bytes | None, review: Obj, timeout: float) -> Obj:
        ...


@dataclass(frozen=True, slots=True)
class AdmissionAttributes:
    """What the API server knows about one write (``admission.Attributes``)."""

    operation: str  # CREATE, UPDATE, DELETE
    group: str
    version: str
    resource: str
    kind: str
    namespace: str
    name: str
    namespaced: bool
    subresource: str = ""
    dry_run: bool = False
    #: The ``group/version`` of ``kind`` when it is not the resource's (``autoscaling/v1``
    #: for the Scale of a ``scale`` subresource).
    kind_group_version: str = ""
    #: The requesting user: the test server authenticates nobody and acts for the user of
    #: the recorded corpus (../shared/fidelity: a static-token user, whose uid is set).
    username: str = "admin"
    user_uid: str = "admin"
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    #: The operation's options (``meta.k8s.io/v1`` CreateOptions, UpdateOptions or
    #: DeleteOptions, with apiVersion and kind), sent as ``request.options``.
    options: Obj | None = None
    #: The other served versions of the resource and their kinds (a CRD's, in its order),
    #: for webhooks of ``matchPolicy: Equivalent`` whose rules name another version.
    equivalents: tuple[tuple[str, str], ...] = ()
    #: Converts an object of the resource to an apiVersion (for those webhooks).
    convert: Callable[[Obj, str], Obj] | None = None
    #: The version and kind of the request when a webhook is called in an equivalent
    #: version (``requestKind``/``requestResource``); empty: ``version``/``kind``.
    request_version: str = ""
    request_kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def in_version(self, version: str, kind: str) -> AdmissionAttributes:
        """These attributes as a webhook of an equivalent ``version`` sees them."""
        return dataclasses.replace(self, version=version, kind=kind,
                                   request_version=self.request_version or self.version,
                                   request_kind=self.request_kind or self.kind)


@dataclass(slots=True)
class _Webhook:
    configuration: str
    spec: Obj
    mutating: bool

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def key(self) -> tuple[str, str]:
        """Which webhook this is across rounds (names are unique in a configuration)."""
        return self.configuration, self.name


@dataclass(slots=True)
class _Reinvocation:
    """Which ``IfNeeded`` webhooks to call again (kube-apiserver's webhookReinvokeContext):
    those called before a change, collected in ``due``."""

    called_since_change: set[tuple[str, str]] = field(default_factory=set)
    due: set[tuple[str, str]] = field(default_factory=set)

    def record(self, webhook: _Webhook, changed: bool) -> None:
        if changed:
            self.due |= self.called_since_change
            self.called_since_change = set()
        if webhook.spec.get("reinvocationPolicy") == "IfNeeded":
            self.called_since_change.add(webhook.key)


class HTTPSWebhookCaller:
    """Calls webhooks over HTTPS with urllib3, verifying them with their ``caBundle``.

    A failure is worded as kube-apiserver's REST client words it after ``failed to call
    webhook: `` (``Post "URL": dial tcp HOST:PORT: connect: connection refused`` for a
    closed port, the commonest one)."""

    def call(self, url: str, ca_bundle: bytes | None, review: Obj, timeout: float) -> Obj:
        context = ssl.create_default_context(
            cadata=ca_bundle.decode() if ca_bundle else None)
        try:
            with urllib3.PoolManager(ssl_context=context, retries=False) as pool:
                response = pool.request("POST", url, body=orjson.dumps(review),
                                        headers={"Content-Type": "application/json"},
                                        timeout=urllib3.Timeout(total=timeout))
        except urllib3.exceptions.NewConnectionError as err:
            parts = urlsplit(url)
            reason = (f"dial tcp {parts.hostname}:{parts.port or 443}: connect: connection "
                      "refused" if isinstance(err.__cause__ or err.__context__,
                                              ConnectionRefusedError)
                      or "refused" in str(err) else str(err))
            raise RuntimeError(f'Post "{url}": {reason}') from err
        except urllib3.exceptions.HTTPError as err:
            raise RuntimeError(f'Post "{url}": {err}') from err
        if response.status != 200:
            raise RuntimeError(f"the server responded with status {response.status}: "
                               f"{response.data[:200].decode(errors='replace').strip()}")
        answer: Obj = orjson.loads(response.data)
        return answer


class AdmissionChain:
    """Runs the webhooks of the stored configurations on writes (see the module docstring).

    Args:
        configurations: Returns the stored objects of a plural (``mutatingwebhook-
            configurations`` or ``validatingwebhookconfigurations``) at call time.
        namespace_labels: The labels of a namespace, or None if it does not exist.
        caller: How webhooks are reached.
        service_resolver: Where ``clientConfig.service`` webhooks are (none: refused).
        match_conditions: Evaluator of ``matchConditions`` (none: configurations that
            declare them are refused).
    """

    def __init__(
        self,
        configurations: Callable[[str], list[Obj]],
        namespace_labels: Callable[[str], Mapping[str, str] | None],
        *,
        caller: WebhookCaller | None = None,
        service_resolver: ServiceResolver | None = None,
        match_conditions: MatchConditionEvaluator | None = None,
    ) -> None:
        self._configurations = configurations
        self._namespace_labels = namespace_labels
        self._caller = caller or HTTPSWebhookCaller()
        self._service_resolver = service_resolver
        self._match_conditions = match_conditions

    def active(self) -> bool:
        """Whether any webhook configuration exists (a cheap pre-check for writes)."""
        return bool(self._configurations("mutatingwebhookconfigurations")
                    or self._configurations("validatingwebhookconfigurations"))

    def mutate(self, attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
               warnings: list[str]) -> Obj | None:
        """Run the matching mutating webhooks in order, then those due for reinvocation;
        returns the patched object (a DELETE has none: its webhooks see ``oldObject`` only,
        and may only refuse). Their warnings are added to ``warnings`` as they come."""
        reinvocation = _Reinvocation()
        obj = self._mutation_round(attributes, obj, old, warnings, reinvocation, only=None)
        if reinvocation.due:
            obj = self._mutation_round(attributes, obj, old, warnings, reinvocation,
                                       only=frozenset(reinvocation.due))
        return obj

    def _mutation_round(self, attributes: AdmissionAttributes, obj: Obj | None,
                        old: Obj | None, warnings: list[str], reinvocation: _Reinvocation,
                        only: frozenset[tuple[str, str]] | None) -> Obj | None:
        """Call every matching mutating webhook (``only`` these, when given) in order; a
        webhook called in an equivalent version patches the object in that version, which is
        converted back (mutating/dispatcher.go)."""
        for webhook in self._webhooks(mutating=True):
            if only is not None and webhook.key not in only:
                continue
            invocation = self._invocation(webhook, attributes, obj, old)
            if invocation is None:
                continue
            seen, seen_obj, seen_old = invocation
            answer = self._call(webhook, seen, seen_obj, seen_old, warnings)
            changed = False
            if answer is not None:
                patch = answer.get("patch")
                if patch:
                    patched = _apply_patch(webhook, seen_obj, patch, answer.get("patchType"))
                    if patched is not None and seen is not attributes:
                        assert attributes.convert is not None
                        patched = attributes.convert(patched, attributes.api_version)
                    changed, obj = patched != obj, patched
            reinvocation.record(webhook, changed)
        return obj

    def validate(self, attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
                 warnings: list[str]) -> None:
        """Run the matching validating webhooks, adding their warnings to ``warnings``."""
        for webhook in self._webhooks(mutating=False):
            invocation = self._invocation(webhook, attributes, obj, old)
            if invocation is not None:
                self._call(webhook, *invocation, warnings)

    # -- matching -----------------------------------------------------------------------------

    def _webhooks(self, *, mutating: bool) -> Iterator[_Webhook]:
        """Every webhook of the stored configurations, configurations in name order."""
        plural = ("mutatingwebhookconfigurations" if mutating
                  else "validatingwebhookconfigurations")
        configurations = sorted(self._configurations(plural),
                                key=lambda c: str(c.get("metadata", {}).get("name", "")))
        for configuration in configurations:
            name = str(configuration.get("metadata", {}).get("name", ""))
            for spec in configuration.get("webhooks") or []:
                yield _Webhook(name, spec, mutating)

    def _invocation(self, webhook: _Webhook, attributes: AdmissionAttributes,
                    obj: Obj | None, old: Obj | None
                    ) -> tuple[AdmissionAttributes, Obj | None, Obj | None] | None:
        """Whether ``webhook`` is called, and with what: the attributes and objects in the
        version it sees (generic/webhook.go ``ShouldCallHook``: its rules against the
        request, then, under ``matchPolicy: Equivalent`` (the v1 default), against the
        resource's other versions, rule by rule; the objects converted to that version)."""
        spec = webhook.spec
        seen = self._matching_version(spec, attributes)
        if seen is None:
            return None
        if not self._namespace_matches(spec.get("namespaceSelector"), attributes, obj):
            return None
        object_selector = spec.get("objectSelector")
        if object_selector and not any(
            _selects(object_selector, _labels(o)) for o in (obj, old)
            if o is not None
        ):
            return None
        if seen is not attributes:
            assert attributes.convert is not None
            obj, old = (None if o is None else attributes.convert(o, seen.api_version)
                        for o in (obj, old))
        conditions = spec.get("matchConditions") or []
        if conditions and not self._conditions_match(webhook, conditions, seen, obj, old):
            return None
        return seen, obj, old

    @staticmethod
    def _matching_version(spec: Obj, attributes: AdmissionAttributes
                          ) -> AdmissionAttributes | None:
        rules = spec.get("rules") or []
        if any(_rule_matches(rule, attributes) for rule in rules):
            return attributes
        if spec.get("matchPolicy", "Equivalent") != "Equivalent" or attributes.convert is None:
            return None
        for rule in rules:
            for version, kind in attributes.equivalents:
                seen = attributes.in_version(version, kind)
                if _rule_matches(rule, seen):
                    return seen
        return None

    def _namespace_matches(self, selector: Obj | None, attributes: AdmissionAttributes,
                           obj: Obj | None) -> bool:
        if not selector:
            return True
        if attributes.resource == "namespaces" and attributes.group == "":
            return _selects(selector, _labels(obj))
        if not attributes.namespaced:
            return True  # cluster-scoped objects are not in a namespace to select
        labels = self._namespace_labels(attributes.namespace)
        return _selects(selector, dict(labels or {}))

    def _conditions_match(self, webhook: _Webhook, conditions: list[Obj],
                          attributes: AdmissionAttributes, obj: Obj | None,
                          old: Obj | None) -> bool:
        if self._match_conditions is None:
            raise StatusError.internal(
                f'failed calling webhook "{webhook.name}": matchConditions need a CEL '
                f"evaluator, which this test server was not given")
        variables = {"object": obj, "oldObject": old,
                     "request": _request(attributes, obj, old, uid="")}
        return all(self._match_conditions(str(c.get("expression", "")), variables)
                   for c in conditions)

    # -- calling ------------------------------------------------------------------------------

    def _call(self, webhook: _Webhook, attributes: AdmissionAttributes, obj: Obj | None,
              old: Obj | None, warnings: list[str]) -> Obj | None:
        """The webhook's AdmissionResponse, or None when a failure is ignored; its warnings
        are added to ``warnings`` first.

        Raises:
            StatusError: the webhook refused, or failed under failurePolicy Fail.
        """
        spec = webhook.spec
        if attributes.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise StatusError.bad_request(
                f'admission webhook "{webhook.name}" has side effects and does not support '
                "dry run")
        timeout = float(spec.get("timeoutSeconds") or 10)
        try:
            api_version = review_version(spec.get("admissionReviewVersions"),
                                         ADMISSION_REVIEW_VERSIONS, "AdmissionReview")
            uid = str(uuid.uuid4())
            url, ca_bundle = webhook_endpoint(spec.get("clientConfig") or {}, timeout,
                                              self._service_resolver)
            review = {"kind": "AdmissionReview", "apiVersion": api_version,
                      "request": _request(attributes, obj, old, uid)}
            try:
                answer = self._caller.call(url, ca_bundle, review, timeout)
            except Exception as err:
                raise RuntimeError(f"failed to call webhook: {err}") from err
            try:
                response = _verified_admission_response(answer, api_version, uid,
                                                         webhook.mutating)
            except ValueError as err:
                raise RuntimeError(f"received invalid webhook response: {err}") from err
        except Exception as err:
            if spec.get("failurePolicy", "Fail") == "Ignore":
                return None
            raise StatusError.internal(f'failed calling webhook "{webhook.name}": {err}') from err
        warnings += response.get("warnings") or []
        if not response.get("allowed"):
            status = response.get("status") or {}
            code = max(int(status.get("code") or 0), 400)  # never a refusal below 400
            message = status.get("message") or ""
            raise StatusError(code, status.get("reason") or _reason(code),
                              f'admission webhook "{webhook.name}" denied the request'
                              + (f": {message}" if message else " without explanation"))
        return response


#: The AdmissionReview versions kube-apiserver sends, by ``admissionReviewVersions`` name
#: (webhook/request/admissionreview.go ``CreateAdmissionObjects``).
ADMISSION_REVIEW_VERSIONS = {"v1": "admission.k8s.io/v1", "v1beta1": "admission.k8s.io/v1beta1"}


def review_version(preferred: list[str] | None, known: Mapping[str, str], kind: str) -> str:
    """The apiVersion of the review to send: the first of the webhook's ``preferred``
    versions the API server knows (``CreateAdmissionObjects``,
    ``createConversionReviewObjects``)."""
    for version in preferred or ():
        if version in known:
            return known[version]
    if kind == "AdmissionReview":
        raise ValueError("webhook does not accept known AdmissionReview versions "
                         "(v1, v1beta1)")
    raise ValueError("no supported conversion review versions")


def _verified_admission_response(answer: Obj, api_version: str, uid: str,
                                 mutating: bool) -> Obj:
    """The response of a webhook's answer, checked as kube-apiserver checks it
    (webhook/request/admissionreview.go ``VerifyAdmissionResponse``): a v1 answer must be a
    v1 AdmissionReview echoing the request's uid, a mutating webhook's patch comes with its
    patchType, a validating webhook returns neither; v1beta1 answers were never checked.

    Raises:
        ValueError: with kube-apiserver's message.
    """
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if api_version != ADMISSION_REVIEW_VERSIONS["v1"]:
        if mutating and response.get("patch"):
            response = {**response, "patchType": "JSONPatch"}
        return {k: v for k, v in response.items()
                if mutating or k not in ("patch", "patchType")}
    if response.get("uid", "") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    got = _gvk_string(str(answer.get("apiVersion", "")), str(answer.get("kind", "")))
    if (answer.get("apiVersion"), answer.get("kind")) != (api_version, "AdmissionReview"):
        raise ValueError(f"expected webhook response of "
                         f"{_gvk_string(api_version, 'AdmissionReview')}, got {got}")
    patch, patch_type = response.get("patch"), response.get("patchType")
    if mutating:
        if patch and patch_type is None:
            raise ValueError("webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None:
            raise ValueError("webhook returned response.patchType but not response.patch")
        if patch_type == "":
            raise ValueError('webhook returned invalid response.patchType of ""')
    elif patch:
        raise ValueError("validating webhook may not return response.patch")
    elif patch_type is not None:
        raise ValueError("validating webhook may not return response.patchType")
    return response


def _gvk_string(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind's String(): ``group/version, Kind=kind``."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}" if group else f"/{version}, Kind={kind}"


def webhook_endpoint(client_config: Obj, timeout: float,
                     service_resolver: ServiceResolver | None) -> tuple[str, bytes | None]:
    """The URL (with ``?timeout=``) and CA bundle of a webhook's ``clientConfig``."""
    ca = client_config.get("caBundle")
    ca_bundle = base64.b64decode(ca) if ca else None
    url = client_config.get("url")
    if not url:
        service = client_config.get("service") or {}
        if service_resolver is None:
            raise RuntimeError("clientConfig.service needs a service resolver in a test "
                               "server; use clientConfig.url")
        base = service_resolver(str(service.get("namespace", "")),
                                str(service.get("name", "")), int(service.get("port") or 443))
        url = base.rstrip("/") + str(service.get("path") or "/")
    parts = urlsplit(str(url))
    query = "&".join(q for q in (parts.query, urlencode({"timeout": f"{timeout:g}s"})) if q)
    return urlunsplit(parts._replace(query=query)), ca_bundle


def _rule_matches(rule: Obj, attributes: AdmissionAttributes) -> bool:
    """admissionregistration/v1 RuleWithOperations against one request."""
    operations = rule.get("operations") or []
    if "*" not in operations and attributes.operation not in operations:
        return False
    if not _listed(rule.get("apiGroups"), attributes.group):
        return False
    if not _listed(rule.get("apiVersions"), attributes.version):
        return False
    scope = rule.get("scope", "*")
    if scope != "*" and scope != ("Namespaced" if attributes.namespaced else "Cluster"):
        return False
    return any(_resource_matches(pattern, attributes.resource, attributes.subresource)
               for pattern in rule.get("resources") or [])


def _listed(values: Iterable[str] | None, value: str) -> bool:
    listed = list(values or [])
    return "*" in listed or value in listed


def _resource_matches(pattern: str, resource: str, subresource: str) -> bool:
    """The apiserver's rule matcher: ``res/sub`` where ``*`` matches any resource or any
    subresource (including none): ``*`` is every resource, ``*/*`` everything,
    ``pods/*`` pods and all their subresources, ``*/status`` every status."""
    wanted_resource, _, wanted_sub = pattern.partition("/")
    return (wanted_resource in ("*", resource)) and (wanted_sub in ("*", subresource))


def _selects(selector: Obj, labels: Mapping[str, str]) -> bool:
    """Whether a wire ``LabelSelector`` selects ``labels`` (empty: everything)."""
    expressions = [(e.get("key", ""), e.get("operator", ""), e.get("values") or ())
                   for e in selector.get("matchExpressions") or ()]
    return label_selectors.selector_from_label_selector(
        selector.get("matchLabels"), expressions).matches(labels)


def _labels(obj: Obj | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _request(attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
             uid: str) -> Obj:
    """An AdmissionRequest as kube-apiserver serialises one (webhook/request/
    admissionreview.go ``CreateV1AdmissionReview``): ``subResource``,
    ``requestSubResource``, ``name`` and ``namespace`` only when set (omitempty: a
    generateName create has no name yet), ``object`` and ``oldObject`` always (``null``
    when there is none), ``userInfo`` without its empty ``extra`` map."""
    kind_group, _, kind_version = (attributes.kind_group_version
                                   or f"{attributes.group}/{attributes.version}").rpartition("/")
    kind = {"group": kind_group, "version": kind_version, "kind": attributes.kind}
    resource = {"group": attributes.group, "version": attributes.version,
                "resource": attributes.resource}
    request: Obj = {"uid": uid, "kind": kind, "resource": resource}
    if attributes.subresource:
        request["subResource"] = attributes.subresource
    if attributes.request_version:
        request_group = kind_group if attributes.kind_group_version else attributes.group
        request |= {
            "requestKind": {"group": request_group, "version": attributes.request_version,
                            "kind": attributes.request_kind},
            "requestResource": {**resource, "version": attributes.request_version}}
    else:
        request |= {"requestKind": kind, "requestResource": resource}
    if attributes.subresource:
        request["requestSubResource"] = attributes.subresource
    if attributes.name:
        request["name"] = attributes.name
    if attributes.namespaced and attributes.namespace:
        request["namespace"] = attributes.namespace
    user: Obj = {"username": attributes.username}
    if attributes.user_uid:
        user["uid"] = attributes.user_uid
    if attributes.groups:
        user["groups"] = list(attributes.groups)
    request |= {"operation": attributes.operation, "userInfo": user, "object": obj,
                "oldObject": old, "dryRun": attributes.dry_run,
                "options": attributes.options}
    return request


def _apply_patch(webhook: _Webhook, obj: Obj | None, patch: str,
                 patch_type: str | None) -> Obj | None:
    """``obj`` patched by a webhook's answer (an empty patch leaves it as it is)."""
    if patch_type != "JSONPatch":
        raise StatusError.internal(
            f'failed calling webhook "{webhook.name}": unsupported patch type {patch_type!r}')
    try:
        operations = orjson.loads(base64.b64decode(patch))
        if not operations:
            return obj
        if obj is None:  # a DELETE
            raise StatusError.internal(
                f'admission webhook "{webhook.name}" attempted to modify the object, which is '
                "not supported for this operation")
        patched: Obj = jsonpatch.apply_patch(obj, operations)
    except (ValueError, jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as err:
        raise StatusError.internal(
            f'failed calling webhook "{webhook.name}": invalid patch: {err}') from err
    return patched


def _reason(code: int) -> str:
    return {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
            422: "Invalid", 429: "TooManyRequests"}.get(code, "InternalError" if code >= 500
                                                         else "BadRequest")
