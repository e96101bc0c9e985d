"""``kubetwin snapshot``: ``kubectl get -o yaml|json`` dumps merged into one cluster, written as
a scenario folder. kubetwin's own (what KWOK's and kube-scheduler-simulator's snapshot import do);
the objects are read as ``kubectl get`` writes them (``k8s.io/apimachinery`` List, ``metav1.GetControllerOf``).

Any number of files and folders (List objects, multi-document YAML, JSON) become **one**
cluster — unlike ``simulate A.yaml B.yaml``, which runs two scenarios. Every object is strictly
decoded (``model.kinds.check_object``); ``managedFields`` are dropped; ownerReferences are kept,
so ``simulate`` ties each pod to its controller and does not create it twice
(``sim.scenario``'s adoption). DaemonSets are played here, once, by the DaemonSet controller's
node eligibility (``sim.daemonset``): a pod per eligible node that has none in the dump; the
DaemonSet itself goes to ``workloads.json`` so that ``simulate``'s controller gives nodes that join
later (the Cluster Autoscaler's) their daemon pods. Kinds
that do not bear on resources (Secrets, ConfigMaps, Events, ...) are left out with one
note per kind.

The folder (written to a temporary folder, then renamed into place):

    scenario.yaml    a Simulation naming the files below (kubetwin simulate OUT/scenario.yaml)
    nodes.json       Nodes                          (schedule --nodes)
    pods.json        Pods bound to a node            (schedule --pods, admit)
    pending.json     Pods not bound yet, incl. daemon pods created here
    workloads.json   Deployments, ReplicaSets, StatefulSets, Jobs, DaemonSets (controllers simulate plays)
    objects.json     PriorityClasses, quotas, LimitRanges, PDBs, DRA, NRT, ... (schedule -f, dra -f)
    nodes/NAME/        kubelet.json: the node's KubeletConfiguration, when read from a live cluster's
                       /configz; with --per-node also node.json and pods.json (the pods bound to it):
                       admit --config nodes/NAME/kubelet.json nodes/NAME/pods.json, dra --node nodes/NAME/node.json

The objects are kept as the strict decoder built them (``apischema.strict_struct``: one typed
decode per dump file, no dict round trip) and encoded straight into the files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import msgspec

from ..errors import InputError
from ..model.apischema import schema_version
from ..model.kinds import check_object
from ..model.loader import Document, load_documents
from ..model.pod import is_qualified_name

#: kinds whose controller ``simulate`` plays (``sim.scenario``)
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "Job", "StatefulSet"})
#: kinds passed on as they are: the scheduler, admission controllers or DRA read them
#: (Services and ReplicationControllers: the selectors PodTopologySpread's default constraints spread by)
OBJECT_KINDS = frozenset({"PriorityClass", "ResourceQuota", "LimitRange", "PodDisruptionBudget", "Namespace",
                          "Service", "ReplicationController",
                          "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                          "NodeResourceTopology"})
#: why a kind is left out, for its note
_WHY_IGNORED = {
    "CronJob": "its Jobs in the dump are kept; Jobs it would start later are not simulated",
}
_NOT_RESOURCES = "no bearing on resource management"
_TERMINAL = frozenset({"Succeeded", "Failed"})
_SUFFIXES = (".yaml", ".yml", ".json")
_ENCODER = msgspec.json.Encoder()
FILES = ("nodes.json", "pods.json", "pending.json", "workloads.json", "objects.json")


#: an object of the snapshot: the typed value the strict decoder built (``apischema.strict_struct``,
#: attributes named as the wire fields) or, for kinds it does not cover (custom kinds), a dict
Item = Any


def get(obj: Item, *path: str) -> Any:
    """``obj.path...`` on a typed object or a dict alike; None where a field is absent."""
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return obj


def builtins(obj: Item) -> dict[str, Any]:
    """The object as plain JSON values (what the typed readers and the DaemonSet controller take)."""
    import msgspec

    return obj if isinstance(obj, dict) else msgspec.to_builtins(obj)


@dataclass
class Snapshot:
    """One cluster merged from dumps, ready to write."""

    nodes: list[Item] = field(default_factory=list)
    pods: list[Item] = field(default_factory=list)        # bound to a node
    pending: list[Item] = field(default_factory=list)     # not bound yet
    workloads: list[Item] = field(default_factory=list)
    objects: list[Item] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    terminal: Counter[str] = field(default_factory=Counter)         # finished pods left out, by phase
    daemon_pods: Counter[str] = field(default_factory=Counter)      # created here, per DaemonSet
    extra_notes: list[str] = field(default_factory=list)            # from the source (live: configz, APIs)
    kubelet_configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # node -> KubeletConfiguration

    def notes(self) -> list[str]:
        out = []
        for kind, n in sorted(self.ignored.items()):
            why = _WHY_IGNORED.get(kind) or _NOT_RESOURCES
            out.append(f"{n} {kind} object(s) ignored: {why}")
        for phase, n in sorted(self.terminal.items()):
            out.append(f"{n} {phase} pod(s) left out: they hold no resources")
        sets = sum(1 for o in self.workloads if get(o, "kind") == "StatefulSet")
        if sets:
            out.append(f"{sets} StatefulSet(s) kept as workloads: simulate adopts their pods in the dump by "
                       "ordinal and plays their controller")
        for ds, n in sorted(self.daemon_pods.items()):
            out.append(f"DaemonSet {ds}: {n} pod(s) created for eligible nodes without one")
        return out + self.extra_notes

    def summary(self) -> str:
        phases = Counter(str(get(p, "status", "phase") or "Pending") for p in self.pods + self.pending)
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


def _key(obj: Item) -> tuple[str, str, str]:
    meta = get(obj, "metadata")
    return str(get(obj, "kind")), str(get(meta, "namespace") or ""), str(get(meta, "name") or "")


def _clean(obj: Item) -> Item:
    """``managedFields`` dropped (the API server's field bookkeeping)."""
    meta = get(obj, "metadata")
    if isinstance(obj, dict):
        if isinstance(meta, dict) and "managedFields" in meta:
            obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    elif meta is not None and getattr(meta, "managedFields", None) is not None:
        meta.managedFields = None
    return obj


def _same(a: Item, b: Item) -> bool:
    if type(a) is type(b):
        return bool(a == b)
    return builtins(a) == builtins(b)


_STRICT: dict[tuple[str, str, str], Any] = {}


def strict_type(api_version: Any, kind: Any) -> Any:
    """The C-speed strict decoder of a built-in kind (``apischema.strict_struct``), None for
    kinds it does not cover (custom kinds, unknown kinds: :func:`check_object` handles those)."""
    key = (api_version, kind, schema_version())  # the release --kubernetes-version names
    found = _STRICT.get(key, _STRICT) if isinstance(api_version, str) and isinstance(kind, str) else None
    if found is not _STRICT:
        return found
    from ..model.apischema import strict_struct
    from ..model.kinds import CUSTOM_KINDS

    if kind in CUSTOM_KINDS:
        _STRICT[key] = None
    else:
        try:
            _STRICT[key] = strict_struct(api_version, kind)
        except Exception:  # noqa: BLE001 - an apiVersion no release serves: check_object says so
            _STRICT[key] = None
    return _STRICT[key]


def _check(doc: Document) -> Item:
    """:func:`check_object`, with a C-speed first pass: an object the strict decoder accepts is
    one ``check_object`` accepts, and is kept as the decoder built it; any other goes to
    ``check_object`` for the precise message (and stays a dict: a custom kind)."""
    import msgspec

    obj = doc.obj
    if isinstance(obj, dict):
        t = strict_type(obj.get("apiVersion"), obj.get("kind"))
        if t is not None:
            try:
                return msgspec.convert(obj, t)
            except (msgspec.ValidationError, TypeError):
                pass
    check_object(obj, doc.where)
    return obj


class _Head(msgspec.Struct, gc=False):
    """What a List says of itself, its items left undecoded."""

    apiVersion: Any = None
    kind: Any = None
    items: list[msgspec.Raw] = []


class _GVK(msgspec.Struct, gc=False):
    apiVersion: Any = None
    kind: Any = None


def decode_list(data: bytes, item_type: Any) -> list[Item]:
    """A JSON ``*List`` whose items are all of one built-in kind, strictly decoded in one pass into
    typed objects (raises ``msgspec.ValidationError``/``DecodeError`` on any unknown field or type)."""
    from ..model.objects import _strict_list

    return list(msgspec.json.decode(data, type=_strict_list(item_type)).items)


def _fast_items(path: Path) -> list[Item] | None:
    """A large JSON ``List`` (``kubectl get pods -A -o json``) strictly decoded at C speed into
    typed objects: the whole file at once when its items are of one kind (the usual dump), item by
    item otherwise. None: the general path (it gives the precise error). As for ``load_pods``, only
    files of :data:`~kubetwin.model.objects.FAST_PATH_MIN_BYTES` or more (machine-written: Go's
    encoder never repeats a key, which this path cannot see)."""
    from ..model.objects import FAST_PATH_MIN_BYTES

    if path.suffix.lower() != ".json" or str(path) == "-":
        return None
    try:
        if path.stat().st_size < FAST_PATH_MIN_BYTES:
            return None
        data = path.read_bytes()
        head = msgspec.json.decode(data, type=_Head)
        if not str(head.kind or "").endswith("List") or not head.items or (
                head.kind == "List" and head.apiVersion not in (None, "v1")):
            return None
        raws = head.items
        first = msgspec.json.decode(raws[0], type=_GVK)
        t = strict_type(first.apiVersion, first.kind)
        if t is None:
            return None
        try:
            items = decode_list(data, t)
        except msgspec.ValidationError:  # several kinds (or a bad field: found again below)
            items = []
            for raw in raws:
                gvk = msgspec.json.decode(raw, type=_GVK)
                t = strict_type(gvk.apiVersion, gvk.kind)
                if t is None:
                    return None
                items.append(msgspec.json.decode(raw, type=t))
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return items


_POD_TEMPLATE_KINDS = frozenset({"Deployment", "ReplicaSet", "Job", "DaemonSet", "StatefulSet"})


#: quantity values already parsed without error (most pods of a cluster repeat a few dozen)
_GOOD: set[Any] = set()


#: resource names already found to be qualified names (a cluster uses a handful)
_GOOD_NAMES: set[str] = set()


def _resource_list(values: Any, path: str) -> None:
    from ..model.quantity import parse_quantity

    if values:
        for name, value in values.items():
            if name not in _GOOD_NAMES:
                # validateResourceName: the API server never stores another key in a ResourceList
                if not isinstance(name, str) or not is_qualified_name(name):
                    raise InputError(f'Invalid value: "{name}": a resource name must be a qualified name '
                                     "(e.g. 'cpu', 'example.com/gpu')", path=f"{path}[{name}]")
                if len(_GOOD_NAMES) < 4096:
                    _GOOD_NAMES.add(name)
            if value not in _GOOD:
                parse_quantity(value, f"{path}[{name}]")
                if len(_GOOD) < 65536:
                    _GOOD.add(value)


def _known(values: Any) -> bool:
    if values:
        for name, value in values.items():
            if value not in _GOOD or name not in _GOOD_NAMES:
                return False
    return True


def _known_pod_spec(spec: Any) -> bool:
    """Every quantity of a typed pod spec already seen good: the common case, without paths."""
    if spec is None or isinstance(spec, dict):
        return spec is None
    for containers in (spec.initContainers, spec.containers):
        for c in containers or ():
            r = c.resources
            if r is not None and not (_known(r.requests) and _known(r.limits)):
                return False
    r = getattr(spec, "resources", None)
    return _known(spec.overhead) and (r is None or (_known(r.requests) and _known(r.limits)))


def _pod_spec_quantities(spec: Any, prefix: str) -> None:
    for field_name in ("initContainers", "containers"):
        for i, c in enumerate(get(spec, field_name) or ()):
            res = get(c, "resources")
            if res is not None:
                _resource_list(get(res, "requests"), f"{prefix}.{field_name}[{i}].resources.requests")
                _resource_list(get(res, "limits"), f"{prefix}.{field_name}[{i}].resources.limits")
    _resource_list(get(spec, "overhead"), f"{prefix}.overhead")
    res = get(spec, "resources")
    if res is not None:
        _resource_list(get(res, "requests"), f"{prefix}.resources.requests")
        _resource_list(get(res, "limits"), f"{prefix}.resources.limits")


def check_quantities(obj: Item, kind: Any) -> None:
    """The quantities the readers of the folder parse (pods' and templates' requests, limits and
    overhead; nodes' capacity and allocatable), parsed here: a snapshot never holds a value
    ``simulate`` or ``schedule`` would refuse (``QuantityError`` names the field)."""
    if kind == "Pod":
        spec = get(obj, "spec") if isinstance(obj, dict) else obj.spec
        if not _known_pod_spec(spec):
            _pod_spec_quantities(spec, "spec")
    elif kind == "Node":
        _resource_list(get(obj, "status", "capacity"), "status.capacity")
        _resource_list(get(obj, "status", "allocatable"), "status.allocatable")
    elif kind in _POD_TEMPLATE_KINDS:
        _pod_spec_quantities(get(obj, "spec", "template", "spec"), "spec.template.spec")


def take(docs: Iterable[Document | tuple[Item, str]], *, comparison_operators: bool = False,
         snap: Snapshot | None = None) -> Snapshot:
    """Merge objects into one cluster: documents are checked here; typed objects, given with the
    file or URL they came from, were checked by their decoder. The same object twice is taken once, two different objects under one name are
    refused."""
    from ..model.node import node_from_dict
    from .daemonset import daemon_pod_node, daemon_pods, daemon_set

    snap = snap or Snapshot()
    seen: dict[tuple[str, str, str], tuple[Item, Document | tuple[Item, str]]] = {}
    daemon_sets: list[Item] = []
    for doc in docs:
        obj = _check(doc) if isinstance(doc, Document) else doc[0]
        if isinstance(obj, dict):
            obj = _clean(obj)
            kind = get(obj, "kind")
            key = _key(obj)
        else:  # a typed object: plain attribute reads (the hot path of a large dump)
            kind = obj.kind
            meta = obj.metadata
            if meta is None:
                key = (str(kind), "", "")
            else:
                if meta.managedFields is not None:
                    meta.managedFields = None
                key = (str(kind), meta.namespace or "", meta.name or "")
        if kind == "List":
            raise InputError("a List inside a List", path="kind", file=_where(doc))
        if key in seen:
            first, first_doc = seen[key]
            if not _same(first, obj):
                raise InputError(f"{kind} {key[1] + '/' if key[1] else ''}{key[2]} is in the dumps twice, "
                                 f"with different contents (first in {_where(first_doc)})", path="metadata.name",
                                 file=_where(doc), fix="give one dump per object, or dumps of the same moment")
            continue
        seen[key] = (obj, doc)
        try:
            check_quantities(obj, kind)
        except InputError as exc:
            raise exc.in_file(_where(doc)) from None
        if kind == "Node":
            snap.nodes.append(obj)
        elif kind == "Pod":
            status, spec = (get(obj, "status"), get(obj, "spec")) if isinstance(obj, dict) else (obj.status, obj.spec)
            phase = get(status, "phase")
            if phase in _TERMINAL:
                snap.terminal[str(phase)] += 1
            elif get(spec, "nodeName"):
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
            snap.ignored[str(kind)] += 1
    if daemon_sets:
        nodes = []
        for n in snap.nodes:
            try:
                nodes.append(node_from_dict(builtins(n), checked=True))
            except InputError as exc:
                raise exc.in_file(_where(seen[_key(n)][1])) from None
        running: dict[tuple[str, str], set[str]] = {}
        for pod in snap.pods + snap.pending:
            # metav1.GetControllerOf: the first reference with controller set (the API server allows one)
            ref = next((r for r in get(pod, "metadata", "ownerReferences") or () if get(r, "controller")), None)
            if ref is not None and get(ref, "kind") == "DaemonSet":
                node = daemon_pod_node(builtins(pod))
                if node:
                    running.setdefault((str(get(pod, "metadata", "namespace") or "default"),
                                        str(get(ref, "name"))), set()).add(node)
        for obj in daemon_sets:
            ds = daemon_set(builtins(obj))
            try:
                new = daemon_pods(ds, nodes, running.get((ds.namespace, ds.name), set()),
                                  comparison_operators=comparison_operators)
            except InputError as exc:
                raise exc.within("spec.template").in_file(_where(seen[_key(obj)][1])) from None
            snap.pending.extend(new)
            snap.daemon_pods[f"{ds.namespace}/{ds.name}"] = len(new)
            # kept for simulate's DaemonSet controller: nodes that join later (the Cluster
            # Autoscaler's) get their daemon pods; the pods above and the dump's count as its own
            snap.workloads.append(obj)
    return snap


def _where(doc: Document | tuple[Item, str]) -> str:
    if isinstance(doc, Document):
        return doc.where
    obj, source = doc
    return f"{source}: {get(obj, 'kind')} {get(obj, 'metadata', 'name')}"


class Phases:
    """Wall and CPU time per phase (``--timings``; the benchmark prints them)."""

    def __init__(self) -> None:
        import time

        self._time = time
        self.times: list[tuple[str, float, float]] = []
        self._t = (time.perf_counter(), time.process_time())

    def mark(self, name: str) -> None:
        now = (self._time.perf_counter(), self._time.process_time())
        self.times.append((name, now[0] - self._t[0], now[1] - self._t[1]))
        self._t = now

    def lines(self) -> list[str]:
        return [f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU" for name, wall, cpu in self.times]


def load(paths: Iterable[str | Path], *, comparison_operators: bool = False,
         phases: Phases | None = None) -> Snapshot:
    # Hundreds of thousands of small containers, none of them in a cycle: the cyclic collector
    # would rescan them again and again.
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        docs: list[Document | tuple[Item, str]] = []
        for f in dump_files(paths):
            fast = _fast_items(f)
            if fast is None:
                docs.extend(load_documents(f))
            else:
                name = str(f)
                docs.extend((item, name) for item in fast)
        if phases:
            phases.mark("read and decode")
        snap = take(docs, comparison_operators=comparison_operators)
        if phases:
            phases.mark("merge")
        return snap
    finally:
        if enabled:
            gc.enable()


def write_list(path: Path, items: list[Item]) -> None:
    """``{"apiVersion":"v1","kind":"List","items":[...]}``, encoded straight into the file a slice
    of items at a time (one buffer reused: no copy of the whole file in memory)."""
    buf = bytearray()
    with open(path, "wb") as f:
        f.write(b'{"apiVersion":"v1","kind":"List","items":[')
        for i in range(0, len(items), _CHUNK):
            _ENCODER.encode_into(items[i:i + _CHUNK], buf)
            if i:
                f.write(b",")
            f.write(memoryview(buf)[1:-1])
        f.write(b"]}")


_CHUNK = 2048


def scenario_text(name: str) -> str:
    files = "".join(f"  - {f}\n" for f in FILES)
    return (f"# written by kubetwin snapshot: kubetwin simulate {name}/scenario.yaml\n"
            "apiVersion: kubetwin.io/v1alpha1\nkind: Simulation\n"
            f"metadata:\n  name: {name}\nspec:\n  objects:\n{files}")


def fill(folder: Path, snap: Snapshot, name: str, *, per_node: bool = False) -> None:
    """The snapshot's files in ``folder`` (see the module's docstring)."""
    (folder / "scenario.yaml").write_text(scenario_text(name))
    for file, items in zip(FILES, (snap.nodes, snap.pods, snap.pending, snap.workloads, snap.objects)):
        write_list(folder / file, items)
    _fill_nodes(folder, snap, per_node)


def _node_folder(folder: Path, node: str) -> Path:
    if not node or "/" in node or node.startswith(".") or "\0" in node:
        raise InputError(f'node name "{node}" cannot name a folder', path="metadata.name",
                         fix="node names are DNS subdomains: lower-case letters, digits, '-' and '.'")
    path = folder / "nodes" / node
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fill_nodes(folder: Path, snap: Snapshot, per_node: bool) -> None:
    """``nodes/NAME/``: each node's KubeletConfiguration (when read from ``/configz``), and with
    ``per_node`` the node itself and the pods bound to it — what ``admit`` (``--config``, the
    pods to admit first) and ``dra`` (``--node``) take for one node."""
    for node, cfg in sorted(snap.kubelet_configs.items()):
        (_node_folder(folder, node) / "kubelet.json").write_bytes(_ENCODER.encode(cfg))
    if not per_node:
        return
    bound: dict[str, list[Item]] = {}
    for pod in snap.pods:
        bound.setdefault(str(get(pod, "spec", "nodeName")), []).append(pod)
    for node in snap.nodes:
        name = str(get(node, "metadata", "name") or "")
        d = _node_folder(folder, name)
        (d / "node.json").write_bytes(_ENCODER.encode(node))
        write_list(d / "pods.json", bound.get(name, []))


def write(snap: Snapshot, out: str | Path, *, phases: Phases | None = None, per_node: bool = False) -> Path:
    """The scenario folder at ``out``, all at once (:func:`write_folder`)."""
    dest = write_folder(out, lambda tmp: fill(tmp, snap, Path(out).name or "snapshot", per_node=per_node))
    if phases:
        phases.mark("write")
    return dest


def check_destination(out: str | Path, marker: str = "scenario.yaml") -> Path:
    """``out`` may be written: absent, empty, or an earlier snapshot — a folder holding
    ``marker`` (checked before any work)."""
    dest = Path(out)
    if dest.exists() and not dest.is_dir():
        raise InputError("exists and is not a folder", file=str(dest), fix="name a new folder")
    if dest.is_dir() and any(dest.iterdir()) and not (dest / marker).is_file():
        raise InputError("folder exists and is not a kubetwin snapshot; it is left as it is", file=str(dest),
                         fix="name a new folder, or an earlier snapshot's folder to replace it")
    return dest


def write_folder(out: str | Path, fill_in: Callable[[Path], None], marker: str = "scenario.yaml") -> Path:
    """A folder written beside ``out`` by ``fill_in``, then renamed into place. An existing folder
    is replaced only if it is an earlier snapshot (holds ``scenario.yaml``); on any failure
    nothing is left behind."""
    dest = check_destination(out, marker)
    parent = dest.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=parent))
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(dest)) from None
    try:
        fill_in(tmp)
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
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
