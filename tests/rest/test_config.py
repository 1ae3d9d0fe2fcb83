"""Config loading through the ``kubernetes`` package: kubeconfig files and in-cluster."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.config import incluster_config

from kgen_runtime.rest import Config, ConfigError
from kgen_runtime.rest.config import UNTHROTTLED


def write_kubeconfig(
    path: Path, users: dict[str, dict[str, Any]], current: str, server: str = "https://k8s:6443"
) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(b"CA PEM").decode(),
                },
            }
        ],
        "users": [{"name": name, "user": user} for name, user in users.items()],
        "contexts": [{"name": name, "context": {"cluster": "c", "user": name}} for name in users],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(document))
    return path


def test_token_user(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", {"alice": {"token": "s3cret"}}, "alice")
    config = Config.from_kubeconfig(str(path))
    assert config.host == "https://k8s:6443"
    assert config.auth is not None
    assert config.auth() == {"Authorization": "Bearer s3cret"}
    assert config.ca_file is not None
    assert Path(config.ca_file).read_bytes() == b"CA PEM"
    assert config.verify_tls
    # controller-runtime's GetConfig: no client-side limiter unless asked (APF protects).
    assert config.qps == UNTHROTTLED


def test_client_certificate_user_from_data_and_from_files(tmp_path: Path) -> None:
    cert = tmp_path / "client.crt"
    cert.write_bytes(b"CERT PEM")
    key = tmp_path / "client.key"
    key.write_bytes(b"KEY PEM")
    users = {
        "inline": {
            "client-certificate-data": base64.b64encode(b"CERT PEM").decode(),
            "client-key-data": base64.b64encode(b"KEY PEM").decode(),
        },
        "files": {"client-certificate": str(cert), "client-key": str(key)},
    }
    path = write_kubeconfig(tmp_path / "config", users, "inline")

    inline = Config.from_kubeconfig(str(path))
    assert inline.cert_file is not None and inline.key_file is not None
    assert Path(inline.cert_file).read_bytes() == b"CERT PEM"
    assert Path(inline.key_file).read_bytes() == b"KEY PEM"
    assert inline.auth is not None and inline.auth() == {}

    files = Config.from_kubeconfig(str(path), context="files")
    assert (files.cert_file, files.key_file) == (str(cert), str(key))


def test_basic_auth_user(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config", {"bob": {"username": "bob", "password": "pw"}}, "bob"
    )
    config = Config.from_kubeconfig(str(path))
    assert config.auth is not None
    expected = "Basic " + base64.b64encode(b"bob:pw").decode()
    assert config.auth() == {"Authorization": expected}


def test_insecure_cluster_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "config"
    write_kubeconfig(path, {"u": {"token": "t"}}, "u")
    document = yaml.safe_load(path.read_text())
    document["clusters"][0]["cluster"] = {"server": "https://k8s", "insecure-skip-tls-verify": True}
    path.write_text(yaml.safe_dump(document))
    config = Config.from_kubeconfig(str(path), qps=50.0, burst=100, user_agent="op/1")
    assert not config.verify_tls
    assert (config.qps, config.burst, config.user_agent) == (50.0, 100, "op/1")


def test_kubeconfig_env_var_is_read_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_kubeconfig(tmp_path / "config", {"u": {"token": "from-env"}}, "u")
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for config in (Config.from_kubeconfig(), Config.load()):
        assert config.auth is not None
        assert config.auth() == {"Authorization": "Bearer from-env"}


def test_exec_plugin_token_is_refreshed_when_expired(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    counter.write_text("0")
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) + 1\n"
        "p.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1',"
        " 'kind': 'ExecCredential', 'status': {'token': f'tok-{n}',"
        " 'expirationTimestamp': '2000-01-01T00:00:00Z'}}))\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    path = write_kubeconfig(tmp_path / "config", {"u": user}, "u")
    config = Config.from_kubeconfig(str(path))
    assert config.auth is not None
    first = config.auth()["Authorization"]
    second = config.auth()["Authorization"]
    assert first.startswith("Bearer tok-")
    assert second == f"Bearer tok-{counter.read_text()}"
    assert second != first


@pytest.mark.parametrize("content", [None, "not: [valid", "apiVersion: v1\nkind: Config\n"])
def test_unusable_kubeconfig(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "config"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match="cannot load kubeconfig"):
        Config.from_kubeconfig(str(path))


def test_unknown_context(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", {"u": {"token": "t"}}, "u")
    with pytest.raises(ConfigError, match="cannot load kubeconfig"):
        Config.from_kubeconfig(str(path), context="nope")


@pytest.fixture
def pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake pod environment: service env vars and a mounted service-account token."""
    token = tmp_path / "token"
    token.write_text("pod-token")
    ca = tmp_path / "ca.crt"
    ca.write_text("CA PEM")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return tmp_path


def test_in_cluster(pod: Path) -> None:
    for config in (Config.in_cluster(), Config.load()):
        assert config.host == "https://10.0.0.1:443"
        assert config.ca_file == str(pod / "ca.crt")
        assert config.auth is not None
        assert config.auth() == {"Authorization": "bearer pod-token"}
        assert config.qps == UNTHROTTLED


def test_not_in_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="not running in a cluster"):
        Config.in_cluster()


def test_explicit_construction_defaults() -> None:
    config = Config(host="https://example")
    assert config.auth is None and config.verify_tls
    assert (config.qps, config.burst, config.max_retries) == (5.0, 10, 10)


def test_kubeconfig_path_list_is_merged(tmp_path: Path) -> None:
    first = write_kubeconfig(tmp_path / "a", {"u": {"token": "first"}}, "u", "https://one")
    second = tmp_path / "b"
    second.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c2", "cluster": {"server": "https://two"}}],
                "users": [{"name": "v", "user": {"token": "second"}}],
                "contexts": [{"name": "other", "context": {"cluster": "c2", "user": "v"}}],
            }
        )
    )
    config = Config.from_kubeconfig(f"{first}:{second}", context="other")
    assert config.host == "https://two"
    assert config.auth is not None and config.auth() == {"Authorization": "Bearer second"}
