"""A CA and a serving certificate for 127.0.0.1, and a running webhook server; the Foo
example on ``sys.path`` (its webhooks answer the requests recorded from kube-apiserver)."""

from __future__ import annotations

import sys
from pathlib import Path

_EXAMPLE = str(Path(__file__).parents[2] / "examples" / "foo-crd")
if _EXAMPLE not in sys.path:
    sys.path.insert(0, _EXAMPLE)

from tests._webhooks import Certs, certs, module_certs, registry, server  # noqa: E402

__all__ = ["Certs", "certs", "module_certs", "registry", "server"]
