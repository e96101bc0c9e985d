"""Where the API server is and how to sign in, as kubectl resolves it: ``--kubeconfig``, else
``$KUBECONFIG`` (a list of files, merged), else ``~/.kube/config``, else the in-cluster service
account (client-go's ``tools/clientcmd/loader.go`` ``ClientConfigLoadingRules`` and
``rest.InClusterConfig``). The kubeconfig itself — contexts, tokens, token files, client
certificates, exec plugins (``client.authentication.k8s.io`` ExecCredential) — is read by the
``kubernetes`` client's loader (``kubernetes.config``); kubetwin only takes the result: the server
address, the TLS settings and a function giving the ``Authorization`` header (an exec plugin's
token is fetched again when it expires).
"""

from __future__ import annotations

import base64
import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import InputError

#: the service account files and variables every pod gets (``rest.InClusterConfig``)
SERVICE_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


@dataclass(frozen=True)
class Cluster:
    """One API server and the credentials to read it."""

    name: str                                  # the context's name, or "in-cluster"
    server: str                                # https://host:port (no trailing slash)
    headers: Callable[[], dict[str, str]]      # Authorization, fetched per request
    ssl_context: ssl.SSLContext | None         # None for plain http
    tls_server_name: str | None = None
    proxy: str | None = None
    source: str = ""                           # the kubeconfig file(s), for messages


def _kubeconfig_paths(kubeconfig: str | None) -> str | None:
    if kubeconfig:
        return kubeconfig
    env = os.environ.get("KUBECONFIG")
    if env and any(p for p in env.split(os.pathsep)):
        return env
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.is_file() else None


def load(kubeconfig: str | None = None, context: str | None = None, *, in_cluster: bool = False) -> Cluster:
    """The cluster to read: ``in_cluster`` forces the service account; otherwise the kubeconfig
    by kubectl's rules, and the service account when there is none and the process runs in a pod."""
    paths = None if in_cluster else _kubeconfig_paths(kubeconfig)
    if paths is None:
        if in_cluster or os.environ.get("KUBERNETES_SERVICE_HOST"):
            if context:
                raise InputError("--context needs a kubeconfig; none was found", path="--context",
                                 fix="give --kubeconfig PATH")
            return load_in_cluster()
        raise InputError("no cluster to read: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, and not "
                         "running in a pod", path="--kubeconfig",
                         fix="give --kubeconfig PATH, or dumps with -f (kubectl get nodes,pods -A -o json)")
    if kubeconfig and not all(Path(p).is_file() for p in kubeconfig.split(os.pathsep) if p):
        raise InputError("no such kubeconfig file", file=kubeconfig, path="--kubeconfig", fix="check the path")
    return _from_kubeconfig(paths, context)


def _from_kubeconfig(paths: str, context: str | None) -> Cluster:
    from kubernetes import config as kube_config
    from kubernetes.client import Configuration

    for path in (p for p in paths.split(os.pathsep) if p and Path(p).is_file()):
        _check_safe(path)
    cfg = Configuration()
    try:
        contexts, current = kube_config.list_kube_config_contexts(config_file=paths)
        names = [c.get("name") for c in contexts or [] if isinstance(c, dict)]
        if context and context not in names:
            from ..model.strict import suggest

            near = suggest(context, [str(n) for n in names])
            raise InputError(f'context "{context}" is not in the kubeconfig', file=paths, path="--context",
                             fix=f'did you mean "{near}"?' if near else f"one of: {', '.join(map(str, names))}")
        kube_config.load_kube_config(config_file=paths, context=context, client_configuration=cfg,
                                     persist_config=False)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the loader raises ConfigException, YAML and key errors alike
        raise InputError(f"cannot use the kubeconfig: {_reason(exc)}", file=paths,
                         fix="check it with kubectl config view") from None
    name = context or str((current or {}).get("name") or "")
    return _cluster(cfg, name, paths)


def _check_safe(path: str) -> None:
    """The file read once by kubetwin's own loader first (size, nesting and alias-bomb limits,
    duplicate keys): the client's loader has none of those guards."""
    from ..model.loader import parse_documents, read_text

    docs = parse_documents(read_text(path), path)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise InputError("not a kubeconfig: one mapping (kind: Config) expected", file=path,
                         fix="check it with kubectl config view")


def load_in_cluster(token_file: str = SERVICE_TOKEN_FILE, ca_file: str = SERVICE_CA_FILE) -> Cluster:
    from kubernetes.client import Configuration
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = Configuration()
    try:
        InClusterConfigLoader(token_filename=token_file, cert_filename=ca_file).load_and_set(cfg)
    except Exception as exc:  # noqa: BLE001 - ConfigException and file errors alike
        raise InputError(f"cannot use the in-cluster service account: {_reason(exc)}", path="--in-cluster",
                         fix="run in a pod with a service account, or give --kubeconfig PATH") from None
    return _cluster(cfg, "in-cluster", token_file)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _cluster(cfg: Any, name: str, source: str) -> Cluster:
    server = str(cfg.host or "").rstrip("/")
    if not server.startswith(("https://", "http://")):
        raise InputError(f'the server "{server}" is not an http(s) address', file=source,
                         fix="set clusters[].cluster.server to https://HOST:PORT")

    def headers() -> dict[str, str]:
        out: dict[str, str] = {}
        try:
            # the client's own auth settings (the key is "BearerToken" or "authorization" by client
            # release); reading them runs an expired exec plugin or token file again
            settings = cfg.auth_settings()
        except Exception as exc:  # noqa: BLE001 - an exec plugin failing, a token file gone
            raise InputError(f"cannot get credentials: {_reason(exc)}", file=source,
                             fix="check the user's token, tokenFile or exec plugin (kubectl get nodes)") from None
        for setting in settings.values():
            if isinstance(setting, dict) and setting.get("in") == "header" and setting.get("value"):
                value = str(setting["value"])
                key = str(setting.get("key") or "authorization")
                out["Authorization" if key.lower() == "authorization" else key] = (
                    value if " " in value else f"Bearer {value}")
        if not out and (cfg.username or cfg.password):
            basic = base64.b64encode(f"{cfg.username or ''}:{cfg.password or ''}".encode()).decode()
            out["Authorization"] = f"Basic {basic}"
        for key, value in out.items():
            # Go's net/http refuses such a request ("invalid header field value"): a token with
            # a line break or a character outside Latin-1 never reaches the API server
            if not value.isprintable() or not all(ord(ch) < 256 for ch in value):
                raise InputError(f"the credentials give an invalid {key} header value (a line break or a "
                                 "character outside Latin-1)", file=source,
                                 fix="check the user's token, tokenFile or exec plugin output")
        return out

    ctx = None
    if server.startswith("https://"):
        try:
            if cfg.verify_ssl:
                ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
            else:
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            if cfg.cert_file:
                ctx.load_cert_chain(cfg.cert_file, cfg.key_file or None)
        except (OSError, ssl.SSLError) as exc:
            raise InputError(f"cannot use the TLS settings: {_reason(exc)}", file=source,
                             fix="check certificate-authority, client-certificate and client-key") from None
    return Cluster(name=name, server=server, headers=headers, ssl_context=ctx,
                   tls_server_name=getattr(cfg, "tls_server_name", None) or None,
                   proxy=getattr(cfg, "proxy", None) or None, source=source)
