"""A TLS server context that picks up renewed certificates (controller-runtime's
``certwatcher``): cert-manager and similar rotate ``tls.crt``/``tls.key`` in place."""

from __future__ import annotations

import logging
import os
import ssl
import threading
from pathlib import Path

__all__ = ["CertWatcher"]

_log = logging.getLogger("kgen_runtime.webhook")


class CertWatcher:
    """An :class:`ssl.SSLContext` serving ``cert``/``key``, reloaded when either file changes.

    :meth:`refresh` compares the files' modification times and sizes with those last loaded
    and reloads the chain into the same context, so connections accepted afterwards present
    the new certificate. A pair that fails to load (half-written during rotation) keeps the
    previous one and is retried on the next call. Thread-safe.
    """

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert = cert
        self.key = key
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._lock = threading.Lock()
        self._loaded: tuple[tuple[int, int], ...] | None = None
        self.refresh(initial=True)

    def _stamp(self) -> tuple[tuple[int, int], ...]:
        stats = (os.stat(self.cert), os.stat(self.key))
        return tuple((s.st_mtime_ns, s.st_size) for s in stats)

    def refresh(self, *, initial: bool = False) -> bool:
        """Reload the pair if it changed; returns whether it was reloaded.

        Raises:
            OSError, ssl.SSLError: only on the first load (nothing to fall back to).
        """
        with self._lock:
            try:
                stamp = self._stamp()
                if stamp == self._loaded:
                    return False
                self.context.load_cert_chain(self.cert, self.key)
            except (OSError, ssl.SSLError) as err:
                if initial:
                    raise
                _log.warning("keeping the previous serving certificate: %s", err)
                return False
            self._loaded = stamp
        if not initial:
            _log.info("reloaded the serving certificate from %s", self.cert)
        return True
