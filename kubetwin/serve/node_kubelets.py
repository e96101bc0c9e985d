"""``NodeKubelets`` (``kubetwin.io/v1alpha1``): which machine and KubeletConfiguration each Node of
a served cluster runs, chosen by label selector.

A cluster from ``kubetwin snapshot`` holds Node objects as the API server stores them: capacity,
labels, taints — not the hardware or the kubelet's configuration, which the extender needs to
model each node's kubelet. This file supplies them::

    apiVersion: kubetwin.io/v1alpha1
    kind: NodeKubelets
    spec:
      nodes:
      - selector: {matchLabels: {pool: general}}   # metav1.LabelSelector; {} selects every node
        machine: 1s2n4c2t                          # a spec, or hwloc XML / MachineInfo / sysfs path
        kubeletConfig: {cpuManagerPolicy: static, topologyManagerPolicy: single-numa-node}
        # or kubeletConfigFile: kubelet.yaml (paths relative to this file)
        devicesFromMachine: true   # the machine's PCI GPUs as their vendors' device plugins advertise them
        devices: inventory.yaml    # and/or a device inventory (docs/device-inventory.md)

The first entry whose selector matches a node's labels applies; a node no entry selects (and
that no node group of the scenario gave a machine) has no modelled kubelet. Selectors match as
``metav1.LabelSelectorAsSelector`` does (``kubetwin.scheduler.labels``).

Not an upstream module: kubetwin's own input format (kubetwin reads the machine and the
KubeletConfiguration as ``kubetwin admit`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import InputError
from ..model.strict import ANY, BOOLEAN, OPEN_OBJECT, STRING, check, list_of, obj

_SPEC = obj(apiVersion=STRING, kind=STRING, metadata=OPEN_OBJECT,
            spec=obj(nodes=list_of(obj(selector=ANY, machine=STRING, kubeletConfig=OPEN_OBJECT,
                                       kubeletConfigFile=STRING, devices=STRING, devicesFromMachine=BOOLEAN))))


@dataclass(frozen=True)
class NodeKubelet:
    """One entry: the nodes it selects, their machine and kubelet configuration."""

    matches: Callable[[Mapping[str, str]], bool]
    machine: Any            # kubetwin.machine.model.Machine
    config: Any             # kubetwin.model.kubelet_config.KubeletConfiguration
    where: str              # field path of the entry, for messages
    devices: Any = None     # kubetwin.kubelet.devices.DeviceInventory: what the device plugins advertise
    #: where the kubelet configuration was written (file, field path prefix): a kubelet that cannot
    #: start from it (e.g. static CPU manager without reserved CPUs) names it
    config_source: tuple[str, str] = ("", "")


def load_node_kubelets(path: str, version: str | None) -> list[NodeKubelet]:
    """The entries of a ``NodeKubelets`` file, in order, every field checked."""
    from ..machine import load_machine
    from ..model.apischema import type_spec
    from ..model.kubelet_config import KubeletConfiguration
    from ..model.loader import load_one
    from ..model.meta import LabelSelector, convert
    from ..scheduler.labels import label_selector_matcher

    doc = load_one(path, "NodeKubelets")
    raw = doc.obj
    if not isinstance(raw, dict):
        raise InputError("expected a NodeKubelets object (a mapping)", file=doc.where)
    check(raw, _SPEC, file=doc.where)
    if raw.get("apiVersion") != "kubetwin.io/v1alpha1" or raw.get("kind") != "NodeKubelets":
        raise InputError(f"expected apiVersion kubetwin.io/v1alpha1, kind NodeKubelets, not "
                         f"{raw.get('apiVersion')!r}, {raw.get('kind')!r}", path="kind", file=doc.where)
    root = Path(doc.where.split(":")[0]).parent if doc.where else Path(".")
    entries = (raw.get("spec") or {}).get("nodes") or []
    if not entries:
        raise InputError("Required value: at least one entry", path="spec.nodes", file=doc.where)
    out = []
    for k, e in enumerate(entries):
        where = f"spec.nodes[{k}]"
        if "selector" not in e or e["selector"] is None:
            raise InputError("Required value: selector ({} selects every node)", path=f"{where}.selector",
                             file=doc.where)
        check(e["selector"], type_spec("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"),
              file=doc.where, prefix=f"{where}.selector")
        selector = convert(e["selector"], LabelSelector, file=doc.where)
        if not e.get("machine"):
            raise InputError("Required value: machine (a spec like 2s2n8c2t, or a path)", path=f"{where}.machine",
                             file=doc.where)
        if "kubeletConfig" in e and "kubeletConfigFile" in e:
            raise InputError("kubeletConfig and kubeletConfigFile are exclusive", path=f"{where}.kubeletConfigFile",
                             file=doc.where, fix="give one of them")
        src = str(e["machine"])
        if (root / src).exists():
            src = str(root / src)
        try:
            machine = load_machine(src)
        except InputError as exc:
            if not Path(src).exists():
                exc.file = None
                raise exc.within(f"{where}.machine").in_file(doc.where) from None
            raise
        if "kubeletConfigFile" in e:
            cdoc = load_one(root / str(e["kubeletConfigFile"]), "KubeletConfiguration")
            config = KubeletConfiguration.from_dict(cdoc.obj, version, file=cdoc.where)
            config_source = (cdoc.where, "")
        else:
            try:
                config = KubeletConfiguration.from_dict(e.get("kubeletConfig"), version,
                                                        warn_prefix=f"{where}.kubeletConfig")
            except InputError as exc:
                exc.file = None
                raise exc.within(f"{where}.kubeletConfig").in_file(doc.where) from None
            config_source = (doc.where, f"{where}.kubeletConfig")
        devices = None
        if e.get("devicesFromMachine") or e.get("devices"):
            from ..kubelet.devices import (
                EMPTY_INVENTORY,
                devices_from_machine,
                load_device_inventory,
                merge_inventories,
            )

            devices = devices_from_machine(machine) if e.get("devicesFromMachine") else EMPTY_INVENTORY
            if e.get("devices"):
                devices = merge_inventories(devices, load_device_inventory(str(root / str(e["devices"])), machine))
        out.append(NodeKubelet(label_selector_matcher(selector), machine, config, f"{doc.where}: {where}", devices,
                               config_source))
    return out


def select(entries: list[NodeKubelet], labels: Mapping[str, str]) -> NodeKubelet | None:
    """The first entry selecting a node with these labels."""
    for e in entries:
        if e.matches(labels):
            return e
    return None
