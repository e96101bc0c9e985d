"""What containerd's CRI plugin makes of the kubelet's messages: OCI specs, cgroups, classes.

containerd (v2, ``internal/cri``) builds each container's OCI runtime spec from the CRI request:

* ``WithResources`` (``opts/spec_linux_opts.go``) copies ``LinuxContainerResources`` into the
  spec's ``linux.resources`` — only non-zero values; memory+swap equal to the memory limit (no
  swap) when the kubelet sent no swap limit and the swap controller exists; hugepage limits when
  the hugetlb controller exists; the ``unified`` map verbatim. An ``UpdateContainerResources``
  applies the same function to the container's current spec, so a field the update leaves at
  zero keeps its value (``updateOCIResource``).
* the cgroup path from the sandbox's ``cgroupParent`` (``getCgroupsPath``): ``<parent>/<id>``
  for cgroupfs, ``<slice>:cri-containerd:<id>`` for systemd (the unit
  ``cri-containerd-<id>.scope`` under the pod slice);
* ``process.oomScoreAdj`` from the resources;
* the Block I/O class (``blockIO`` of the class) and the RDT class (``linux.intelRdt.closID``:
  runc joins the resctrl group ``/sys/fs/resctrl/<class>`` goresctrl created), chosen from the
  pod's annotations (:mod:`.blockio`, :mod:`.rdt`).

The sandbox (pause) container gets none of the pod's resources: 2 CPU shares
(``WithDefaultSandboxShares``), ``oom_score_adj`` -998, and the pod resources only as
annotations (``io.kubernetes.cri.sandbox-cpu-*``, ``-memory``) for VM-based runtimes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..errors import InputError
from ..kubelet.cgroup_paths import expand_slice

DEFAULT_SANDBOX_CPU_SHARES = 2
DEFAULT_SANDBOX_OOM_ADJ = -998
SCOPE_PREFIX = "cri-containerd"
CGROUP_MOUNT = "/sys/fs/cgroup"
RESCTRL_MOUNT = "/sys/fs/resctrl"
SANDBOX_ANNOTATIONS = (("cpuPeriod", "io.kubernetes.cri.sandbox-cpu-period"),
                       ("cpuQuota", "io.kubernetes.cri.sandbox-cpu-quota"),
                       ("cpuShares", "io.kubernetes.cri.sandbox-cpu-shares"),
                       ("memoryLimitInBytes", "io.kubernetes.cri.sandbox-memory"))
WEIGHT_CURVES = ("linear", "quadratic")


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The container runtime below the kubelet: containerd with runc (or crun) on cgroup v2.

    ``cpu_weight_curve``: ``quadratic`` for runc >= 1.3.2 / crun >= 1.23, ``linear`` before.
    ``hugetlb_rsvd``: the kernel accounts hugetlb reservations (5.7+), so runc also writes
    ``hugetlb.<size>.rsvd.max``. The two ``ignore_*`` switches are containerd's
    ``ignore_rdt_not_enabled_errors`` / ``ignore_blockio_not_enabled_errors``."""

    runtime: str = "containerd"
    oci_runtime: str = "runc"
    cgroup_driver: str = "cgroupfs"
    cpu_weight_curve: str = "quadratic"
    swap_controller: bool = True
    hugetlb_controller: bool = True
    hugetlb_rsvd: bool = True
    ignore_rdt_not_enabled_errors: bool = False
    ignore_blockio_not_enabled_errors: bool = False

    def __post_init__(self) -> None:
        if self.runtime != "containerd":
            raise InputError(f'container runtime "{self.runtime}" is not modelled', path="runtime",
                             fix="kubetwin models containerd (2.x)")
        if self.oci_runtime not in ("runc", "crun"):
            raise InputError(f'OCI runtime "{self.oci_runtime}" is not modelled', path="ociRuntime",
                             fix="one of: runc, crun")
        if self.cpu_weight_curve not in WEIGHT_CURVES:
            raise InputError(f'unknown cpu.weight curve "{self.cpu_weight_curve}"', path="cpuWeightCurve",
                             fix="one of: linear, quadratic")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {"runtime": d["runtime"], "ociRuntime": d["oci_runtime"], "cgroupDriver": d["cgroup_driver"],
                "cgroupVersion": 2, "cpuWeightCurve": d["cpu_weight_curve"],
                "swapController": d["swap_controller"], "hugetlbController": d["hugetlb_controller"],
                "hugetlbReservations": d["hugetlb_rsvd"]}


def with_resources(lcr: Mapping[str, Any], runtime: RuntimeConfig,
                   base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``WithResources``: CRI ``LinuxContainerResources`` onto OCI ``linux.resources`` (``base``
    for an update: fields the message leaves at zero keep their value)."""
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
                           for k, v in (base or {}).items()}
    cpu = dict(out.get("cpu") or {})
    mem = dict(out.get("memory") or {})
    period, quota = int(lcr.get("cpuPeriod") or 0), int(lcr.get("cpuQuota") or 0)
    shares = int(lcr.get("cpuShares") or 0)
    limit, swap = int(lcr.get("memoryLimitInBytes") or 0), int(lcr.get("memorySwapLimitInBytes") or 0)
    if period:
        cpu["period"] = period
    if quota:
        cpu["quota"] = quota
    if shares:
        cpu["shares"] = shares
    if lcr.get("cpusetCpus"):
        cpu["cpus"] = lcr["cpusetCpus"]
    if lcr.get("cpusetMems"):
        cpu["mems"] = lcr["cpusetMems"]
    if limit:
        mem["limit"] = limit
        if swap == 0 and runtime.swap_controller:
            mem["swap"] = limit  # no swap unless the kubelet asks for it
    if swap and runtime.swap_controller:
        mem["swap"] = swap
    if lcr.get("hugepageLimits"):
        if not runtime.hugetlb_controller:
            raise InputError("huge pages limits are specified but hugetlb cgroup controller is missing. Please set "
                             "tolerate_missing_hugetlb_controller to `true` to ignore this error",
                             path="linux.resources.hugepageLimits")
        pages = list(out.get("hugepageLimits") or [])
        pages.extend({"pageSize": h["pageSize"], "limit": int(h.get("limit") or 0)} for h in lcr["hugepageLimits"])
        out["hugepageLimits"] = pages
    if lcr.get("unified"):
        unified = dict(out.get("unified") or {})
        unified.update(lcr["unified"])
        out["unified"] = unified
    out["cpu"] = cpu
    out["memory"] = mem
    return {k: v for k, v in out.items() if v not in ({}, [])}


def cgroups_path(cgroup_parent: str, cid: str) -> str:
    """``getCgroupsPath``: the spec's ``linux.cgroupsPath``."""
    base = cgroup_parent.rstrip("/").rsplit("/", 1)[-1]
    if base.endswith(".slice"):
        return f"{base}:{SCOPE_PREFIX}:{cid}"
    return f"{cgroup_parent.rstrip('/')}/{cid}"


def cgroup_dir(cgroups_path_value: str) -> str:
    """Where runc puts the cgroup under the unified mount: a systemd ``slice:prefix:name`` is the
    scope ``prefix-name.scope`` in the expanded slice; a cgroupfs path is taken as is."""
    parts = cgroups_path_value.split(":")
    if len(parts) == 3:
        slice_name, prefix, name = parts
        return f"{CGROUP_MOUNT}{expand_slice(slice_name).rstrip('/')}/{prefix}-{name}.scope"
    return f"{CGROUP_MOUNT}{cgroups_path_value}"


def sandbox_spec(sandbox_config: Mapping[str, Any], sid: str) -> dict[str, Any]:
    """The pause container's spec (resource part): 2 shares, oom_score_adj -998, resources as annotations."""
    linux = sandbox_config.get("linux") or {}
    res = linux.get("resources")
    annotations = {}
    if res is not None:
        annotations = {key: str(int(res.get(field) or 0)) for field, key in SANDBOX_ANNOTATIONS}
    spec: dict[str, Any] = {"process": {"oomScoreAdj": DEFAULT_SANDBOX_OOM_ADJ},
                            "linux": {"resources": {"cpu": {"shares": DEFAULT_SANDBOX_CPU_SHARES}}}}
    if linux.get("cgroupParent"):
        spec["linux"]["cgroupsPath"] = cgroups_path(linux["cgroupParent"], sid)
    if linux.get("sysctls"):
        spec["linux"]["sysctl"] = dict(linux["sysctls"])
    if annotations:
        spec["annotations"] = annotations
    return spec


def container_spec(create_request: Mapping[str, Any], cid: str, runtime: RuntimeConfig, *,
                   block_io: Mapping[str, Any] | None = None, rdt_class: str | None = None) -> dict[str, Any]:
    """A container's spec (resource part) from a ``CreateContainerRequest``."""
    config = create_request.get("config") or {}
    lcr = (config.get("linux") or {}).get("resources") or {}
    resources = with_resources(lcr, runtime)
    if block_io:
        resources["blockIO"] = dict(block_io)
    linux: dict[str, Any] = {"resources": resources}
    parent = ((create_request.get("sandboxConfig") or {}).get("linux") or {}).get("cgroupParent")
    if parent:
        linux["cgroupsPath"] = cgroups_path(parent, cid)
    if rdt_class is not None:
        linux["intelRdt"] = {"closID": rdt_class}
    return {"process": {"oomScoreAdj": int(lcr.get("oomScoreAdj") or 0)}, "linux": linux}


def resctrl_group(rdt_class: str | None) -> str | None:
    """The resctrl group runc puts the container in: the class's directory (root class: the mount)."""
    if rdt_class is None:
        return None
    from .rdt import ROOT_CLASS_NAME, unalias_class_name

    name = unalias_class_name(rdt_class)
    return RESCTRL_MOUNT if name == ROOT_CLASS_NAME else f"{RESCTRL_MOUNT}/{name}"


__all__ = ["RuntimeConfig", "with_resources", "cgroups_path", "cgroup_dir", "sandbox_spec", "container_spec",
           "resctrl_group", "DEFAULT_SANDBOX_CPU_SHARES", "DEFAULT_SANDBOX_OOM_ADJ"]
