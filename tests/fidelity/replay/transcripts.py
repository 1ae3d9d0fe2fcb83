"""The recorded exchanges of ../shared/fidelity/transcripts, one :class:`Exchange` a line."""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from typing import Any

from tests.shared import SHARED

__all__ = ["SCENARIOS", "TRANSCRIPTS", "Exchange", "builtin_groups", "load", "server_info"]

TRANSCRIPTS = SHARED / "fidelity" / "transcripts"
#: The scenarios, in the README's order.
SCENARIOS = ("crd", "builtins", "errors", "kubectl", "webhooks")


@dataclasses.dataclass(frozen=True)
class Exchange:
    """One recorded request and the real server's answer (see the README's record format)."""

    scenario: str
    seq: int
    step: str
    request: dict[str, Any]
    response: dict[str, Any]
    watch: dict[str, Any] | None
    env_quirk: str | None

    @property
    def key(self) -> str:
        """``scenario:seq``, the exchange's name in known_gaps.toml."""
        return f"{self.scenario}:{self.seq}"


@cache
def load(scenario: str) -> tuple[Exchange, ...]:
    """The exchanges of ``transcripts/<scenario>.jsonl`` in request order."""
    exchanges = []
    for line in (TRANSCRIPTS / f"{scenario}.jsonl").read_text().splitlines():
        record = json.loads(line)
        exchanges.append(Exchange(scenario, record["seq"], record["step"], record["request"],
                                  record["response"], record.get("watch"),
                                  record.get("env_quirk")))
    return tuple(sorted(exchanges, key=lambda exchange: exchange.seq))


@cache
def server_info() -> dict[str, Any]:
    """``transcripts/server.json``: the recorded ``/version`` and the built-in groups."""
    info: dict[str, Any] = json.loads((TRANSCRIPTS / "server.json").read_text())
    return info


def builtin_groups() -> frozenset[str]:
    """The API groups kube-apiserver serves itself (the core group ``""`` included)."""
    return frozenset(server_info()["builtin_groups"]) | {""}
