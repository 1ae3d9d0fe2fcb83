"""Replay one scenario against a server and compare each answer with the recorded one."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.endpoints._protobuf import decode_body
from tests.fidelity.replay.normalise import drop_foreign_groups, normalise, normalise_text
from tests.fidelity.replay.settle import settle
from tests.fidelity.replay.transcripts import Exchange, builtin_groups, load
from tests.fidelity.replay.volatile import Volatiles, walk_pairs
from tests.fidelity.replay.webhook import RECORDED_ADDRESS
from tests.fidelity.replay.wire import Answer, Endpoint, send, split_warnings

__all__ = ["Outcome", "Webhooks", "replay"]

#: Query parameters whose values may embed a paired value (a generated name in a selector).
_SELECTORS = ("labelSelector", "fieldSelector")
_MAX_DIFFERENCES = 12


@dataclasses.dataclass(frozen=True)
class Webhooks:
    """The in-process webhooks standing in for the recorded ones (see :mod:`.webhook`)."""

    address: str  # 127.0.0.1:<port>
    ca_bundle: str  # our CA, PEM in base64


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How one replayed exchange compares with its recording."""

    exchange: Exchange
    status: int
    differences: tuple[str, ...]

    @property
    def same_status(self) -> bool:
        return bool(self.status == self.exchange.response["status"])

    @property
    def identical(self) -> bool:
        return not self.differences


def replay(scenario: str, endpoint: Endpoint, webhooks: Webhooks | None = None) -> list[Outcome]:
    """Send every request of ``scenario`` in order and compare the answers."""
    exchanges = load(scenario)
    volatiles = Volatiles()
    if webhooks is not None:
        volatiles.fixed.append((RECORDED_ADDRESS, webhooks.address))
        volatiles.fixed.extend((bundle, webhooks.ca_bundle) for bundle in _ca_bundles(exchanges))
    known = builtin_groups() | _created_groups(exchanges)
    outcomes = []
    for exchange in exchanges:
        answer = _send(exchange, endpoint, volatiles)
        settle(endpoint, exchange, answer)
        differences = _compare(exchange, answer, volatiles, known)
        outcomes.append(Outcome(exchange, answer.status, tuple(differences)))
    return outcomes


# -- requests ----------------------------------------------------------------------------------

def _send(exchange: Exchange, endpoint: Endpoint, volatiles: Volatiles) -> Answer:
    request = exchange.request
    path = "/".join(str(volatiles.replayed_value(segment))
                    for segment in request["path"].split("/"))
    query = []
    for name, values in request["query"].items():
        for value in values if isinstance(values, list) else [values]:
            replaced = volatiles.replayed_value(value)
            if name in _SELECTORS:
                replaced = volatiles.rewrite_text(replaced)
            query.append((name, str(replaced)))
    headers = {"User-Agent": request.get("user_agent") or ""}
    if request.get("content_type"):
        headers["Content-Type"] = request["content_type"]
    if request.get("accept"):
        headers["Accept"] = request["accept"]
    if request.get("if_none_match"):
        etag = request["if_none_match"].strip('"')
        headers["If-None-Match"] = f'"{volatiles.replayed_value(etag)}"'
    body = _body(request, volatiles)
    events = len(exchange.watch["events"]) if exchange.watch is not None else None
    return send(endpoint, request, query, path, body, headers, expected_events=events)


def _body(request: dict[str, Any], volatiles: Volatiles) -> bytes | None:
    kind = request.get("body_format")
    if kind == "json":
        return json.dumps(volatiles.rewrite_body(request["body"])).encode()
    if kind == "text":
        return volatiles.rewrite_text(request["body"]).encode()
    if kind == "base64":
        return base64.b64decode(request["body"])
    return None


def _ca_bundles(exchanges: tuple[Exchange, ...]) -> set[str]:
    """Every ``caBundle`` the recorded requests carry (our CA replaces them)."""
    found: set[str] = set()

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "caBundle" and isinstance(item, str):
                    found.add(item)
                else:
                    visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)

    for exchange in exchanges:
        visit(exchange.request.get("body"))
    return found


def _created_groups(exchanges: tuple[Exchange, ...]) -> frozenset[str]:
    """The groups of the CRDs the transcript itself writes (not foreign)."""
    groups = set()
    for exchange in exchanges:
        body = exchange.request.get("body")
        if "customresourcedefinitions" in exchange.request["path"] and isinstance(body, dict):
            group = (body.get("spec") or {}).get("group")
            if group:
                groups.add(group)
    return frozenset(groups)


# -- comparison --------------------------------------------------------------------------------

def _protobuf_object(body: str) -> Any:
    """A protobuf body (base64) as the JSON-shaped object it carries, so that volatile values
    (uids, times, resource versions) pair and normalise as they do in JSON bodies."""
    try:
        return decode_body(base64.b64decode(body))
    except StatusError:
        return body


def _compare(exchange: Exchange, answer: Answer, volatiles: Volatiles,
             known: frozenset[str]) -> list[str]:
    recorded = exchange.response
    path = exchange.request["path"]
    differences = []
    if answer.status != recorded["status"]:
        differences.append(f"status: recorded {recorded['status']}, replayed {answer.status}")
    if _media(answer.content_type) != _media(recorded.get("content_type")):
        differences.append(f"content type: recorded {recorded.get('content_type')}, "
                           f"replayed {answer.content_type}")
    if exchange.watch is not None and answer.events is not None:
        expected: Any = exchange.watch["events"]
        actual: Any = answer.events
        kind: str | None = "json"
    else:
        expected, kind = recorded.get("body"), recorded.get("body_format")
        actual, actual_kind = answer.parsed()
        if kind == actual_kind == "base64" and recorded.get("protobuf"):
            expected, actual = _protobuf_object(expected), _protobuf_object(actual)
            kind = actual_kind = "json"
        if kind == "summary" and actual_kind == "json" and isinstance(actual, dict):
            expected, actual = expected.get("top_keys"), sorted(actual)
        elif kind != actual_kind and not (expected is None and actual is None):
            differences.append(f"body format: recorded {kind}, replayed {actual_kind}")
            return differences
    expected = drop_foreign_groups(path, expected, known)
    actual = drop_foreign_groups(path, actual, known)
    for kind_of, left, right in walk_pairs(expected, actual):
        volatiles.pair(kind_of, left, right)
    generated = _refused_generated_name(exchange, expected, actual)
    if generated is not None:
        volatiles.pair("name", *generated)
    if recorded.get("etag") and answer.etag:
        volatiles.pair("hash", recorded["etag"].strip('"'), answer.etag.strip('"'))
    warnings = [normalise_text(text, volatiles, replayed=False)
                for text in split_warnings(recorded.get("warnings") or [])]
    replayed_warnings = [normalise_text(text, volatiles, replayed=True)
                         for text in answer.warnings]
    if warnings != replayed_warnings:
        differences.append(f"warnings: recorded {warnings}, replayed {replayed_warnings}")
    if kind == "text":
        left = normalise_text(expected, volatiles, replayed=False)
        right = normalise_text(str(actual), volatiles, replayed=True)
        if left != right:
            differences.append(f"body: recorded {left[:200]!r}, replayed {right[:200]!r}")
        return differences
    differences.extend(diff(normalise(expected, volatiles, replayed=False),
                            normalise(actual, volatiles, replayed=True)))
    return differences[:_MAX_DIFFERENCES]


def _refused_generated_name(exchange: Exchange, recorded: Any,
                            replayed: Any) -> tuple[str, str] | None:
    """The generated names a Status refusing a ``generateName`` create carries in
    ``details.name`` (recorded, replayed)."""
    body = exchange.request.get("body")
    metadata = body.get("metadata") if isinstance(body, dict) else None
    if not (isinstance(metadata, dict) and metadata.get("generateName")):
        return None
    names = [((value or {}).get("details") or {}).get("name") if isinstance(value, dict)
             else None for value in (recorded, replayed)]
    if isinstance(names[0], str) and isinstance(names[1], str) and names[0] and names[1]:
        return names[0], names[1]
    return None


def _media(content_type: str | None) -> str:
    return (content_type or "").replace(" ", "").lower()


_MISSING = "<missing>"


def diff(recorded: Any, replayed: Any, path: str = "") -> list[str]:
    """Where two normalised bodies differ: one line per differing path."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        lines = []
        for key in sorted(recorded.keys() | replayed.keys(), key=str):
            lines.extend(diff(recorded.get(key, _MISSING), replayed.get(key, _MISSING),
                              f"{path}.{key}"))
        return lines
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(
            replayed):
        return [line for index, (left, right) in enumerate(zip(recorded, replayed, strict=True))
                for line in diff(left, right, f"{path}[{index}]")]
    if recorded == replayed:
        return []
    return [f"body{path}: recorded {_short(recorded)}, replayed {_short(replayed)}"]


def _short(value: Any) -> str:
    text = value if value is _MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."
