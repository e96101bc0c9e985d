"""Trace readers: the Alibaba GPU cluster trace (v2023, "openb"), a plain CSV/NDJSON table of
pods, and a folder of manifests with arrival times. Every malformed row is an error naming the
file, the line and the column; a column the format does not have is refused with the nearest one
it has (``cpu_mili`` → ``cpu_milli``), and Pod manifests are decoded strictly.

Not an upstream module: kubetwin's own trace readers."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import msgspec

from ..errors import InputError
from ..model.kinds import check_object
from ..model.node import node_from_dict
from ..model.pod import Pod, pod_from_dict
from ..model.quantity import parse_quantity
from ..model.strict import unknown_key_error
from ..model.unmodelled import SIMULATION, not_modelled_pod
from .gpushare import GPU_COUNT, GPU_MILLI, GPU_MODEL
from .scenario import ARRIVAL, DURATION, SimNode
from .usage import USAGE
from .workload import Arrival, parse_duration_spec, seconds


@dataclass
class Trace:
    nodes: list[SimNode] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)


def _rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a CSV file whose header names only ``columns`` (each once)."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=str(path)) from None
    with f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise InputError("empty file: expected a header line", file=str(path))
        _check_header(reader.fieldnames, columns, f"{path}: line 1")
        for row in reader:
            if None in row:
                raise InputError(f"{len(row[None]) + len(reader.fieldnames)} fields, the header has "
                                 f"{len(reader.fieldnames)}", file=f"{path}: line {reader.line_num}")
            yield reader.line_num, row


def _check_header(names: Any, columns: tuple[str, ...], where: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name not in columns:
            raise unknown_key_error(str(name), columns, file=where, what="column")
        if name in seen:
            raise InputError(f'duplicate column "{name}"', file=where, fix="give each column once")
        seen.add(name)


def _need(row: Mapping[str, str | None], col: str, where: str) -> str:
    v = row.get(col)
    if v is None:
        raise InputError(f"missing column {col!r}", file=where)
    return v


def _int_cell(row: Mapping[str, str | None], col: str, where: str, *, default: int | None = None) -> int:
    v = row.get(col)
    if v is None or v == "":
        if default is not None:
            return default
        raise InputError("Required value: an integer", path=col, file=where)
    try:
        out = int(v)
    except ValueError:
        try:
            f = float(v)
        except ValueError:
            raise InputError(f"Invalid value: {v!r}: not an integer", path=col, file=where) from None
        if f != int(f):
            raise InputError(f"Invalid value: {v!r}: not an integer", path=col, file=where) from None
        out = int(f)
    if out < 0:
        raise InputError(f"Invalid value: {v!r}: must be non-negative", path=col, file=where)
    return out


# --- Alibaba cluster-trace-gpu-v2023 ---------------------------------------------------------------
_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
_POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
#: Every column of the trace's pod lists: the required ones, then the optional ones (``pod_phase``
#: and ``scheduled_time`` record what happened in the traced cluster; a replay decides both anew).
_POD_ALL_COLUMNS = _POD_COLUMNS + ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time",
                                   "scheduled_time")


def read_alibaba_gpu(folder: str | Path, *, pods: str = "openb_pod_list_default.csv",
                     nodes: str = "openb_node_list_all_node.csv", deletions: bool = False,
                     limit: int | None = None, max_pods_per_node: int = 110) -> Trace:
    """Nodes and pods of the trace. Pods arrive at ``creation_time`` in file order; with
    ``deletions`` they leave at ``deletion_time`` (else they run forever, as the FGD simulator
    replays it). GPU requests become open-gpu-share annotations. Read row by row here; with
    :data:`.trace_rows.ENABLED` (the default) by :func:`.trace_rows.read_alibaba_rows`, which
    gives the same trace, down to each object shared, and the same errors."""
    folder = Path(folder)
    if (folder / "csv").is_dir():
        folder = folder / "csv"
    from . import trace_rows

    if trace_rows.ENABLED:
        return trace_rows.read_alibaba_rows(folder, pods, nodes, deletions, limit, max_pods_per_node)
    tr = Trace()
    npath = folder / nodes
    for line, row in _rows(npath, _NODE_COLUMNS):
        tr.nodes.append(_alibaba_node(row, f"{npath}: line {line}", max_pods_per_node))
    ppath = folder / pods
    shapes: dict[tuple, Pod] = {}   # a validated pod per distinct labels/annotations/requests
    for line, row in _rows(ppath, _POD_ALL_COLUMNS):
        if limit is not None and len(tr.arrivals) >= limit:
            break
        tr.arrivals.append(_alibaba_pod(row, f"{ppath}: line {line}", shapes, deletions))
    return tr


def _alibaba_node(row: Mapping[str, str | None], where: str, max_pods_per_node: int) -> SimNode:
    """One row of the trace's node list."""
    for c in _NODE_COLUMNS:
        _need(row, c, where)
    name = row["sn"]
    if not name:
        raise InputError("Required value: a node name", path="sn", file=where)
    cpu = _int_cell(row, "cpu_milli", where)
    mem = _int_cell(row, "memory_mib", where)
    gpu = _int_cell(row, "gpu", where)
    model = row["model"] or ""
    labels = {"kubernetes.io/hostname": name}
    if model:
        labels["alibabacloud.com/gpu-card-model"] = model
    res = {"cpu": f"{cpu}m", "memory": f"{mem}Mi", "pods": str(max_pods_per_node)}
    if gpu:
        res[GPU_COUNT] = str(gpu)   # what open-gpu-share's device plugin advertises
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
           "status": {"capacity": dict(res), "allocatable": res}}
    return SimNode(node_from_dict(obj, where, checked=True), model or "cpu", gpus=gpu, gpu_model=model)


def _alibaba_pod(row: Mapping[str, str | None], where: str, shapes: dict[tuple, Pod], deletions: bool) -> Arrival:
    """One row of the trace's pod list; ``shapes``: a validated pod per distinct labels,
    annotations and requests, whose spec the pods of that shape share."""
    for c in _POD_COLUMNS:
        _need(row, c, where)
    name = row["name"]
    if not name:
        raise InputError("Required value: a pod name", path="name", file=where)
    cpu = _int_cell(row, "cpu_milli", where)
    mem = _int_cell(row, "memory_mib", where)
    ngpu = _int_cell(row, "num_gpu", where)
    milli = _int_cell(row, "gpu_milli", where, default=0)
    created = _int_cell(row, "creation_time", where, default=0)
    deleted = row.get("deletion_time") or ""
    ann: dict[str, str] = {}
    if ngpu > 0:
        if ngpu == 1 and milli <= 0:
            raise InputError(f"Invalid value: {row['gpu_milli']!r}: a one-GPU pod needs gpu_milli in 1..1000",
                             path="gpu_milli", file=where)
        ann[GPU_COUNT] = str(ngpu)
        ann[GPU_MILLI] = str(milli if ngpu == 1 else 1000)
        spec = row.get("gpu_spec")
        if spec:
            ann[GPU_MODEL] = spec
    labels = {"app": "openb"}
    qos = row.get("qos")
    if qos:
        labels["alibabacloud.com/qos"] = qos
    requests: dict[str, str] = {}
    if cpu:
        requests["cpu"] = f"{cpu}m"
    if mem:
        requests["memory"] = f"{mem}Mi"
    key = (tuple(labels.items()), tuple(ann.items()), tuple(requests.items()))
    shape = shapes.get(key)
    if shape is None:
        pod = shapes[key] = _fast_pod(name, "default", labels, ann, requests, where)
    else:
        pod = _renamed(shape, name)
    duration = None
    if deletions and deleted:
        end = _int_cell(row, "deletion_time", where)
        if end < created:
            raise InputError(f"Invalid value: {end}: deletion_time is before creation_time {created}",
                             path="deletion_time", file=where)
        duration = float(end - created)
    return Arrival(float(created), pod, duration, None, where)


def _renamed(shape: Pod, name: str) -> Pod:
    """A pod of a validated pod's shape under another name: what validation reads beyond the
    name is the shape's (the name is checked only softly, as upstream's unit tests bend it), so
    the spec is shared and only the metadata is new (own label and annotation maps)."""
    m = shape.metadata
    meta = msgspec.structs.replace(m, name=name, uid=f"{m.namespace}/{name}", labels=dict(m.labels),
                                   annotations=dict(m.annotations))
    return msgspec.structs.replace(shape, metadata=meta)


def _fast_pod(name: str, namespace: str, labels: dict[str, str], annotations: dict[str, str],
              requests: dict[str, str], where: str, limits: dict[str, str] | None = None,
              priority_class: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": requests,
                                                                          **({"limits": limits} if limits else {})}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}/{name}", "labels": labels,
                        "annotations": annotations},
           "spec": spec}
    try:
        return pod_from_dict(obj, checked=True)  # made here from checked cells
    except InputError as exc:
        exc.file = None
        path = exc.path.replace("spec.containers[0].resources.", "")
        raise InputError(exc.message, path=path, file=where) from None


# --- a table of pods: CSV or NDJSON -------------------------------------------------------------------
_TABLE_COLUMNS = ("name", "namespace", "cpu", "memory", "cpu_limit", "memory_limit", "gpu", "arrival", "duration",
                  "priority_class", "labels", "cpu_usage", "memory_usage")


def read_pod_table(path: str | Path) -> list[Arrival]:
    """Pods from a CSV (header: name, cpu, memory, and optionally namespace, cpu_limit, memory_limit,
    gpu, arrival, duration, priority_class, labels as ``k=v;k2=v2``, cpu_usage and memory_usage — what
    the pod uses while it runs, :mod:`.usage`) or from NDJSON, one object per line: either such a flat
    record or a whole Pod with ``kubetwin.io/arrival``/``duration``/``usage`` annotations."""
    path = Path(path)
    if path.suffix in (".ndjson", ".jsonl", ".json"):
        return _read_ndjson(path)
    out = []
    for line, row in _rows(path, _TABLE_COLUMNS):
        out.append(_record_arrival(row, f"{path}: line {line}"))
    return out


def _read_ndjson(path: Path) -> list[Arrival]:
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=str(path)) from None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}: line {n}"
        obj = _json_line(raw, where)
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", file=where)
        if "kind" in obj or "apiVersion" in obj:
            check_object(obj, where, kinds=("Pod",), what="in a pod table")
            out.append(_manifest_arrival(obj, where))
        else:
            out.append(_record_arrival({k: _cell(v, k, where) for k, v in obj.items()}, where))
    return out


def _json_line(raw: str, where: str) -> Any:
    """One NDJSON line, held to JSON's rules as the manifest reader holds them (a key given
    twice, NaN and Infinity refused)."""
    from ..model.loader import DuplicateJSONKey, _json_object

    def no_constant(name: str) -> Any:
        raise InputError(f"invalid JSON: {name} is not a JSON number", file=where)

    try:
        return json.loads(raw, object_pairs_hook=_json_object, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} (column {e.colno})", file=where) from None
    except DuplicateJSONKey as e:
        raise InputError(f'strict decoding error: duplicate field "{e.args[0]}"', file=where,
                         fix="give each field once") from None
    except RecursionError:
        raise InputError("JSON nesting is too deep", file=where) from None
    except ValueError as e:  # thousands of digits
        raise InputError(f"invalid JSON: {e}", file=where) from None


def _cell(value: Any, column: str, where: str) -> str:
    """A flat record's value as the CSV cell it stands for: a string or a number."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"invalid type for column \"{column}\": expected a string or a number, got "
                         f"{type(value).__name__}", path=column, file=where)
    return str(value)


def _record_arrival(row: dict[str, str], where: str) -> Arrival:
    for k in row:
        if k not in _TABLE_COLUMNS:
            raise unknown_key_error(str(k), _TABLE_COLUMNS, file=where, what="column")
    name = row.get("name") or ""
    if not name:
        raise InputError("Required value: a pod name", path="name", file=where)
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for col, key, target in (("cpu", "cpu", requests), ("memory", "memory", requests),
                             ("cpu_limit", "cpu", limits), ("memory_limit", "memory", limits),
                             ("gpu", "nvidia.com/gpu", requests)):
        v = row.get(col) or ""
        if v:
            try:
                parse_quantity(v, col)
            except InputError as exc:
                raise InputError(exc.message, path=col, file=where) from None
            target[key] = v
    if "nvidia.com/gpu" in requests:
        limits["nvidia.com/gpu"] = requests["nvidia.com/gpu"]
    labels = {}
    for part in (row.get("labels") or "").split(";"):
        if part:
            k, sep, v = part.partition("=")
            if not sep or not k:
                raise InputError(f"Invalid value: {part!r}: expected key=value", path="labels", file=where)
            labels[k] = v
    try:
        arrival = seconds(_num(row.get("arrival") or "0"), "arrival")
        duration = parse_duration_spec(_num(row["duration"]) if row.get("duration") else None, "duration")
    except InputError as exc:
        raise exc.in_file(where) from None
    pod = _fast_pod(name, row.get("namespace") or "default", labels, {}, requests, where, limits or None,
                    row.get("priority_class") or "")
    usage = None
    measured = {key: row[col] for col, key in (("cpu_usage", "cpu"), ("memory_usage", "memory")) if row.get(col)}
    if measured:
        from .usage import parse_usage

        try:
            usage = parse_usage(measured, "")
        except InputError as exc:
            key = next(k for k in measured if exc.path and exc.path.startswith(f".{k}"))
            raise InputError(exc.message, path=f"{key}_usage", file=where) from None
    return Arrival(arrival, pod, duration.a if duration.kind == "fixed" else None, None, where, usage=usage)


def _num(v: str) -> Any:
    """A bare number is seconds; anything else is a Go duration."""
    try:
        return float(v)
    except ValueError:
        return v


def _manifest_arrival(obj: dict[str, Any], where: str) -> Arrival:
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    try:
        t = seconds(_num(ann[ARRIVAL]), f"metadata.annotations[{ARRIVAL}]") if ARRIVAL in ann else 0.0
        d = parse_duration_spec(_num(ann[DURATION]) if DURATION in ann else None, f"metadata.annotations[{DURATION}]")
    except InputError as exc:
        raise exc.in_file(where) from None
    pod = pod_from_dict(obj, where, checked=True)  # both callers ran check_object
    not_modelled_pod(obj, where, reader=SIMULATION)
    usage = None
    if USAGE in ann:
        from .usage import check_usage_against_pod, parse_usage

        try:
            usage = parse_usage(ann[USAGE], f"metadata.annotations[{USAGE}]")
            check_usage_against_pod(usage, pod, f"metadata.annotations[{USAGE}]")
        except InputError as exc:
            raise exc.in_file(where) from None
    return Arrival(t, pod, d.a if d.kind == "fixed" else None, None, where, usage=usage)


# --- a folder of manifests ------------------------------------------------------------------------------
def read_manifest_folder(folder: str | Path) -> list[Arrival]:
    """Every Pod in ``*.yaml``/``*.yml``/``*.json`` files of a folder (sorted by file name), arriving at
    its ``kubetwin.io/arrival`` annotation (default 0)."""
    from ..model.loader import load_documents

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder of manifests", file=str(folder))
    out = []
    for f in sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json")):
        for doc in load_documents(f):
            check_object(doc.obj, doc.where, kinds=("Pod",), what="in a manifest folder")
            out.append(_manifest_arrival(doc.obj, doc.where))
    out.sort(key=lambda a: a.time)
    return out
