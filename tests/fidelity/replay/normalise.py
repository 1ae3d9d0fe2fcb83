"""A body's comparable form, by the fidelity README's rules.

Volatile values become tokens of their pairing (:class:`~.volatile.Volatiles`); times the
server sets compare by format only (RFC 3339 seconds vs microseconds), also inside messages
and YAML text, while client-set times (a Lease's ``renewTime``, an Event's ``eventTime``)
stay exact; orderings that are not data are sorted (``managedFields`` by
manager/operation/subresource/apiVersion, ``conditions`` by type, a Status's
``details.causes`` and the ``[a, b]`` list in its message); a Table's date/Age cells become
``<age>``; API groups other users had on the recording server are dropped from discovery and
``/openapi/v3`` documents.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fidelity.replay.volatile import _HASH, Volatiles, classify

__all__ = ["drop_foreign_groups", "normalise", "normalise_text"]

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
#: Times a client sets and the server keeps as sent: compared exactly.
_CLIENT_TIMES = frozenset({"renewTime", "acquireTime", "eventTime"})
_PRECONDITION_RV = re.compile(
    r"(ResourceVersion in (?:the )?(?:precondition|object meta|record):? \(?)(\d+)")


def normalise_text(text: str, volatiles: Volatiles, *, replayed: bool,
                   exact_times: bool = False) -> str:
    """A string with times reduced to their format and paired values to their tokens."""
    if replayed:
        for recorded, replayed_text in volatiles.fixed:
            text = text.replace(replayed_text, recorded)
    if not exact_times:
        text = _TIME.sub(_time_format, text)
    pattern = volatiles.embedded_pattern(replayed=replayed)
    if pattern is not None:
        text = pattern.sub(
            lambda match: volatiles.embedded_token(match.group(1), replayed=replayed), text)
    return _PRECONDITION_RV.sub(
        lambda match: match.group(1) + volatiles.token("rv", match.group(2), replayed=replayed),
        text)


def _time_format(match: re.Match[str]) -> str:
    """``<time>`` for RFC 3339 seconds, ``<time6>`` for microseconds (digits of fraction)."""
    fraction = match.group(1)
    return f"<time{len(fraction) - 1 if fraction else ''}>"


def normalise(body: Any, volatiles: Volatiles, *, replayed: bool) -> Any:
    """The comparable form of a JSON body (or a watch's event list)."""
    return _Normaliser(volatiles, replayed).value(body, (), None, False)


class _Normaliser:
    def __init__(self, volatiles: Volatiles, replayed: bool) -> None:
        self.volatiles = volatiles
        self.replayed = replayed

    def value(self, value: Any, path: tuple[Any, ...], owner: dict[str, Any] | None,
              list_like: bool) -> Any:
        if isinstance(value, dict):
            return self.mapping(value, path, owner, list_like)
        if isinstance(value, list):
            return [self.value(item, (*path, index), owner,
                               list_like and path[-1:] != ("items",))
                    for index, item in enumerate(value)]
        kind = classify(path, value, owner, list_like)
        if kind == "list-rv":
            return "<list-rv>" if isinstance(value, str) and value.isdigit() else value
        if kind is not None:
            return self.volatiles.token(kind, value, replayed=self.replayed)
        if isinstance(value, str):
            if path[-1:] == ("serverRelativeURL",):
                value = _HASH.sub(lambda match: "?hash=" + self.volatiles.token(
                    "hash", match.group(1), replayed=self.replayed), value)
            return normalise_text(value, self.volatiles, replayed=self.replayed,
                                  exact_times=bool(path) and path[-1] in _CLIENT_TIMES)
        return value

    def mapping(self, value: dict[str, Any], path: tuple[Any, ...],
                owner: dict[str, Any] | None, list_like: bool) -> dict[str, Any]:
        if value.get("type") == "BOOKMARK" and "object" in value:
            list_like = True
        if "metadata" in value:
            owner = value
        result = {key: self.value(item, (*path, key), owner, list_like)
                  for key, item in value.items()}
        metadata = result.get("metadata")
        if isinstance(metadata, dict):
            raw = value["metadata"]
            if raw.get("generateName") and isinstance(raw.get("name"), str):
                metadata["name"] = self.volatiles.token("name", raw["name"],
                                                        replayed=self.replayed)
            if isinstance(metadata.get("managedFields"), list):
                metadata["managedFields"] = sorted(metadata["managedFields"], key=_entry_key)
        if isinstance(result.get("conditions"), list):
            result["conditions"] = sorted(result["conditions"], key=_condition_key)
        if result.get("kind") == "Status":
            _sort_causes(result)
        if result.get("kind") == "Table":
            _ages(result)
        return result


def _entry_key(entry: Any) -> tuple[str, ...]:
    if not isinstance(entry, dict):
        return (json.dumps(entry, sort_keys=True),)
    return tuple(str(entry.get(name) or "") for name in
                 ("manager", "operation", "subresource", "apiVersion"))


def _condition_key(condition: Any) -> str:
    return str(condition.get("type")) if isinstance(condition, dict) else json.dumps(condition)


def _sort_causes(status: dict[str, Any]) -> None:
    """``details.causes`` sorted, and the ``[a, b]`` list of the message in the same way
    (the real server's order varies from run to run)."""
    details = status.get("details")
    if not isinstance(details, dict):
        return
    causes = details.get("causes")
    if not isinstance(causes, list) or len(causes) < 2:
        return
    details["causes"] = sorted(causes, key=lambda cause: json.dumps(cause, sort_keys=True))
    message = status.get("message")
    if not isinstance(message, str) or not message.endswith("]") or "[" not in message:
        return
    start = message.index("[")
    items = [f"{cause.get('field')}: {cause.get('message')}" if cause.get("field")
             else str(cause.get("message")) for cause in causes if isinstance(cause, dict)]
    inner = message[start + 1:-1]
    if sorted(", ".join(items)) == sorted(inner):  # the same items, maybe in another order
        status["message"] = message[:start + 1] + ", ".join(sorted(items)) + "]"


def _ages(table: dict[str, Any]) -> None:
    columns = table.get("columnDefinitions") or []
    dated = [index for index, column in enumerate(columns) if isinstance(column, dict)
             and (column.get("name") == "Age" or column.get("format") == "date")]
    for row in table.get("rows") or []:
        cells = row.get("cells") if isinstance(row, dict) else None
        for index in dated:
            if isinstance(cells, list) and index < len(cells):
                cells[index] = "<age>"


# -- foreign API groups --------------------------------------------------------------------------

def drop_foreign_groups(path: str, body: Any, known: frozenset[str]) -> Any:
    """``body`` of a discovery or ``/openapi/v3`` answer without groups not in ``known``."""
    if not isinstance(body, dict):
        return body
    if path == "/apis" and isinstance(body.get("groups"), list):
        return {**body, "groups": [group for group in body["groups"]
                                   if group.get("name") in known]}
    if path in ("/apis", "/api") and isinstance(body.get("items"), list):
        return {**body, "items": [item for item in body["items"]
                                  if (item.get("metadata") or {}).get("name", "") in known]}
    if path == "/openapi/v3" and isinstance(body.get("paths"), dict):
        return {**body, "paths": {name: value for name, value in body["paths"].items()
                                  if _openapi_group(name) in known}}
    return body


def _openapi_group(name: str) -> str:
    """The group of an ``/openapi/v3`` path (``apis/apps/v1`` -> ``apps``; others ``""``)."""
    parts = name.split("/")
    return parts[1] if parts[0] == "apis" and len(parts) > 2 else ""
