"""OpenTelemetry traces of kubetwin's decisions (``--trace``): scheduling cycles, kubelet
admissions, DRA allocations, eviction passes, runtime (NRI) events.

Zero cost when off: the deciding code checks :data:`ACTIVE` (``None`` unless ``--trace`` was
given) once per decision and builds nothing else; this module imports nothing heavy — the
OpenTelemetry SDK is loaded by :func:`start` only. The span builders live beside the code they
describe (:mod:`.scheduler`, :mod:`.kubelet`, :mod:`.dra`, :mod:`.eviction`, :mod:`.runtime`);
the provider, exporters and clock in :mod:`.provider`.

Not an upstream module: kubetwin's own tracing, named after kube-scheduler's and the kubelet's
OpenTelemetry tracing (``component-base/tracing``) but with a span per extension point and plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .provider import Tracing

#: the running trace session, or None (tracing off: the hot paths test this and do nothing else)
ACTIVE: "Tracing | None" = None


def start(value: str, command: str) -> "Tracing":
    """Begin tracing to ``value`` (a ``--trace`` value; refused with the accepted forms when bad)."""
    global ACTIVE
    from .provider import Tracing
    from .target import parse_target

    target = parse_target(value)
    if ACTIVE is not None:
        ACTIVE.stop(ok=False)
    ACTIVE = Tracing(target, command)
    return ACTIVE


def stop(ok: bool = True) -> None:
    """Export what is left and close the session (a file target is committed only when ``ok``)."""
    global ACTIVE
    tracing, ACTIVE = ACTIVE, None
    if tracing is not None:
        tracing.stop(ok=ok)
