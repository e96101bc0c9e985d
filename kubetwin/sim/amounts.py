"""Amounts the simulator can hold: every request, limit and capacity within int64.

The simulated scheduler keeps node amounts in numpy ``int64`` arrays, as kube-scheduler's
``framework.Resource`` keeps them in Go ``int64`` fields (``MilliCPU`` from ``MilliValue()``,
memory, ephemeral storage and scalar resources from ``Value()``; upstream
``pkg/scheduler/framework/types.go``). A quantity past that range (``cpu: "9223372036854775807"``
is 9.2e21 milli-CPU) has no exact answer there: Go wraps it silently, numpy refuses it deep in a
run with a message that names no input. kubetwin refuses it when the scenario is read, naming
the file and the field.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from ..errors import InputError
from ..model.node import Node
from ..model.pod import Pod
from ..model.quantity import Quantity

INT64_MAX = (1 << 63) - 1


def _amount(name: str, q: Quantity) -> int:
    """The figure the scheduler keeps for resource ``name``: milli-units for CPU, else units."""
    return q.milli_value() if name == "cpu" else q.value()


def check_amounts(values: Mapping[str, Quantity], path: str, file: str | None = None) -> None:
    """Refuse the first amount of ``values`` (a ResourceList at ``path``) past int64."""
    _raise_first([(values, path)], file)


def _too_large(values: Mapping[str, Quantity], path: str) -> Iterator[InputError]:
    for name, q in values.items():
        if abs(_amount(name, q)) > INT64_MAX:
            unit = "milli-CPU" if name == "cpu" else "units"
            yield InputError(f'Invalid value: "{q}": too large to compute with (more than {INT64_MAX} {unit}, '
                             "the int64 range Kubernetes computes resources in)", path=f"{path}.{name}",
                             fix="give the amount in the range a real node or pod has")


def check_pod_amounts(pod: Pod, file: str | None) -> None:
    """Refuse a pod whose requests, limits or overhead do not fit the scheduler's int64 amounts."""
    spec = pod.spec
    lists: list[tuple[Mapping[str, Quantity], str]] = [(spec.overhead, "spec.overhead")]
    for field, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            lists.append((c.resources.requests, f"spec.{field}[{i}].resources.requests"))
            lists.append((c.resources.limits, f"spec.{field}[{i}].resources.limits"))
    if spec.resources is not None:
        lists.append((spec.resources.requests, "spec.resources.requests"))
        lists.append((spec.resources.limits, "spec.resources.limits"))
    _raise_first(lists, file)


def check_node_amounts(node: Node, file: str | None, prefix: str = "") -> None:
    """Refuse a node whose capacity or allocatable does not fit the scheduler's int64 amounts."""
    at = f"{prefix}." if prefix else ""
    _raise_first([(node.status.capacity, f"{at}status.capacity"),
                  (node.status.allocatable, f"{at}status.allocatable")], file)


def _raise_first(lists: list[tuple[Mapping[str, Quantity], str]], file: str | None) -> None:
    for values, path in lists:
        for err in _too_large(values, path):
            raise err.in_file(file)
