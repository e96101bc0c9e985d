"""``kubetwin snapshot``: ``kubectl get -o yaml|json`` dumps merged into one cluster, written as
a scenario folder. kubetwin's own (what KWOK's and kube-scheduler-simulator's snapshot import do);
the objects are read as ``kubectl get`` writes them (``k8s.io/apimachinery`` List, ``metav1.GetControllerOf``).

Any number of files and folders (List objects, multi-document YAML, JSON) become **one**
cluster — unlike ``simulate A.yaml B.yaml``, which runs two scenarios. Every object is strictly
decoded (``model.kinds.check_object``); ``managedFields`` are dropped; ownerReferences are kept,
so ``simulate`` ties each pod to its controller and does not create it twice
(``sim.scenario``'s adoption). DaemonSets are played here, once, by the DaemonSet controller's
node eligibility (``sim.daemonset``): a pod per eligible node that has none in the dump. Kinds
that do not bear on resources (Secrets, ConfigMaps, Services, Events, ...) are left out with one
note per kind.

The folder (written to a temporary folder, then renamed into place):

    scenario.yaml    a Simulation naming the files below (kubetwin simulate OUT/scenario.yaml)
    nodes.json       Nodes                          (schedule --nodes)
    pods.json        Pods bound to a node            (schedule --pods, admit)
    pending.json     Pods not bound yet, incl. daemon pods created here
    workloads.json   Deployments, ReplicaSets, Jobs (controllers simulate plays)
    objects.json     PriorityClasses, quotas, LimitRanges, PDBs, DRA, NRT, ... (schedule -f, dra -f)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..model.kinds import check_object
from ..model.loader import Document, load_documents

#: kinds whose controller ``simulate`` plays (``sim.scenario``)
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "Job"})
#: kinds passed on as they are: the scheduler, admission controllers or DRA read them
OBJECT_KINDS = frozenset({"PriorityClass", "ResourceQuota", "LimitRange", "PodDisruptionBudget", "Namespace",
                          "StatefulSet", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                          "NodeResourceTopology"})
#: why a kind is left out, for its note
_WHY_IGNORED = {
    "CronJob": "its Jobs in the dump are kept; Jobs it would start later are not simulated",
}
_NOT_RESOURCES = "no bearing on resource management"
_TERMINAL = frozenset({"Succeeded", "Failed"})
_SUFFIXES = (".yaml", ".yml", ".json")
FILES = ("nodes.json", "pods.json", "pending.json", "workloads.json", "objects.json")


@dataclass
class Snapshot:
    """One cluster merged from dumps, ready to write."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)        # bound to a node
    pending: list[dict[str, Any]] = field(default_factory=list)     # not bound yet
    workloads: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    terminal: Counter[str] = field(default_factory=Counter)         # finished pods left out, by phase
    daemon_pods: Counter[str] = field(default_factory=Counter)      # created here, per DaemonSet

    def notes(self) -> list[str]:
        out = []
        for kind, n in sorted(self.ignored.items()):
            why = _WHY_IGNORED.get(kind) or _NOT_RESOURCES
            out.append(f"{n} {kind} object(s) ignored: {why}")
        for phase, n in sorted(self.terminal.items()):
            out.append(f"{n} {phase} pod(s) left out: they hold no resources")
        sets = sum(1 for o in self.objects if o.get("kind") == "StatefulSet")
        if sets:
            out.append(f"{sets} StatefulSet(s) kept as objects: their pods in the dump are kept, their "
                       "controller is not simulated (a lost pod is not replaced)")
        for ds, n in sorted(self.daemon_pods.items()):
            out.append(f"DaemonSet {ds}: {n} pod(s) created for eligible nodes without one")
        return out

    def summary(self) -> str:
        phases = Counter(str((p.get("status") or {}).get("phase") or "Pending") for p in self.pods + self.pending)
        by_phase = ", ".join(f"{n} {ph}" for ph, n in sorted(phases.items())) or "none"
        ignored = sum(self.ignored.values())
        return (f"{len(self.nodes)} nodes, {len(self.pods) + len(self.pending)} pods ({by_phase}), "
                f"{len(self.workloads)} workloads, {len(self.objects)} other objects, "
                f"{ignored} ignored ({len(self.ignored)} kinds)")


def dump_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, folders walked (``.yaml``, ``.yml``, ``.json``, sorted, recursively)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in _SUFFIXES)
            if not found:
                raise InputError("folder holds no .yaml, .yml or .json file", file=str(path))
            out.extend(found)
        elif str(p) == "-" or path.exists():
            out.append(path)
        else:
            raise InputError("no such file or folder", file=str(path), fix="check the path")
    return out


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    """``managedFields`` dropped (the API server's field bookkeeping)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


_STRICT: dict[tuple[str, str], Any] = {}


def _strict_type(api_version: Any, kind: Any) -> Any:
    """The C-speed strict decoder of a built-in kind (``apischema.strict_struct``), None for
    kinds it does not cover (custom kinds, unknown kinds: :func:`check_object` handles those)."""
    from ..model.apischema import strict_struct
    from ..model.kinds import CUSTOM_KINDS

    if not isinstance(api_version, str) or not isinstance(kind, str) or kind in CUSTOM_KINDS:
        return None
    key = (api_version, kind)
    if key not in _STRICT:
        try:
            _STRICT[key] = strict_struct(api_version, kind)
        except Exception:  # noqa: BLE001 - an apiVersion no release serves: check_object says so
            _STRICT[key] = None
    return _STRICT[key]


def _check(doc: Document) -> None:
    """:func:`check_object`, with a C-speed first pass: an object the strict decoder accepts is
    one ``check_object`` accepts; any other goes to ``check_object`` for the precise message."""
    import msgspec

    obj = doc.obj
    if isinstance(obj, dict):
        t = _strict_type(obj.get("apiVersion"), obj.get("kind"))
        if t is not None:
            try:
                msgspec.convert(obj, t)
                return
            except (msgspec.ValidationError, TypeError):
                pass
    check_object(obj, doc.where)


def _fast_documents(path: Path) -> list[Document] | None:
    """A large JSON ``List`` of one kind (``kubectl get pods -A -o json``) strictly decoded at C
    speed, every item then marked checked; None: the general path (it gives the precise error).
    As for ``load_pods``, only files of :data:`~kubetwin.model.objects.FAST_PATH_MIN_BYTES` or
    more (machine-written: Go's encoder never repeats a key, which this path cannot see)."""
    import msgspec

    from ..model.objects import FAST_PATH_MIN_BYTES, _strict_list

    if path.suffix.lower() != ".json" or str(path) == "-":
        return None
    try:
        if path.stat().st_size < FAST_PATH_MIN_BYTES:
            return None
        data = path.read_bytes()
        raw = msgspec.json.decode(data)
    except (OSError, msgspec.DecodeError):
        return None
    if not isinstance(raw, dict) or not str(raw.get("kind", "")).endswith("List") or not isinstance(
            raw.get("items"), list):
        return None
    items = raw["items"]
    kinds = {(o.get("apiVersion"), o.get("kind")) for o in items if isinstance(o, dict)}
    if len(kinds) != 1 or any(not isinstance(o, dict) for o in items):
        return None
    t = _strict_type(*next(iter(kinds)))
    if t is None:
        return None
    try:
        msgspec.json.decode(data, type=_strict_list(t))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    name = str(path)
    return [_Checked(o, name, i) for i, o in enumerate(items)]


class _Checked(Document):
    """A document the fast path has already strictly decoded."""


def take(docs: Iterable[Document], *, comparison_operators: bool = False) -> Snapshot:
    """Merge checked objects into one cluster; the same object twice is taken once, two
    different objects under one name are refused."""
    from ..model.node import node_from_dict
    from .daemonset import daemon_pod_node, daemon_pods, daemon_set

    snap = Snapshot()
    seen: dict[tuple[str, str, str], tuple[dict[str, Any], Document]] = {}
    daemon_sets: list[dict[str, Any]] = []
    for doc in docs:
        if not isinstance(doc, _Checked):
            _check(doc)
        obj = _clean(doc.obj)
        kind = obj["kind"]
        if kind == "List":
            raise InputError("a List inside a List", path="kind", file=doc.where)
        key = _key(obj)
        if key in seen:
            first, first_doc = seen[key]
            if first != obj:
                raise InputError(f"{kind} {key[1] + '/' if key[1] else ''}{key[2]} is in the dumps twice, "
                                 f"with different contents (first in {first_doc.where})", path="metadata.name",
                                 file=doc.where, fix="give one dump per object, or dumps of the same moment")
            continue
        seen[key] = (obj, doc)
        if kind == "Node":
            snap.nodes.append(obj)
        elif kind == "Pod":
            phase = (obj.get("status") or {}).get("phase")
            if phase in _TERMINAL:
                snap.terminal[str(phase)] += 1
            elif (obj.get("spec") or {}).get("nodeName"):
                snap.pods.append(obj)
            else:
                snap.pending.append(obj)
        elif kind in WORKLOAD_KINDS:
            snap.workloads.append(obj)
        elif kind == "DaemonSet":
            daemon_sets.append(obj)
        elif kind in OBJECT_KINDS:
            snap.objects.append(obj)
        else:
            snap.ignored[kind] += 1
    if daemon_sets:
        nodes = [node_from_dict(n, checked=True) for n in snap.nodes]
        running: dict[tuple[str, str], set[str]] = {}
        for pod in snap.pods + snap.pending:
            meta = pod.get("metadata") or {}
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "DaemonSet" and ref.get("controller"):
                    node = daemon_pod_node(pod)
                    if node:
                        running.setdefault((str(meta.get("namespace") or "default"), str(ref.get("name"))),
                                           set()).add(node)
        for obj in daemon_sets:
            ds = daemon_set(obj)
            new = daemon_pods(ds, nodes, running.get((ds.namespace, ds.name), set()),
                              comparison_operators=comparison_operators)
            snap.pending.extend(new)
            snap.daemon_pods[f"{ds.namespace}/{ds.name}"] = len(new)
    return snap


def load(paths: Iterable[str | Path], *, comparison_operators: bool = False) -> Snapshot:
    # Hundreds of thousands of small containers, none of them in a cycle: the cyclic collector
    # would rescan them again and again.
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        docs: list[Document] = []
        for f in dump_files(paths):
            fast = _fast_documents(f)
            docs.extend(fast if fast is not None else load_documents(f))
        return take(docs, comparison_operators=comparison_operators)
    finally:
        if enabled:
            gc.enable()


def _list(items: list[dict[str, Any]]) -> bytes:
    import msgspec

    return msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": items})


def scenario_text(name: str) -> str:
    files = "".join(f"  - {f}\n" for f in FILES)
    return (f"# written by kubetwin snapshot: kubetwin simulate {name}/scenario.yaml\n"
            "apiVersion: kubetwin.io/v1alpha1\nkind: Simulation\n"
            f"metadata:\n  name: {name}\nspec:\n  objects:\n{files}")


def write(snap: Snapshot, out: str | Path) -> Path:
    """The scenario folder at ``out``, all at once: written beside it, then renamed into place.
    An existing folder is replaced only if it is an earlier snapshot (holds ``scenario.yaml``)."""
    dest = Path(out)
    if dest.exists() and not dest.is_dir():
        raise InputError("exists and is not a folder", file=str(dest), fix="name a new folder")
    if dest.is_dir() and any(dest.iterdir()) and not (dest / "scenario.yaml").is_file():
        raise InputError("folder exists and is not a kubetwin snapshot; it is left as it is", file=str(dest),
                         fix="name a new folder, or an earlier snapshot's folder to replace it")
    parent = dest.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(dest)) from None
    try:
        (tmp / "scenario.yaml").write_text(scenario_text(dest.name or "snapshot"))
        for name, items in zip(FILES, (snap.nodes, snap.pods, snap.pending, snap.workloads, snap.objects)):
            (tmp / name).write_bytes(_list(items))
        os.chmod(tmp, 0o777 & ~_umask())
        old = None
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old.", dir=parent))
            os.rename(dest, old / "x")
        try:
            os.rename(tmp, dest)
        except OSError:
            if old is not None:
                os.rename(old / "x", dest)
                shutil.rmtree(old, ignore_errors=True)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(dest)) from None
    return dest


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
