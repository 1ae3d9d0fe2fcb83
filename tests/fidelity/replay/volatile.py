"""The bijection between recorded and replayed volatile values, and requests rewritten by it.

As the fidelity README says: walk the recorded and the replayed answer in parallel and pair
each volatile value of the recording with the replay's value at the same JSON path, per
class (uids, object resourceVersions, generated names, ``kube-api-access-*`` volume names,
cluster IPs, node ports, continue tokens, OpenAPI hashes and ETags). The pairing is kept a
bijection over the whole transcript: a recorded value met again must meet the same replayed
value, and one replayed value never stands for two recorded ones, so a no-op update that
gets a new resourceVersion shows up as a difference. Later requests are rewritten with the
pairs (path segments, query values, header ``If-None-Match``, body strings).

A list's (Table's, BOOKMARK's) resourceVersion is the global etcd revision, moved by other
users of the recording server: it is compared by format only and paired weakly (only when
both sides are still unpaired), just so a later ``?resourceVersion=`` taken from it can be
rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["Volatiles", "classify", "walk_pairs"]

_GENERATED_VOLUME = re.compile(r"^kube-api-access-[a-z0-9]{5}$")
_HASH = re.compile(r"\?hash=([0-9A-Fa-f]+)")
#: Classes whose values are also replaced inside longer strings of answers (messages, YAML
#: text); resourceVersions only in request text (short replayed numbers would match words).
EMBEDDED = ("uid", "name", "volume", "ip", "hash")
_REQUEST_EMBEDDED = (*EMBEDDED, "rv")
#: Ends a value inside a longer string: not followed by a name character or ".digit".
_AFTER = r"(?![A-Za-z0-9_-]|\.\d)"
_BEFORE = r"(?<![A-Za-z0-9_.-])"


def _is_list(owner: dict[str, Any]) -> bool:
    kind = str(owner.get("kind") or "")
    return "items" in owner or kind.endswith("List") or kind == "Table"


def classify(path: tuple[Any, ...], value: Any, owner: dict[str, Any] | None,
             list_like: bool) -> str | None:
    """The volatile class of ``value`` at ``path`` (``owner``: the object whose
    ``metadata`` holds it, ``list_like``: inside a list, Table or BOOKMARK), or None."""
    key = path[-1] if path else None
    parent = path[-2] if len(path) > 1 else None
    if isinstance(value, bool):
        return None
    if key == "nodePort" and isinstance(value, int):
        return "port"
    if not isinstance(value, str) or not value:
        return None
    if key == "uid":
        return "uid"
    if key == "resourceVersion" and parent == "metadata":
        return "list-rv" if list_like or (owner is not None and _is_list(owner)) else "rv"
    if key == "resourceVersion" and parent == "preconditions":
        return "rv"
    if key == "continue" and parent == "metadata":
        return "continue"
    if key in ("clusterIP", "clusterIPs") or parent == "clusterIPs":
        return "ip"
    if _GENERATED_VOLUME.match(value):
        return "volume"
    return None


def walk_pairs(recorded: Any, replayed: Any, path: tuple[Any, ...] = (),
               owner: dict[str, Any] | None = None,
               list_like: bool = False) -> Iterator[tuple[str, Any, Any]]:
    """``(class, recorded, replayed)`` for each volatile value met at the same path."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        if recorded.get("type") == "BOOKMARK" and "object" in recorded:
            list_like = True
        if "metadata" in recorded:
            owner = recorded
        metadata = recorded.get("metadata")
        other = replayed.get("metadata")
        if isinstance(metadata, dict) and isinstance(other, dict) and metadata.get(
                "generateName") and isinstance(metadata.get("name"), str):
            yield "name", metadata["name"], other.get("name")
        for key, value in recorded.items():
            if key in replayed:
                yield from walk_pairs(value, replayed[key], (*path, key), owner, list_like)
        return
    if isinstance(recorded, list) and isinstance(replayed, list):
        for index, (left, right) in enumerate(zip(recorded, replayed, strict=False)):
            # items of a list are objects of their own, not the list
            yield from walk_pairs(left, right, (*path, index), owner,
                                  list_like and path[-1:] != ("items",))
        return
    if isinstance(recorded, str) and isinstance(replayed, str) and path[-1:] == (
            "serverRelativeURL",):
        left, right = _HASH.search(recorded), _HASH.search(replayed)
        if left and right:
            yield "hash", left.group(1), right.group(1)
        return
    kind = classify(path, recorded, owner, list_like)
    if kind is not None and type(recorded) is type(replayed):
        yield kind, recorded, replayed


class Volatiles:
    """Recorded value <-> replayed value, per class, kept a bijection across a transcript."""

    def __init__(self) -> None:
        self._forward: dict[tuple[str, Any], Any] = {}
        self._backward: dict[tuple[str, Any], Any] = {}
        self._index: dict[tuple[str, Any], int] = {}
        self._weak: dict[Any, Any] = {}
        self._replayed_of: dict[Any, Any] = {}  # recorded -> replayed, all classes but ports
        self._patterns: dict[tuple[bool, tuple[str, ...]], tuple[int, re.Pattern[str] | None]] = {}
        self.fixed: list[tuple[str, str]] = []  # (recorded, replayed) substrings, e.g. URLs

    def pair(self, kind: str, recorded: Any, replayed: Any) -> None:
        """Pair two values of ``kind`` unless either is already paired (then the
        comparison shows whether they agree)."""
        if kind == "list-rv":
            if recorded not in self._weak and replayed not in self._weak.values():
                self._weak[recorded] = replayed
            return
        if (kind, recorded) in self._forward or (kind, replayed) in self._backward:
            return
        self._forward[(kind, recorded)] = replayed
        self._backward[(kind, replayed)] = recorded
        self._index[(kind, recorded)] = len(self._index)
        if kind != "port":
            self._replayed_of.setdefault(recorded, replayed)

    def token(self, kind: str, value: Any, *, replayed: bool) -> str:
        """The comparable stand-in of a recorded (or replayed) value of ``kind``."""
        recorded = self._backward.get((kind, value), None) if replayed else value
        if recorded is None or (kind, recorded) not in self._index:
            return f"<{kind} {value}>"  # unpaired: equal only to the same literal value
        return f"<{kind}#{self._index[(kind, recorded)]}>"

    # -- values inside longer strings ----------------------------------------------------------

    def embedded_pattern(self, *, replayed: bool,
                         classes: tuple[str, ...] = EMBEDDED) -> re.Pattern[str] | None:
        """A regex matching every paired value of ``classes`` (one side) inside a string."""
        cached = self._patterns.get((replayed, classes))
        if cached is not None and cached[0] == len(self._index):
            return cached[1]
        side = self._backward if replayed else self._forward
        values = sorted({str(value) for (kind, value) in side if kind in classes and value},
                        key=len, reverse=True)
        pattern = (re.compile(_BEFORE + "(" + "|".join(map(re.escape, values)) + ")" + _AFTER)
                   if values else None)
        self._patterns[(replayed, classes)] = (len(self._index), pattern)
        return pattern

    def embedded_token(self, text: str, *, replayed: bool) -> str:
        """The token of a value found inside a string."""
        side = self._backward if replayed else self._forward
        for kind in EMBEDDED:
            if (kind, text) in side:
                return self.token(kind, text, replayed=replayed)
        return text

    # -- rewriting requests --------------------------------------------------------------------

    def replayed_value(self, value: Any) -> Any:
        """The replayed counterpart of a recorded value, or the value itself."""
        if value in self._replayed_of:
            return self._replayed_of[value]
        return self._weak.get(value, value)

    def rewrite_text(self, text: str) -> str:
        """``text`` with the fixed substitutions and every embedded recorded value replaced."""
        text = self._fixed(text)
        pattern = self.embedded_pattern(replayed=False, classes=_REQUEST_EMBEDDED)
        if pattern is None:
            return text
        return pattern.sub(lambda match: str(self.replayed_value(match.group(1))), text)

    def rewrite_body(self, body: Any, key: Any = None) -> Any:
        """A JSON request body with every recorded value replaced by its replayed one."""
        if isinstance(body, dict):
            return {name: self.rewrite_body(value, name) for name, value in body.items()}
        if isinstance(body, list):
            return [self.rewrite_body(value, key) for value in body]
        if isinstance(body, str):
            replaced = self.replayed_value(body)
            return replaced if replaced is not body else self._fixed(body)
        if key == "nodePort" and isinstance(body, int) and not isinstance(body, bool):
            return self._forward.get(("port", body), body)
        return body

    def _fixed(self, text: str) -> str:
        for recorded, replayed in self.fixed:
            text = text.replace(recorded, replayed)
        return text
