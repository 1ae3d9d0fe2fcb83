"""A CA and a serving certificate for 127.0.0.1, and a running webhook server."""

from __future__ import annotations

from tests._webhooks import Certs, certs, module_certs, registry, server

__all__ = ["Certs", "certs", "module_certs", "registry", "server"]
