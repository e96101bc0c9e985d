"""One ``--node-type NAME=MACHINE[,kubelet=FILE,price=P,max=N,labels=K=V,taints=K=V:EFFECT,dra=DRIVER,devices=SRC]``
value: a machine, its kubelet configuration, its price and the nodes of that type a mix may hold.

A node type is a scenario node group (``kubetwin/sim/scenario.py``) read once; the nodes of a
mix are copies of its first node renamed ``NAME-0``, ``NAME-1``, ... as the Cluster Autoscaler
names nodes made from a node group's template (``cluster-autoscaler/utils/scheduler``'s
``DeepCopyTemplateNode``), so every node of a type shares one started kubelet template.

Not an upstream module: kubetwin's own command-line shorthand.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.strict import unknown_key_error

#: the keys a node type takes after ``NAME=MACHINE`` (``labels``, ``taints``, ``dra`` repeatable)
KEYS = ("kubelet", "price", "max", "labels", "taints", "dra", "devices")
_REPEATABLE = frozenset({"labels", "taints", "dra"})
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: ``max`` when not given: the most nodes of one type a plan looks at
DEFAULT_MAX = 1000


@dataclass(frozen=True)
class NodeType:
    """A node type of the plan: its template node (a :class:`kubetwin.sim.scenario.SimNode`),
    the price of one node and the most nodes of it a mix may hold."""

    name: str
    machine_source: str
    template: Any
    price: float
    max: int
    priced: bool
    drivers: tuple[Any, ...] = ()
    #: the option text as given, for messages
    text: str = ""

    def nodes(self, count: int, start: int = 0) -> list[Any]:
        """``count`` nodes of this type, named ``NAME-start`` on."""
        from ..model.meta import to_builtins
        from ..model.node import node_from_dict
        from ..sim.scenario import publish_slices

        tmpl = self.template
        base = {**to_builtins(tmpl.node), "apiVersion": "v1", "kind": "Node"}
        out = []
        for k in range(start, start + count):
            name = f"{self.name}-{k}"
            obj = dict(base)
            meta = dict(obj.get("metadata") or {})
            meta["name"] = name
            meta["labels"] = {**(meta.get("labels") or {}), "kubernetes.io/hostname": name}
            obj["metadata"] = meta
            slices = [s for d in self.drivers for s in publish_slices(tmpl.machine, d, name)]
            out.append(dataclasses.replace(tmpl, node=node_from_dict(obj, checked=True), slices=slices))
        return out

    def allocatable(self) -> dict[str, int]:
        """The node's allocatable as the scheduler counts it (cpu in millicores, the rest in units)."""
        return {r: (q.milli_value() if r == "cpu" else q.value())
                for r, q in self.template.node.status.allocatable.items()}


def _split(text: str, where: str) -> tuple[str, str, list[tuple[str, str]]]:
    head, _, rest = text.partition(",")
    name, eq, machine = head.partition("=")
    if not eq or not name or not machine:
        raise InputError(f"Invalid value: {text!r}: expected NAME=MACHINE[,kubelet=FILE,price=P,max=N,...]",
                         path=where, fix="e.g. --node-type big=2s2n16c2t:mem=256Gi,kubelet=kubelet.yaml,price=3.2")
    pairs = []
    for item in rest.split(",") if rest else []:
        key, eq, value = item.partition("=")
        if not eq:
            raise InputError(f"Invalid value: {item!r}: expected KEY=VALUE", path=where,
                             fix="keys: " + ", ".join(KEYS))
        pairs.append((key, value))
    return name, machine, pairs


def _number(value: str, path: str, *, integer: bool) -> float:
    try:
        out = float(int(value)) if integer else float(value)
    except ValueError:
        kind = "a whole number" if integer else "a number"
        raise InputError(f"Invalid value: {value!r}: must be {kind}", path=path) from None
    if not math.isfinite(out) or out < 1 if integer else not math.isfinite(out) or out <= 0:
        raise InputError(f"Invalid value: {value!r}: must be {'at least 1' if integer else 'positive'}",
                         path=path)
    return out


def _label(value: str, path: str) -> tuple[str, str]:
    key, eq, val = value.partition("=")
    if not eq or not key:
        raise InputError(f"Invalid value: {value!r}: expected KEY=VALUE", path=path)
    return key, val


def _taint(value: str, path: str) -> dict[str, str]:
    kv, colon, effect = value.rpartition(":")
    if not colon or not kv:
        raise InputError(f"Invalid value: {value!r}: expected KEY[=VALUE]:EFFECT", path=path,
                         fix="e.g. taints=gpu=true:NoSchedule")
    if effect not in _EFFECTS:
        raise InputError(f'Unsupported value: "{effect}": supported values: '
                         + ", ".join(f'"{e}"' for e in _EFFECTS), path=path)
    key, eq, val = kv.partition("=")
    out = {"key": key, "effect": effect}
    if eq:
        out["value"] = val
    return out


def parse_node_type(text: str, index: int = 0, *, kubernetes_version: str | None = None,
                    root: Path | None = None) -> NodeType:
    """One ``--node-type`` value, checked whole: an unknown key, a bad price or count, a machine
    or kubelet configuration that does not load is an :class:`InputError` naming the option."""
    from ..sim.scenario import Settings, dra_driver, node_group

    where = f"--node-type[{index}]"
    name, machine, pairs = _split(text, where)
    if not _NAME.match(name):
        raise InputError(f"Invalid value: {name!r}: a node type name is lower-case letters, digits and '-' "
                         "(at most 42), used in its nodes' names", path=f"{where}.name")
    group: dict[str, Any] = {"name": name, "count": 1, "machine": machine}
    price, most, priced = 1.0, DEFAULT_MAX, False
    seen: set[str] = set()
    labels: dict[str, str] = {}
    taints: list[dict[str, str]] = []
    drivers: list[str] = []
    for key, value in pairs:
        path = f"{where}.{key}"
        if key not in KEYS:
            raise unknown_key_error(key, KEYS, path=f"{where}.{key}", what="node type key")
        if key in seen and key not in _REPEATABLE:
            raise InputError(f"{key} is given twice; one would be ignored", path=path)
        seen.add(key)
        if key == "kubelet":
            group["kubeletConfigFile"] = value
        elif key == "price":
            price, priced = _number(value, path, integer=False), True
        elif key == "max":
            most = int(_number(value, path, integer=True))
        elif key == "labels":
            k, v = _label(value, path)
            labels[k] = v
        elif key == "taints":
            taints.append(_taint(value, path))
        elif key == "devices":   # device plugins: "machine" or a DeviceInventory file (sim/device_plugins.py)
            group["devices"] = value
        else:
            if not value:
                raise InputError("Required value: a DRA driver name such as gpu.example.com", path=path)
            drivers.append(value)
    if labels:
        group["labels"] = labels
    if taints:
        group["taints"] = taints
    base = root or Path.cwd()
    st = Settings(kubernetes_version=kubernetes_version)
    try:
        parsed_drivers = tuple(dra_driver({"driver": d}, f"dra[{k}]", st) for k, d in enumerate(drivers))
        if group.get("kubeletConfigFile") and not (base / group["kubeletConfigFile"]).is_file():
            raise InputError(f"no such file: {group['kubeletConfigFile']}", path="kubelet",
                             fix="give the path of a KubeletConfiguration file")
        template = node_group(group, "", base, st)[0]
    except InputError as exc:
        kubelet = group.get("kubeletConfigFile")
        raise _rename(exc, where, str(base / kubelet) if kubelet else None) from None
    if template.machine is None:  # unreachable: MACHINE is required above
        raise InputError("Required value: MACHINE", path=where)
    return NodeType(name, machine, template, price, most, priced, parsed_drivers, text)


def _rename(exc: InputError, where: str, kubelet_file: str | None = None) -> InputError:
    """A node group error (``.machine``, ``.kubeletConfig``, ``.labels``) as a ``--node-type`` one;
    an error in the kubelet configuration file's values names that file and the field in it."""
    path = exc.path or ""
    if kubelet_file and exc.file is None and path.startswith(".kubeletConfig."):
        exc.file = kubelet_file
        exc.path = path[len(".kubeletConfig."):]
        return exc
    if exc.file is not None and kubelet_file and exc.file.startswith(kubelet_file):
        return exc
    for old, new in ((".kubeletConfigFile", ".kubelet"), (".kubeletConfig", ".kubelet"),
                     ("kubeletConfig", "kubelet")):
        if path.startswith(old):
            path = new.lstrip(".") + path[len(old):]
            break
    path = path.lstrip(".")
    exc.path = f"{where}.{path}" if path else where
    return exc
