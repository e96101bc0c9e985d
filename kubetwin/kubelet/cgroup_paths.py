"""Cgroup names as the kubelet builds them, and the paths each cgroup driver turns them into.

The kubelet thinks in driver-neutral names — a list of components such as
``("kubepods", "burstable", "pod<uid>")`` (``CgroupName`` in ``pkg/kubelet/cm``) — and only
the cgroup manager renders them: the ``cgroupfs`` driver joins them with ``/``; the ``systemd``
driver escapes ``-`` to ``_`` in every component and expands the dash-joined name into nested
slices (``kubepods.slice/kubepods-burstable.slice/...``), which is why a pod UID shows up with
underscores under systemd. ``cgroupRoot`` is always read in cgroupfs form, whatever the driver.

Container cgroups are named by the container runtime, not the kubelet: cgroupfs puts the
container ID under the pod cgroup, systemd a ``<prefix>-<id>.scope`` unit (containerd's prefix
is ``cri-containerd``, CRI-O's ``crio``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .qos import BEST_EFFORT, BURSTABLE, GUARANTEED

CgroupName = tuple[str, ...]

NODE_ALLOCATABLE_CGROUP = "kubepods"
POD_CGROUP_PREFIX = "pod"
SYSTEMD_SUFFIX = ".slice"
DRIVERS = ("cgroupfs", "systemd")
#: The scope prefix the runtime gives container units under the systemd driver.
RUNTIME_SCOPE_PREFIXES = {"containerd": "cri-containerd", "cri-o": "crio"}


def parse_cgroupfs(name: str) -> CgroupName:
    """``ParseCgroupfsToCgroupName``: ``/a/b`` -> ``("a", "b")``; ``/`` and ``""`` -> the root ``()``."""
    parts = tuple(name.removeprefix("/").split("/"))
    return () if parts == ("",) else parts


def to_cgroupfs(name: CgroupName) -> str:
    """``CgroupName.ToCgroupfs``: ``/`` + the components joined (``path.Join`` drops empty ones)."""
    return "/" + "/".join(p for p in name if p)


def escape_systemd(part: str) -> str:
    """systemd uses ``-`` as the slice hierarchy separator, so the kubelet turns it into ``_``."""
    return part.replace("-", "_")


def expand_slice(slice_name: str) -> str:
    """``ExpandSlice``: ``a-b-c.slice`` -> ``/a.slice/a-b.slice/a-b-c.slice``; ``-.slice`` is the root."""
    if len(slice_name) <= len(SYSTEMD_SUFFIX) or not slice_name.endswith(SYSTEMD_SUFFIX) or "/" in slice_name:
        raise ValueError(f"invalid slice name: {slice_name}")
    stem = slice_name[: -len(SYSTEMD_SUFFIX)]
    if stem == "-":
        return "/"
    path, prefix = "", ""
    for component in stem.split("-"):
        if not component:
            raise ValueError(f"invalid slice name: {slice_name}")
        path += f"/{prefix}{component}{SYSTEMD_SUFFIX}"
        prefix += component + "-"
    return path


def to_systemd(name: CgroupName) -> str:
    """``CgroupName.ToSystemd``: escaped components joined by ``-`` and expanded into nested slices."""
    if not name or name == ("",):
        return "/"
    return expand_slice("-".join(escape_systemd(p) for p in name) + SYSTEMD_SUFFIX)


def render(name: CgroupName, driver: str) -> str:
    return to_systemd(name) if driver == "systemd" else to_cgroupfs(name)


@dataclass(frozen=True, slots=True)
class CgroupLayout:
    """Where the kubelet puts its cgroups: ``cgroupDriver``, ``cgroupRoot`` and ``cgroupsPerQOS``."""

    driver: str = "cgroupfs"
    cgroup_root: str = ""
    cgroups_per_qos: bool = True

    @property
    def root(self) -> CgroupName:
        """The configured root; the kubelet defaults an empty ``cgroupRoot`` to ``/`` when cgroupsPerQOS."""
        return parse_cgroupfs(self.cgroup_root or "/")

    def node_allocatable(self) -> CgroupName | None:
        """``kubepods`` under the root; None when cgroupsPerQOS is off (no QoS hierarchy at all)."""
        return self.root + (NODE_ALLOCATABLE_CGROUP,) if self.cgroups_per_qos else None

    def qos(self, qos_class: str) -> CgroupName | None:
        """The QoS parent of a pod: Guaranteed pods sit directly in ``kubepods``."""
        top = self.node_allocatable()
        if top is None:
            return None
        if qos_class == GUARANTEED:
            return top
        return top + (qos_class.lower(),)

    def pod(self, qos_class: str, uid: str) -> CgroupName | None:
        """``pod<uid>`` under the QoS parent; None without cgroupsPerQOS (the runtime picks the parent)."""
        parent = self.qos(qos_class)
        return None if parent is None else parent + (POD_CGROUP_PREFIX + uid,)

    def path(self, name: CgroupName | None) -> str | None:
        if name is None:
            return None
        try:
            return render(name, self.driver)
        except ValueError as exc:
            raise InputError(str(exc), path="cgroupRoot",
                             fix="a systemd cgroupRoot must give valid slice names (no empty components)") from None

    def container_path(self, pod_name: CgroupName | None, container_id: str = "<container-id>",
                       runtime: str = "containerd") -> str | None:
        """The runtime's container cgroup under the pod cgroup (ID unknown until the container exists)."""
        pod_path = self.path(pod_name)
        if pod_path is None:
            return None
        if self.driver == "systemd":
            return f"{pod_path}/{RUNTIME_SCOPE_PREFIXES.get(runtime, runtime)}-{container_id}.scope"
        return f"{pod_path.rstrip('/')}/{container_id}"


def cgroup_mount(version: int, controller: str = "") -> str:
    """Where the names above live: the unified mount on v2, one mount per controller on v1."""
    return "/sys/fs/cgroup" if version == 2 else f"/sys/fs/cgroup/{controller or '<controller>'}"


__all__ = ["CgroupName", "CgroupLayout", "parse_cgroupfs", "to_cgroupfs", "to_systemd", "expand_slice",
           "escape_systemd", "render", "cgroup_mount", "NODE_ALLOCATABLE_CGROUP", "DRIVERS",
           "GUARANTEED", "BURSTABLE", "BEST_EFFORT"]
