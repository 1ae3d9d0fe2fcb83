"""Test certificates made with the openssl command line: a CA and the leaves it issues."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["issue", "make_ca"]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=20)


def make_ca(directory: Path, subject: str = "/CN=test-ca") -> Path:
    """A self-signed CA as ``ca.crt``/``ca.key`` in ``directory``; returns the certificate."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
             "-out", "ca.crt", "-days", "2", "-subj", subject, cwd=directory)  # fmt: skip
    return directory / "ca.crt"


def issue(directory: Path, name: str, subject: str, extensions: str) -> tuple[Path, Path]:
    """``name.crt``/``name.key`` signed by the CA in ``directory``; returns (cert, key)."""
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", subject, cwd=directory)  # fmt: skip
    (directory / f"{name}.ext").write_text(extensions)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-out", f"{name}.crt",
             "-extfile", f"{name}.ext", cwd=directory)  # fmt: skip
    return directory / f"{name}.crt", directory / f"{name}.key"
