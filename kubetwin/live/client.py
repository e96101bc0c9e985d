"""GETs against the API server with client-go's rules, read-only.

* retries (``k8s.io/client-go/rest/with_retry.go``, ``request.go`` ``checkWait``): a 429, or a
  5xx with a ``Retry-After`` of whole seconds, is tried again after that many seconds, at most
  :data:`MAX_RETRIES` times (client-go's default 10); each wait is capped at
  :data:`MAX_WAIT_S` so that a server can never hold a snapshot forever;
* errors are the server's ``Status`` object (``metav1.Status``: reason, code, message), kept
  whole in :class:`StatusError` for the caller to name what was refused;
* LIST in pages (``k8s.io/client-go/tools/pager/pager.go``; kubectl's ``--chunk-size`` 500):
  ``limit`` and ``continue`` until ``metadata.continue`` is empty; a 410 ``Expired`` continue
  token (the server compacted that resourceVersion away) restarts the list from scratch — pages
  of two resourceVersions are never mixed — at most :data:`MAX_RESTARTS` times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

import msgspec

from ..errors import InputError
from .config import Cluster

MAX_RETRIES = 10
MAX_WAIT_S = 60.0
MAX_RESTARTS = 3
PAGE_SIZE = 500
TIMEOUT_S = 60.0


class _Status(msgspec.Struct):
    kind: Any = None
    status: Any = None
    reason: Any = None
    message: Any = None
    code: Any = None


@dataclass
class StatusError(Exception):
    """A response outside 2xx: its HTTP code and the ``Status`` the server sent (if any)."""

    code: int
    reason: str
    message: str
    url: str

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}" if self.message else f"{self.code} {self.reason}"


def _status(code: int, body: bytes, url: str) -> StatusError:
    reason, message = "", ""
    try:
        st = msgspec.json.decode(body, type=_Status)
        if st.kind == "Status":
            reason, message = str(st.reason or ""), str(st.message or "")
    except (msgspec.DecodeError, msgspec.ValidationError):
        message = body[:200].decode("utf-8", "replace").strip()
    if not reason:
        from http import HTTPStatus

        try:
            reason = HTTPStatus(code).phrase.replace(" ", "")
        except ValueError:
            reason = "Unknown"
    return StatusError(code, reason, message, url)


def retry_after(value: str | None) -> int | None:
    """``Retry-After`` as client-go reads it: whole seconds only (an HTTP date is not a wait)."""
    if value is None:
        return None
    try:
        seconds = int(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class Client:
    """Read-only GETs on one cluster (one connection pool, kept alive across pages)."""

    def __init__(self, cluster: Cluster, *, sleep: Callable[[float], None] = time.sleep,
                 page_size: int = PAGE_SIZE, progress: Callable[[str], None] | None = None):
        import urllib3

        self.cluster = cluster
        self.sleep = sleep
        self.page_size = page_size
        self.progress = progress
        kw: dict[str, Any] = {"retries": False, "timeout": urllib3.Timeout(connect=10.0, read=TIMEOUT_S)}
        if cluster.ssl_context is not None:
            kw["ssl_context"] = cluster.ssl_context
            if cluster.ssl_context.verify_mode == 0:
                kw["cert_reqs"] = "CERT_NONE"
                kw["assert_hostname"] = False
            if cluster.tls_server_name:
                kw["server_hostname"] = cluster.tls_server_name
        self._pool: Any = (urllib3.ProxyManager(cluster.proxy, **kw) if cluster.proxy
                           else urllib3.PoolManager(**kw))
        self.requests = 0

    def get(self, path: str, query: dict[str, Any] | None = None) -> bytes:
        """The body of ``GET path?query`` (2xx), retried as client-go retries; StatusError otherwise."""
        import urllib3

        url = self.cluster.server + path + (f"?{urlencode(query)}" if query else "")
        for attempt in range(MAX_RETRIES + 1):
            headers = {"Accept": "application/json", "User-Agent": "kubetwin-snapshot",
                       **self.cluster.headers()}
            try:
                resp = self._pool.request("GET", url, headers=headers, preload_content=True)
            except urllib3.exceptions.HTTPError as exc:
                raise InputError(f"cannot reach the API server at {self.cluster.server}: {_why(exc)}",
                                 file=self.cluster.source, fix="check the server address, network and TLS "
                                 "settings (kubectl get nodes should work)") from None
            self.requests += 1
            body: bytes = resp.data
            if 200 <= resp.status < 300:
                return body
            wait = retry_after(resp.headers.get("Retry-After"))
            if (resp.status == 429 or resp.status >= 500) and wait is not None and attempt < MAX_RETRIES:
                if self.progress:
                    self.progress(f"{resp.status} from the API server: retrying in {wait} s "
                                  f"({attempt + 1}/{MAX_RETRIES})")
                self.sleep(min(float(wait), MAX_WAIT_S))
                continue
            raise _status(resp.status, body, url)
        raise AssertionError("unreachable")  # pragma: no cover

    def list_pages(self, path: str) -> list[bytes]:
        """Every page of ``LIST path``, from one resourceVersion (a 410 ``Expired`` restarts)."""
        pages: list[bytes] = []
        for page in self.iter_pages(path):
            if page is None:
                pages.clear()
            else:
                pages.append(page)
        return pages

    def iter_pages(self, path: str) -> Iterator[bytes | None]:
        """The pages of ``LIST path`` as they arrive, so a reader decodes each and lets it go. A
        410 ``Expired`` between pages lists again from the start: None is yielded first, and what
        the reader kept of this list is to be dropped."""
        for _ in range(MAX_RESTARTS + 1):
            token = ""
            try:
                while True:
                    query: dict[str, Any] = {"limit": self.page_size}
                    if token:
                        query["continue"] = token
                    page = self.get(path, query)
                    token = _continue_token(page)
                    yield page
                    if not token:
                        return
            except StatusError as err:
                if err.code == 410 and token:
                    if self.progress:
                        self.progress(f"{path}: the list expired between pages (410 {err.reason}): "
                                      "listing again from the start")
                    yield None
                    continue
                raise
        raise StatusError(410, "Expired", f"the list expired {MAX_RESTARTS + 1} times in a row",
                          self.cluster.server + path)

    def server_version(self) -> str | None:
        """``GET /version``'s ``major.minor`` (None when the server does not say)."""
        try:
            body = self.get("/version")
        except StatusError:
            return None
        try:
            info = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return None
        if not isinstance(info, dict):
            return None
        major = str(info.get("major", "")).rstrip("+")
        minor = str(info.get("minor", "")).rstrip("+")
        if major.isdigit() and minor.isdigit():
            return f"{int(major)}.{int(minor)}"
        git = info.get("gitVersion")
        if isinstance(git, str):
            parts = git.lstrip("v").split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return f"{int(parts[0])}.{int(parts[1])}"
        return None



class _ListHead(msgspec.Struct):
    metadata: Any = None


def _continue_token(page: bytes) -> str:
    try:
        meta = msgspec.json.decode(page, type=_ListHead).metadata
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""
    token = meta.get("continue") if isinstance(meta, dict) else None
    return token if isinstance(token, str) else ""


def _why(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason or exc).splitlines()[0][:300]
