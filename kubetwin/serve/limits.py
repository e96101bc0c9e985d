"""What keeps ``kubetwin serve`` safe to run: the bearer token, the request body size limit, the
per-request time limit and the bound on work running at once, and paths confined to
``--data-dir``.

* A token (``--token-file``) is compared in constant time (``hmac.compare_digest``); without one
  the service is open — it binds to 127.0.0.1 unless ``--host`` says otherwise.
* A body larger than ``max_body`` bytes is refused with 413 before it is read whole (by its
  ``Content-Length``, or while it streams in); a body that does not arrive within the time limit
  is 408.
* A request's work runs in a worker thread under a time limit (503 and ``Retry-After`` when it
  is over, the work finishing in the background) and at most ``max_concurrent`` at once (503 when
  all are busy); the service itself never stops answering.
* A path in a request is resolved (symlinks followed) and refused unless it lies inside
  ``--data-dir``; with no data folder, requests name no files at all.

Not an upstream module: kubetwin's own service limits.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from ..errors import InputError

#: default request body limit: a filter call with 5,000 full Node objects fits
DEFAULT_MAX_BODY = 64 << 20


@dataclass(frozen=True)
class ServeLimits:
    max_body: int = DEFAULT_MAX_BODY
    request_timeout: float = 30.0
    max_concurrent: int = 8
    token: str | None = None
    data_dir: Path | None = None
    allow_writes: bool = False


def read_token(path: str) -> str:
    """The bearer token in ``--token-file`` (surrounding whitespace dropped; empty refused)."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the token: {getattr(exc, 'strerror', None) or exc}", file=path) from None
    if not text or any(c.isspace() for c in text):
        raise InputError("the token file must hold one token (no spaces)", file=path)
    return text


def token_matches(expected: str | None, header: str | None) -> bool:
    """``Authorization: Bearer TOKEN`` against the expected token, in constant time."""
    if expected is None:
        return True
    if not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[len("Bearer "):].encode(), expected.encode())


def in_data_dir(data_dir: Path | None, value: Any, path: str) -> Path:
    """A file named in a request, resolved and confined to the data folder."""
    if not isinstance(value, str) or not value:
        raise InputError("expected a file name (a string)", path=path)
    if data_dir is None:
        raise InputError("this service reads no files: start it with --data-dir DIR", path=path)
    root = data_dir.resolve()
    target = (root / value).resolve()
    if target != root and root not in target.parents:
        raise InputError(f"{value!r} is outside the data folder", path=path, fix="name a file inside --data-dir")
    if not target.is_file():
        raise InputError(f"{value!r}: no such file in the data folder", path=path)
    return target


class BodyTooLarge(Exception):
    pass


Receive = Callable[[], Awaitable[dict[str, Any]]]


class BodyLimit:
    """ASGI middleware: 413 for a body over the limit, counted as it streams in."""

    def __init__(self, app: Any, max_body: int):
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_body:
                    await _too_large(send, self.max_body, declared < 0)
                    return
        seen = 0
        started = False

        async def limited() -> dict[str, Any]:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge()
            return msg

        async def tracked(msg: dict[str, Any]) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, limited, tracked)
        except BodyTooLarge:
            if not started:
                await _too_large(send, self.max_body, False)


async def _too_large(send: Any, limit: int, bad_length: bool) -> None:
    import json

    if bad_length:
        status, body = 400, {"error": "invalid Content-Length header"}
    else:
        status, body = 413, {"error": f"request body larger than {limit} bytes",
                             "fix": "send a smaller body, or start kubetwin serve with a larger --max-body"}
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
