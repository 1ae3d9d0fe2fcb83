"""A first guess at the class of a difference, for exchanges not yet in known_gaps.toml.

Only a suggestion for whoever writes the gaps file (``report --suggest``): the file's reason
is what counts. Rules look at the request and at the paths of the first differences.
"""

from __future__ import annotations

import re

from tests.fidelity.replay.replay import Outcome

__all__ = ["suggest"]

_DISCOVERY = re.compile(r"^/apis?(/[^/]+){0,2}$")


def suggest(outcome: Outcome) -> str:
    """``class: why`` for a differing exchange."""
    exchange = outcome.exchange
    request, recorded = exchange.request, exchange.response
    path = request["path"]
    text = "\n".join(outcome.differences)
    if exchange.env_quirk:
        return f"env-quirk: {exchange.env_quirk}"
    if "/watch/" in path:
        return "legacy-watch: the /watch/ path prefix"
    if path == "/version":
        return "version: /version fields"
    if path.startswith("/openapi"):
        return "openapi: /openapi/v3 index, ETag and 304"
    if "apidiscovery" in (request.get("accept") or "") or (_DISCOVERY.match(path) and (
            request["method"] == "GET")):
        return "discovery: discovery documents"
    if "selfsubjectaccessreviews" in path:
        return "ssar: SelfSubjectAccessReview for the admin"
    if recorded.get("body_format") == "text" and "page not found" in str(recorded.get("body")):
        return "not-found-text: 404 page not found as text/plain"
    if recorded["status"] == 410 or "Expired" in text or "too old" in text:
        return "gone-410: 410 Gone for too-old resourceVersions, continue tokens, watches"
    if "deletionTimestamp" in text or path.endswith("/finalize") or (
            request["method"] == "DELETE"):
        return "deletion: deletion lifecycle (propagation, finalizers, Terminating)"
    if "webhookconfigurations" in path or "warnings:" in text:
        return "admission: webhook configuration defaults and admission order"
    if "customresourcedefinitions" in path and request["method"] != "DELETE":
        return "crd-defaults: CRD defaults, and a new CRD is not Established at once"
    if "metadata.generation" in text:
        return "generation: metadata.generation on a kind without it"
    if "PartialObjectMetadata" in (request.get("accept") or ""):
        return "partial-metadata: PartialObjectMetadataList"
    if "precondition" in text.lower():
        return "precondition-messages: precondition failure messages"
    if "generateName" in exchange.step or "generated" in exchange.step:
        return "generate-name: generateName truncation and messages"
    if "enableServiceLinks" in text or "volumeMounts" in text or "/pods" in path:
        return "pod-defaults: Pod admission defaults and ServiceAccount admission"
    if re.search(r"\.status(\.selector)?: recorded \{", text) or "status.selector" in text:
        return "status-defaults: status the server sets (empty blocks, Scale selector)"
    if re.search(r"recorded <missing>, replayed \{\}", text):
        return "empty-maps: empty maps the real server drops"
    if re.search(r"items\[\d+\]\.(kind|apiVersion)", text) or "metadata.continue" in text:
        return "list-serialisation: list metadata and items' kind/apiVersion"
    if "/widgets" in path and recorded["status"] == 422:
        return "cel-messages: CEL validation messages"
    if all("managedFields" in line for line in outcome.differences):
        return "managed-fields: managedFields content"
    if recorded["status"] >= 400 and "message" in text:
        return "error-messages: the text of error messages"
    return "other: " + (outcome.differences[0][:100] if outcome.differences else "")
