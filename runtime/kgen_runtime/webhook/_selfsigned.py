"""A self-signed serving certificate for local runs (no cert-manager): the webhook server
can serve with it, and since it signs itself it is also the ``caBundle`` that lets the API
server trust it.

controller-runtime makes one in memory with Go's crypto (``certutil.GenerateSelfSignedCertKey``)
for its metrics server; Python's ``ssl`` cannot make keys, so this runs the ``openssl``
command, which every system with Python's ``ssl`` module normally has.
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["write_self_signed_certificate"]

_DAYS = 365


def _subject_alt_name(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return f"DNS:{host}"
    return f"IP:{host}"


def write_self_signed_certificate(
    directory: Path | str,
    hosts: Sequence[str] = ("localhost", "127.0.0.1"),
    *,
    cert_name: str = "tls.crt",
    key_name: str = "tls.key",
) -> Path:
    """Write a self-signed certificate for ``hosts`` (DNS names or IP addresses, the first
    also its common name) and its key (P-256, valid a year) into ``directory``; returns the
    certificate's path. Files there are replaced.

    Raises:
        RuntimeError: the ``openssl`` command is missing or failed.
    """
    if not hosts:
        raise ValueError("a certificate needs at least one host")
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("the openssl command is needed to make a self-signed certificate")
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    names = ",".join(_subject_alt_name(host) for host in hosts)
    with tempfile.TemporaryDirectory(dir=target) as scratch:
        cert, key = Path(scratch, "cert.pem"), Path(scratch, "key.pem")
        completed = subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", str(key), "-out", str(cert), "-days", str(_DAYS),
             "-subj", f"/CN={hosts[0]}", "-addext", f"subjectAltName={names}",
             "-addext", "basicConstraints=critical,CA:TRUE"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if completed.returncode != 0:
            last = (completed.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"openssl could not make a certificate: {last}")
        # The key first: a certificate watcher that sees the new certificate finds its key.
        key.replace(target / key_name)
        cert.replace(target / cert_name)
    return target / cert_name
