"""The texts the kubelet writes into an evicted pod's status and a rejected pod's admission
result, word for word (``eviction_manager.go`` / ``helpers.go`` format strings)."""

from __future__ import annotations

from typing import Final, Iterable

from ...model.kubelet_config import Threshold
from ...model.pod import Pod
from ...model.quantity import BINARY_SI, DECIMAL_SI, Quantity
from ...model.summary import PodStats
from .ranking import container_usage
from .signals import RESOURCE_EPHEMERAL_STORAGE, RESOURCE_MEMORY, SIGNAL_TO_RESOURCE, Observations
from .thresholds import threshold_quantity

REASON: Final = "Evicted"
NODE_LOW_FMT: Final = "The node was low on resource: {}. "
THRESHOLD_MET_FMT: Final = "Threshold quantity: {}, available: {}. "
CONTAINER_FMT: Final = "Container {} was using {}, request is {}, has larger consumption of {}. "
NODE_CONDITION_FMT: Final = "The node had condition: {}. "
EMPTY_DIR_FMT: Final = "Usage of EmptyDir volume {} exceeds the limit {}. "
POD_EPHEMERAL_FMT: Final = "Pod ephemeral local storage usage exceeds the total limit of containers {}. "
CONTAINER_EPHEMERAL_FMT: Final = "Container {} exceeded its local ephemeral storage limit {}. "

#: The pod condition added to an evicted pod (``DisruptionTarget``).
DISRUPTION_TARGET: Final = "DisruptionTarget"
TERMINATION_BY_KUBELET: Final = "TerminationByKubelet"


def go_quote(text: str) -> str:
    """Go's ``%q`` for the printable ASCII texts quantities and volume names are made of."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"' + "".join(out) + '"'


def node_condition_message(conditions: Iterable[str]) -> str:
    """Go prints the condition slice as ``[MemoryPressure DiskPressure]``."""
    return NODE_CONDITION_FMT.format("[" + " ".join(conditions) + "]")


def threshold_met_info(resource: str, thresholds: Iterable[Threshold],
                       observations: Observations) -> tuple[Quantity, Quantity] | None:
    """``getThresholdMetInfo``: the first acting threshold of that resource with an observation."""
    for t in thresholds:
        if SIGNAL_TO_RESOURCE.get(t.signal) != resource:
            continue
        obs = observations.get(t.signal)
        if obs is not None:
            return threshold_quantity(t.value, obs.capacity), obs.available
    return None


def eviction_message(resource: str, pod: Pod, stats: PodStats | None, thresholds: Iterable[Threshold],
                     observations: Observations, in_place_resize: bool = True) -> str:
    """``evictionMessage``: the starved resource, the threshold and what was available, then every
    app container using more than it requested. With in-place resize (InPlacePodVerticalScaling)
    a container's memory request is the one allocated to it, read from its status."""
    message = NODE_LOW_FMT.format(resource)
    info = threshold_met_info(resource, thresholds, observations)
    if info is not None:
        message += THRESHOLD_MET_FMT.format(info[0], info[1])
    if stats is None:
        return message
    for cs in stats.containers:
        for c in pod.spec.containers:
            if c.name != cs.name:
                continue
            request = c.resources.requests.get(resource)
            if in_place_resize and resource == RESOURCE_MEMORY:
                status = next((st for st in pod.status.container_statuses if st.name == c.name), None)
                if status is not None:
                    request = status.allocated_resources.get(resource)
            if request is None:
                request = Quantity(0, 0, DECIMAL_SI)
            if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE):
                used = container_usage(cs, resource)
                if used is None:
                    continue
                usage = Quantity(used, 0, BINARY_SI)
                if usage.cmp(request) > 0:
                    message += CONTAINER_FMT.format(c.name, usage, request, resource)
    return message
