"""Spans of the runtime's NRI events (containerd/nri ``pkg/adaptation``): each event the runtime
relays to its plugins — sandbox and container lifecycle, updates — with the pod, the container,
the plugins subscribed and each plugin's reply (adjustments, updates, evictions as protobuf JSON),
or the error that failed it. Each event is a trace of its own at the clock's now (the scenario's
clock in ``simulate``).

Not an upstream module: kubetwin's tracing of the NRI adaptation.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .attributes import CONTAINER_NAME, NAMESPACE, POD_NAME

if TYPE_CHECKING:
    from ..runtime.nri.adaptation import Adaptation, TraceEntry


def nri_event(entry: "TraceEntry", adaptation: "Adaptation") -> None:
    """One relayed event as a span."""
    from . import ACTIVE

    if ACTIVE is None:
        return
    clock = ACTIVE.decision_clock()
    namespace, _, name = entry.pod.partition("/")
    attrs: dict[str, Any] = {
        "kubetwin.nri.event": entry.event,
        POD_NAME: name, NAMESPACE: namespace or None,
        CONTAINER_NAME: entry.container or None,
        "kubetwin.nri.runtime": f"{adaptation.runtime_name} {adaptation.runtime_version}",
        "kubetwin.nri.plugins": [r.name for r in adaptation.plugins if r.wants(entry.event)] or None,
        "kubetwin.nri.error": entry.error or None,
    }
    span = ACTIVE.open(f"NRI {entry.event}", attrs, clock.start)
    for reply in entry.replies:
        span.add_event("reply", {"kubetwin.nri.plugin": str(reply.get("plugin", "")),
                                 "kubetwin.nri.reply": json.dumps(reply, sort_keys=True, separators=(",", ":"))},
                       timestamp=clock.start)
    span.end(end_time=clock())
