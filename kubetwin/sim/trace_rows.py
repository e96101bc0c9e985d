"""The Alibaba GPU trace (cluster-trace-gpu-v2023, "openb") read a row at a time as lists of
cells, rows met before answered from what they gave (the fast twin of the row-by-row reader in
:func:`.traces.read_alibaba_gpu`).

The trace's 8,152 pods come in 162 shapes and its 1,523 nodes in 27: the row-by-row reader
builds a dict per row, checks every cell and decodes each node's quantities anew. Here a row
whose resource cells were met before (and whose name, creation and deletion times are of the
plain kind: a name, decimal integers in time order) takes that earlier row's validated objects: the pod
shape's spec (renamed, as the row-by-row reader renames it) or the node's decoded status (its
name and labels new and checked). Any other row — the first of its kind, an empty or unusual
cell, too few or too many cells — goes through the row-by-row reader's own code
(:func:`.traces._alibaba_pod`, :func:`.traces._alibaba_node`) with the dict ``csv.DictReader``
would have given, so it yields the same objects and raises the same errors (file, line, column).

Not an upstream module: kubetwin's own trace reader, compared with the row-by-row reader in
``tests/sim/test_trace_rows.py``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

import msgspec

from ..errors import InputError
from ..model.pod import Pod, validate_labels
from .scenario import SimNode
from .traces import (
    _NODE_COLUMNS,
    _POD_ALL_COLUMNS,
    Trace,
    _alibaba_node,
    _alibaba_pod,
    _check_header,
    _renamed,
)
from .workload import Arrival

#: off: the trace is read row by row (:func:`.traces.read_alibaba_gpu`'s plain loop)
ENABLED = True


def read_alibaba_rows(folder: Path, pods: str, nodes: str, deletions: bool, limit: int | None,
                      max_pods_per_node: int) -> Trace:
    """:func:`.traces.read_alibaba_gpu` for the folder the trace's CSV files are in."""
    tr = Trace()
    npath = folder / nodes
    protos: dict[tuple[str, ...], SimNode] = {}   # raw (cpu, memory, gpu, model) -> a node read so
    header, rows = _table(npath, _NODE_COLUMNS)
    sn, cpu, mem, gpu, model = (header.index(c) if c in header else -1 for c in _NODE_COLUMNS)
    if min(sn, cpu, mem, gpu, model) < 0:
        sn = -1   # a column missing: every row goes to the row-by-row reader, which says so
    width = len(header)
    prefix = f"{npath}: line "
    for line, cells in rows:
        proto = None
        if len(cells) == width and sn >= 0:
            kind = (cells[cpu], cells[mem], cells[gpu], cells[model])
            proto = protos.get(kind)
        if proto is not None and cells[sn]:
            node = _renamed_node(proto, cells[sn], cells[model])
            if node is not None:
                tr.nodes.append(node)
                continue
        read = _alibaba_node(_as_dict(header, cells, npath, line), prefix + str(line), max_pods_per_node)
        tr.nodes.append(read)
        if len(cells) == width and sn >= 0:
            protos.setdefault((cells[cpu], cells[mem], cells[gpu], cells[model]), read)
    ppath = folder / pods
    shapes: dict[tuple, Pod] = {}   # as the row-by-row reader keeps them
    #: raw (cpu, memory, GPUs, GPU milli, GPU model, QoS) -> the shape a row of those cells has
    seen: dict[tuple[str, ...], Pod] = {}
    header, rows = _table(ppath, _POD_ALL_COLUMNS)
    width = len(header)
    col = {c: (header.index(c) if c in header else -1) for c in _POD_ALL_COLUMNS}
    fast = all(col[c] >= 0 for c in ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))
    i_name, i_cpu, i_mem, i_ngpu, i_milli = (col[c] for c in ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))
    i_spec, i_qos, i_created, i_deleted = (col[c] for c in ("gpu_spec", "qos", "creation_time", "deletion_time"))
    prefix = f"{ppath}: line "
    arrivals = tr.arrivals
    for line, cells in rows:
        if len(cells) > width:
            _as_dict(header, cells, ppath, line)   # raises, as the row-by-row reader does even past the limit
        if limit is not None and len(arrivals) >= limit:
            break
        if fast and len(cells) == width:
            key = (cells[i_cpu], cells[i_mem], cells[i_ngpu], cells[i_milli],
                   cells[i_spec] if i_spec >= 0 else "", cells[i_qos] if i_qos >= 0 else "")
            shape = seen.get(key)
            name = cells[i_name]
            if shape is not None and name:
                created = cells[i_created] if i_created >= 0 else ""
                if not created or created.isdecimal():
                    start = int(created) if created else 0
                    duration: float | None = None
                    deleted = cells[i_deleted] if deletions and i_deleted >= 0 else ""
                    if not deleted or (deleted.isdecimal() and int(deleted) >= start):
                        if deleted:
                            duration = float(int(deleted) - start)
                        arrivals.append(Arrival(float(start), _renamed(shape, name), duration, None,
                                                prefix + str(line)))
                        continue
        got = _alibaba_pod(_as_dict(header, cells, ppath, line), prefix + str(line), shapes, deletions)
        arrivals.append(got)
        if fast and len(cells) == width:
            # a later row with the same resource cells (read alike: every check is of the cell) has this shape
            seen.setdefault((cells[i_cpu], cells[i_mem], cells[i_ngpu], cells[i_milli],
                             cells[i_spec] if i_spec >= 0 else "", cells[i_qos] if i_qos >= 0 else ""),
                            _shape_of(got.pod, shapes))
    return tr


def _shape_of(pod: Pod, shapes: dict[tuple, Pod]) -> Pod:
    """The validated shape ``pod`` was made from (the row-by-row reader's, sharing its spec)."""
    for shape in shapes.values():
        if shape.spec is pod.spec:
            return shape
    raise AssertionError("a pod read from the trace has no shape")


def _renamed_node(proto: SimNode, name: str, model: str) -> SimNode | None:
    """A node with ``proto``'s decoded status under another name, or None when its labels
    would not pass (the row-by-row reader then says why)."""
    labels = {"kubernetes.io/hostname": name}
    if model:
        labels["alibabacloud.com/gpu-card-model"] = model
    try:
        validate_labels(labels, "metadata.labels")
    except InputError:
        return None
    node = proto.node
    renamed = msgspec.structs.replace(node, metadata=msgspec.structs.replace(node.metadata, name=name, labels=labels))
    return SimNode(renamed, proto.group, gpus=proto.gpus, gpu_model=proto.gpu_model)


def _table(path: Path, columns: tuple[str, ...]) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header of a CSV file whose header names only ``columns`` (each once), and its rows
    as ``csv.DictReader`` walks them: blank rows skipped, each with the line it ends on."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=str(path)) from None
    reader = csv.reader(f)
    try:
        header = next(reader)
    except StopIteration:
        f.close()
        raise InputError("empty file: expected a header line", file=str(path)) from None
    except BaseException:
        f.close()
        raise
    try:
        _check_header(header, columns, f"{path}: line 1")
    except BaseException:
        f.close()
        raise

    def rows() -> Iterator[tuple[int, list[str]]]:
        with f:
            for cells in reader:
                if cells:
                    yield reader.line_num, cells

    return header, rows()


def _as_dict(header: list[str], cells: list[str], path: Path, line: int) -> dict[str, str | None]:
    """The row as ``csv.DictReader`` gives it (missing cells None); too many cells is an error,
    as the row-by-row reader's."""
    if len(cells) > len(header):
        raise InputError(f"{len(cells)} fields, the header has {len(header)}", file=f"{path}: line {line}")
    row: dict[str, str | None] = dict(zip(header, cells))
    for name in header[len(cells):]:
        row[name] = None
    return row
