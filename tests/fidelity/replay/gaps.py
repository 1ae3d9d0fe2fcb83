"""The known differences of the test server: ``known_gaps.toml`` beside this module.

One line per differing exchange, ``"scenario:seq" = "class: why"``, sorted; the class names
the kind of difference (so ``python -m tests.fidelity.replay report`` can group them) and,
for those out of scope, says why (``out-of-scope`` - no kubelet or controller-manager on
the recording server, ``env-quirk`` - the recording installation's own behaviour).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

__all__ = ["GAPS_FILE", "gap_class", "known_gaps"]

GAPS_FILE = Path(__file__).with_name("known_gaps.toml")


@cache
def known_gaps() -> dict[str, str]:
    """``scenario:seq`` -> reason, for the test server."""
    return dict(tomllib.loads(GAPS_FILE.read_text())["gaps"])


def gap_class(reason: str) -> str:
    """The class a reason names (its text before the first colon)."""
    return reason.split(":", 1)[0].strip()
