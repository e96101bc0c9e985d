"""The kubelet's resource-manager metrics in Prometheus text format (``pkg/kubelet/metrics``).

Written by hand rather than with prometheus_client: the kubelet's names are exact (the older
ones carry the ``kubelet_`` subsystem prefix, the pod-level ones do not) and a client library
would rename counters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .admission import NodeAdmission
    from .resize import ResizeManager


def _line(name: str, value: int | float, labels: dict[str, str] | None = None) -> str:
    if labels:
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        return f"{name}{{{inner}}} {value}"
    return f"{name} {value}"


class _Merged:
    def __init__(self, tables: dict[str, dict]):
        self.allocations = tables["allocations"]
        self.allocation_errors = tables["allocation_errors"]
        self.assignments = tables["assignments"]


def render_metrics(node: NodeAdmission) -> str:
    out: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[str]) -> None:
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(samples)

    cpu = node.cpu.static
    c = cpu.counters if cpu is not None else None
    family("kubelet_cpu_manager_pinning_requests_total", "counter",
           "[ALPHA] The number of cpu core allocations which required pinning.",
           [_line("kubelet_cpu_manager_pinning_requests_total", c.pinning_requests if c else 0)])
    family("kubelet_cpu_manager_pinning_errors_total", "counter",
           "[ALPHA] The number of cpu core allocations which required pinning failed.",
           [_line("kubelet_cpu_manager_pinning_errors_total", c.pinning_errors if c else 0)])
    if c is not None:
        family("kubelet_cpu_manager_shared_pool_size_millicores", "gauge",
               "[ALPHA] The size of the shared CPU pool for non-guaranteed QoS pods, in millicores.",
               [_line("kubelet_cpu_manager_shared_pool_size_millicores", c.shared_pool_millicores)])
        family("kubelet_cpu_manager_exclusive_cpu_allocation_count", "gauge",
               "[ALPHA] The total number of CPUs exclusively allocated to containers running on this node",
               [_line("kubelet_cpu_manager_exclusive_cpu_allocation_count", c.exclusive_cpus)])
        family("kubelet_cpu_manager_allocation_per_numa", "gauge", "[ALPHA] Number of CPUs allocated per NUMA node",
               [_line("kubelet_cpu_manager_allocation_per_numa", v, {"numa_node": str(n)})
                for n, v in sorted(c.allocation_per_numa.items())])
    aligned: dict[tuple[str, str], int] = {}
    failures: dict[tuple[str, str], int] = {}
    for src in (c, node.topology):
        if src is None:
            continue
        for table, into in ((src.aligned, aligned), (src.aligned_failures, failures)):
            for key, v in table.items():
                into[key] = into.get(key, 0) + v
    if aligned or failures:
        family("kubelet_container_aligned_compute_resources_count", "counter",
               "[ALPHA] Cumulative number of aligned compute resources allocated to containers by alignment type.",
               [_line("kubelet_container_aligned_compute_resources_count", v, {"scope": sc, "boundary": b})
                for (sc, b), v in sorted(aligned.items())])
        family("kubelet_container_aligned_compute_resources_failure_count", "counter",
               "[ALPHA] Cumulative number of failures to allocate aligned compute resources to containers by "
               "alignment type.",
               [_line("kubelet_container_aligned_compute_resources_failure_count", v, {"scope": sc, "boundary": b})
                for (sc, b), v in sorted(failures.items())])
    mem = node.memory.static
    mc = mem.counters if mem is not None else None
    family("kubelet_memory_manager_pinning_requests_total", "counter",
           "[ALPHA] The number of memory pages allocations which required pinning.",
           [_line("kubelet_memory_manager_pinning_requests_total", mc.pinning_requests if mc else 0)])
    family("kubelet_memory_manager_pinning_errors_total", "counter",
           "[ALPHA] The number of memory pages allocations which required pinning that failed.",
           [_line("kubelet_memory_manager_pinning_errors_total", mc.pinning_errors if mc else 0)])
    tm = node.topology
    family("kubelet_topology_manager_admission_requests_total", "counter",
           "[ALPHA] The number of admission requests where resources have to be aligned.",
           [_line("kubelet_topology_manager_admission_requests_total", tm.admission_requests)])
    family("kubelet_topology_manager_admission_errors_total", "counter",
           "[ALPHA] The number of admission request failures where resources could not be aligned.",
           [_line("kubelet_topology_manager_admission_errors_total", tm.admission_errors)])
    tables: dict[str, dict] = {"allocations": {}, "allocation_errors": {}, "assignments": {}}
    for counters in (c, mc):
        if counters is None:
            continue
        for name in tables:
            for key, v in getattr(counters, name).items():
                tables[name][key] = tables[name].get(key, 0) + v
    if c is not None or mc is not None:
        merged = _Merged(tables)
        family("resource_manager_allocations_total", "counter",
               "[ALPHA] Number of resource allocations performed by the resource managers.",
               [_line("resource_manager_allocations_total", v, {"resource": r, "source": s})
                for (r, s), v in sorted(merged.allocations.items())])
        family("resource_manager_allocation_errors_total", "counter",
               "[ALPHA] Number of failed resource allocations performed by the resource managers.",
               [_line("resource_manager_allocation_errors_total", v, {"resource": r, "source": s})
                for (r, s), v in sorted(merged.allocation_errors.items())])
        family("resource_manager_container_assignments", "counter",
               "[ALPHA] Number of container resource assignments by type.",
               [_line("resource_manager_container_assignments", v, {"resource": r, "assignment_type": t})
                for (r, t), v in sorted(merged.assignments.items())])
    return "\n".join(out) + "\n"


def render_resize_metrics(manager: ResizeManager) -> str:
    """The allocation manager's resize counters (``pkg/kubelet/metrics``), for a node that resized
    pods (:class:`kubetwin.kubelet.resize.ResizeManager`); a family with no sample is left out, as
    the registry leaves out a vector nobody incremented."""
    out: list[str] = []
    for name, help_text, label, values in (
            ("kubelet_pod_infeasible_resizes_total", "[ALPHA] Number of infeasible resizes for pods.",
             "reason_detail", manager.infeasible),
            ("kubelet_pod_deferred_accepted_resizes_total",
             "[ALPHA] Cumulative number of resizes that were accepted after being deferred.", "retry_trigger",
             manager.deferred_accepted)):
        if not values:
            continue
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} counter")
        out.extend(_line(name, n, {label: k}) for k, n in sorted(values.items()))
    return "\n".join(out) + "\n" if out else ""

