"""Spans of a DRA allocation (``k8s.io/dynamic-resource-allocation/structured``'s ``Allocate``):
the node, the claims, the outcome, the devices each claim got, and — when no allocation was found —
why, per claim and request: how many devices were eligible and which checks (selectors, counters,
capacity) the others failed (:mod:`kubetwin.dra.diagnose`, run for the trace only, outside a
scheduling cycle).

Inside a traced scheduling cycle (the DynamicResources plugin's Filter allocating on each node) the
first :data:`MAX_IN_CYCLE` allocations are spans under the cycle's Filter span, without the
diagnosis (the Filter span's events already give each node's rejection); elsewhere (``kubetwin dra
allocate``) each allocation is a trace of its own.

Not an upstream module: kubetwin's tracing of the DRA allocator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from .attributes import NAMESPACE, NODE_NAME

#: DRA allocations a traced scheduling cycle keeps as spans (the DynamicResources Filter allocates on
#: every node it visits; its rejections per node are already the Filter span's events)
MAX_IN_CYCLE = 16

if TYPE_CHECKING:
    from ..dra.allocator import Allocator, Outcome
    from ..dra.api import ResourceClaim

_diagnosing = False


def _claim_key(c: "ResourceClaim") -> str:
    return f"{c.namespace or 'default'}/{c.name}"


def traced_allocate(alloc: "Allocator", node: Any, claims: Sequence["ResourceClaim"],
                    allocate: Callable[[], "Outcome"]) -> "Outcome":
    """``allocate()`` with its span (see the module docstring)."""
    global _diagnosing
    from . import ACTIVE

    if ACTIVE is None or _diagnosing:
        return allocate()
    t = ACTIVE
    cycle = t.cycle
    if cycle is not None and cycle.dra_count >= MAX_IN_CYCLE:
        cycle.dra_count += 1
        return allocate()
    clock = cycle.clock if cycle is not None else t.decision_clock()
    start = clock() if cycle is not None else clock.start
    error = ""
    outcome: Any = None
    try:
        outcome = allocate()
    except Exception as exc:
        error = str(exc)
        raise
    finally:
        end = clock()
        diagnosis = None
        if outcome is not None and not outcome.allocated and cycle is None:
            from ..dra.diagnose import diagnose

            _diagnosing = True
            try:
                diagnosis = diagnose(alloc, node, claims)
            except Exception:  # noqa: BLE001 - the trace's explanation must never change the answer
                diagnosis = None
            finally:
                _diagnosing = False
        attrs: dict[str, Any] = {
            NODE_NAME: node.name,
            "kubetwin.dra.claims": [_claim_key(c) for c in claims],
            "kubetwin.dra.allocated": bool(outcome is not None and outcome.allocated),
            "kubetwin.dra.reason": (outcome.reason if outcome is not None else error) or None,
            "kubetwin.dra.attempts": outcome.attempts if outcome is not None else None,
        }
        emit = _emitter(t, attrs, claims, outcome, diagnosis, start, end)
        if cycle is not None:
            cycle.dra_count += 1
            cycle.dra.append(emit)
        else:
            emit(None)
    return outcome


def _emitter(t: Any, attrs: dict[str, Any], claims: Sequence["ResourceClaim"], outcome: Any, diagnosis: Any,
             start: int, end: int) -> Callable[[Any], None]:
    def emit(parent: Any) -> None:
        span = t.open("DRA allocation", attrs, start, parent)
        results = outcome.results if outcome is not None and outcome.allocated else ()
        by_claim = {d.claim: d for d in diagnosis.claims} if diagnosis is not None else {}
        for k, claim in enumerate(claims):
            ca: dict[str, Any] = {"kubetwin.dra.claim": claim.name, NAMESPACE: claim.namespace or "default"}
            if k < len(results):
                ca["kubetwin.dra.devices"] = [f"{r.driver}/{r.pool}/{r.device}" for r in results[k].results]
                ca["kubetwin.dra.requests"] = [r.request for r in results[k].results]
            d = by_claim.get(claim.name)
            if d is not None:
                ca["kubetwin.dra.allocatable_alone"] = d.allocatable
                ca["kubetwin.dra.problems"] = list(d.problems) or None
                failed = [f"{r.request}: {name} ({n} device{'s' if n != 1 else ''})"
                          for r in d.requests for name, n in r.failed_checks]
                ca["kubetwin.dra.failed_checks"] = failed or None
                ca["kubetwin.dra.eligible_devices"] = [f"{r.request}: {r.eligible}/{r.devices}" for r in d.requests] \
                    or None
            t.span("claim", ca, start, end, span)
        if diagnosis is not None and diagnosis.together:
            span.set_attribute("kubetwin.dra.together", diagnosis.together)
        span.end(end_time=end)

    return emit
