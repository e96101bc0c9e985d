"""Where the cluster is and how to sign in, as kubectl resolves it (kubeconfig, ``$KUBECONFIG``,
contexts, token, exec plugin, in-cluster service account)."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.live.client import Client
from kubetwin.live.config import load, load_in_cluster
from kubetwin.live.read import read_cluster

from .fakeapi import cluster as cluster_api
from .fakeapi import kubeconfig, self_signed

SERVER = "http://127.0.0.1:6443"


@pytest.fixture(autouse=True)
def no_ambient_config(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_a_token_user_signs_in_with_a_bearer_token(tmp_path):
    cluster = load(kubeconfig(tmp_path, SERVER, token="abc"))
    assert cluster.server == SERVER and cluster.headers() == {"Authorization": "Bearer abc"}


@pytest.mark.parametrize("token", ["\U0001f600", "abc\r\nX-Injected: 1"])
def test_a_token_that_cannot_be_an_http_header_is_an_error_not_a_traceback(tmp_path, token):
    cluster = load(kubeconfig(tmp_path, SERVER, token=token))
    with pytest.raises(InputError, match="invalid Authorization header value"):
        cluster.headers()


def test_the_current_context_is_used_by_default(tmp_path):
    assert load(kubeconfig(tmp_path, SERVER)).name == "kind-dev"


def test_another_context_can_be_named(tmp_path):
    assert load(kubeconfig(tmp_path, SERVER), context="other").name == "other"


def test_an_unknown_context_is_an_error_with_the_nearest_name(tmp_path):
    with pytest.raises(InputError, match='context "kind-deb" is not in the kubeconfig.*did you mean "kind-dev"'):
        load(kubeconfig(tmp_path, SERVER), context="kind-deb")


def test_kubeconfig_env_is_read_when_no_file_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kubeconfig(tmp_path, SERVER, token="from-env"))
    assert load().headers() == {"Authorization": "Bearer from-env"}


def test_an_exec_plugin_token_is_used(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
                      "'kind': 'ExecCredential', 'status': {'token': 'exec-t0ken'}}))\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(plugin)], "interactiveMode": "Never"}}
    cluster = load(kubeconfig(tmp_path, SERVER, user=user))
    assert cluster.headers() == {"Authorization": "Bearer exec-t0ken"}


def test_a_missing_kubeconfig_file_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no such kubeconfig file"):
        load(str(tmp_path / "nope"))


def test_a_malformed_kubeconfig_is_an_error_not_a_traceback(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [],
                                "contexts": [], "current-context": "gone"}))
    with pytest.raises(InputError, match="cannot use the kubeconfig"):
        load(str(path))


def test_no_configuration_at_all_is_an_error_naming_both_ways_in():
    with pytest.raises(InputError, match="no cluster to read") as err:
        load()
    assert "--kubeconfig" in str(err.value) and "-f" in str(err.value)


needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificates")


@needs_openssl
def test_in_cluster_uses_the_service_account_token_and_ca(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    token = tmp_path / "token"
    token.write_text("sa-token")
    ca, _ = self_signed(tmp_path, "ca", "kubernetes")
    cluster = load_in_cluster(str(token), ca)
    assert cluster.server == "https://10.96.0.1:443" and cluster.headers() == {"Authorization": "bearer sa-token"}
    assert cluster.ssl_context is not None


@needs_openssl
def test_https_with_the_kubeconfigs_certificate_authority_data(tmp_path):
    cert, key = self_signed(tmp_path, "server", "127.0.0.1")
    api = cluster_api()
    server, url = api.serve(tls=(cert, key))
    cfg = json.loads(Path(kubeconfig(tmp_path, url)).read_text())
    cfg["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(Path(cert).read_bytes()).decode()
    (tmp_path / "kubeconfig").write_text(json.dumps(cfg))
    snap = read_cluster(Client(load(str(tmp_path / "kubeconfig"))), configz=False)
    server.shutdown()
    assert len(snap.nodes) == 3


@needs_openssl
def test_a_client_certificate_signs_in(tmp_path):
    cert, key = self_signed(tmp_path, "server", "127.0.0.1")
    client_cert, client_key = self_signed(tmp_path, "client", "reader")
    api = cluster_api()
    api.token = "not-given"
    server, url = api.serve(tls=(cert, key), client_ca=client_cert)
    user = {"client-certificate": client_cert, "client-key": client_key}
    cfg = json.loads(Path(kubeconfig(tmp_path, url, user=user)).read_text())
    cfg["clusters"][0]["cluster"]["certificate-authority"] = cert
    (tmp_path / "kubeconfig").write_text(json.dumps(cfg))
    snap = read_cluster(Client(load(str(tmp_path / "kubeconfig"))), configz=False)
    server.shutdown()
    assert len(snap.nodes) == 3


def test_an_untrusted_server_certificate_is_an_error_not_a_traceback(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the test certificates")
    cert, key = self_signed(tmp_path, "server", "127.0.0.1")
    server, url = cluster_api().serve(tls=(cert, key))
    with pytest.raises(InputError, match="cannot reach the API server"):
        read_cluster(Client(load(kubeconfig(tmp_path, url))), configz=False)
    server.shutdown()


def test_an_alias_bomb_kubeconfig_is_refused_before_the_client_reads_it(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [*{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}, "
                     f"*{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}, *{chr(96 + i)}]")
    path = tmp_path / "kubeconfig"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError):
        load(str(path))
