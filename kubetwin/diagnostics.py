"""Warnings: inputs Kubernetes accepts but whose meaning kubetwin cannot model exactly.

An input that Kubernetes would refuse is an :class:`~kubetwin.errors.InputError`. An input that
Kubernetes accepts, but that kubetwin cannot answer exactly for (a field it does not model, an
API-server rule that upstream's own unit tests bend), is a *warning*: one line on stderr, so the
answer is never silently about a different question. With ``kubetwin --strict`` every warning
is an error instead (exit status 1), for scripts that must trust every answer.

Lower layers call :func:`warn`; only the CLI decides (:func:`strict_mode`) whether warnings are
errors, and where they go (:func:`set_sink`, e.g. to collect them for a JSON report).

Not an upstream module: kubetwin's own reporting of what it cannot model.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

from .errors import InputError

_strict: ContextVar[bool] = ContextVar("kubetwin_strict", default=False)
_sink: ContextVar[Callable[[str], None] | None] = ContextVar("kubetwin_warning_sink", default=None)
_seen: ContextVar[set[str] | None] = ContextVar("kubetwin_warnings_seen", default=None)
#: calls of :func:`warn` in this process (repeated texts included): a fast path that remembers an
#: answer checks that computing it warned about nothing (``kubetwin.sim.runtime_memo``)
_calls = [0]


def warn_calls() -> int:
    """How many times :func:`warn` was called so far in this process."""
    return _calls[0]


def _stderr(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


def warn(err: InputError | str) -> None:
    """Report an input kubetwin accepts but cannot model exactly; an error under ``--strict``.

    The same text is reported once per run (a warning about a field of a pod template is not
    repeated for each of its 10,000 replicas)."""
    _calls[0] += 1
    error = err if isinstance(err, InputError) else InputError(err)
    if _strict.get():
        fix = error.fix
        error.fix = (f"{fix}; " if fix else "") + "this is a warning made an error by --strict"
        raise error
    text = str(error)
    seen = _seen.get()
    if seen is None:
        seen = set()
        _seen.set(seen)
    if text in seen:
        return
    seen.add(text)
    (_sink.get() or _stderr)(text)


def not_modelled(path: str, *, file: str | None = None, why: str = "") -> None:
    """A field Kubernetes knows and acts on, that kubetwin reads but does not model."""
    warn(InputError(f"field is not modelled by kubetwin{': ' + why if why else ''}; the answer ignores it",
                    path=path, file=file))


def is_strict() -> bool:
    return _strict.get()


@contextmanager
def strict_mode(on: bool = True) -> Iterator[None]:
    token = _strict.set(on)
    try:
        yield
    finally:
        _strict.reset(token)


def set_strict(on: bool) -> None:
    """Process-wide switch, for the CLI's ``--strict`` (worker processes inherit it by argument)."""
    _strict.set(on)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect warnings instead of printing them (tests, JSON output)."""
    out: list[str] = []
    token = _sink.set(out.append)
    seen_token = _seen.set(set())
    try:
        yield out
    finally:
        _sink.reset(token)
        _seen.reset(seen_token)
