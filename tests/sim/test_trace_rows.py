"""The Alibaba trace read as lists of cells (``trace_rows``) gives what the row-by-row reader
gives: every node and arrival equal, pods sharing their shape's spec alike, and the same error
for a malformed file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kubetwin.errors import InputError
from kubetwin.sim import trace_rows
from kubetwin.sim.traces import read_alibaba_gpu

TRACE = Path("/work/shared/data/traces/alibaba-gpu-v2023")
NODE_HEADER = ["sn", "cpu_milli", "memory_mib", "gpu", "model"]
POD_HEADER = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
              "creation_time", "deletion_time", "scheduled_time"]
#: cells a malformed trace may have where a number belongs
ODD_NUMBERS = ["", "-1", "x", "1.0", "2.5", "1_0", "\u0663", "\u00b2", " 7", "+3", "00"]


def read(folder: Path, fast: bool, **kw: Any) -> tuple[str, Any]:
    """What the reader gives: ("ok", a picture of the trace) or ("error", the message)."""
    old = trace_rows.ENABLED
    trace_rows.ENABLED = fast
    try:
        tr = read_alibaba_gpu(folder, **kw)
    except InputError as e:
        return "error", str(e)
    finally:
        trace_rows.ENABLED = old
    nodes = [(n.node, n.group, n.gpus, n.gpu_model) for n in tr.nodes]
    specs: dict[int, int] = {}
    arrivals = [(a.time, a.pod, a.duration, a.owner, a.source, a.usage,
                 specs.setdefault(id(a.pod.spec), len(specs))) for a in tr.arrivals]
    return "ok", (nodes, arrivals)


def same_both_ways(folder: Path, **kw: Any) -> tuple[str, Any]:
    plain, fast = read(folder, False, **kw), read(folder, True, **kw)
    assert fast == plain
    return fast


def write(folder: Path, nodes: str, pods: str) -> Path:
    (folder / "openb_node_list_all_node.csv").write_text(nodes)
    (folder / "openb_pod_list_default.csv").write_text(pods)
    return folder


def odd(rng: random.Random, usual: str, p: float = 0.004) -> str:
    return rng.choice(ODD_NUMBERS) if rng.random() < p else usual


def random_trace(rng: random.Random) -> tuple[str, str]:
    """A small trace in the openb layout, columns shuffled or left out at times, with now and
    then an odd cell, a blank line, a row too short or too long."""
    lines = [",".join(NODE_HEADER)]
    for k in range(rng.randint(1, 12)):
        gpu = rng.choice(["0", "2", "8"])
        row = [odd(rng, f"n{k}" if rng.random() > 0.003 else "bad name!"), odd(rng, rng.choice(["32000", "64000"])),
               odd(rng, rng.choice(["262144", "131072"])), odd(rng, gpu), rng.choice(["", "T4", "V100"])]
        lines.append(",".join(row))
    nodes = "\n".join(lines) + "\n"
    header = [c for c in POD_HEADER if c in POD_HEADER[:5] or rng.random() > 0.2]
    rng.shuffle(header)
    lines = [",".join(header)]
    t = 0
    for k in range(rng.randint(0, 40)):
        t += rng.randint(0, 50)
        ngpu = rng.choice(["0", "1", "1", "2"])
        cells = {"name": f"p{k}" if rng.random() > 0.003 else "", "cpu_milli": odd(rng, rng.choice(["1000", "4000"])),
                 "memory_mib": odd(rng, rng.choice(["1024", "8192"])), "num_gpu": odd(rng, ngpu),
                 "gpu_milli": odd(rng, rng.choice(["500", "1000"]) if ngpu == "1" else rng.choice(["0", ""])),
                 "gpu_spec": rng.choice(["", "T4"]), "qos": rng.choice(["", "LS", "BE"]), "pod_phase": "Running",
                 "creation_time": odd(rng, str(t)), "deletion_time": odd(rng, rng.choice(["", str(t + 100), str(t + 100), str(t - 1) if rng.random() < 0.1 else ""])),
                 "scheduled_time": str(t)}
        row = [cells[c] for c in header]
        if rng.random() < 0.005:
            row.append("extra")
        elif rng.random() < 0.005:
            row.pop()
        if rng.random() < 0.05:
            lines.append("")
        lines.append(",".join(row))
    return nodes, "\n".join(lines) + "\n"


@pytest.mark.skipif(not TRACE.exists(), reason="shared trace data not present")
def test_the_real_trace_reads_the_same_both_ways():
    kind, _ = same_both_ways(TRACE)
    assert kind == "ok"


@pytest.mark.skipif(not TRACE.exists(), reason="shared trace data not present")
def test_the_real_trace_with_deletions_and_a_limit_reads_the_same_both_ways():
    kind, (_, arrivals) = same_both_ways(TRACE, deletions=True, limit=3000)
    assert kind == "ok" and len(arrivals) == 3000 and any(a[2] is not None for a in arrivals)


def test_pods_of_one_shape_share_its_spec_under_their_own_names(tmp_path):
    pods = ",".join(POD_HEADER) + "\np0,4000,8192,1,500,T4,LS,Running,0,9,0\np1,4000,8192,1,500,T4,LS,Running,5,9,5\n"
    kind, (_, arrivals) = same_both_ways(write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1,T4\n", pods))
    assert kind == "ok" and arrivals[0][6] == arrivals[1][6]
    assert (arrivals[0][1].metadata.name, arrivals[1][1].metadata.name) == ("p0", "p1")


def test_nodes_of_one_kind_keep_their_own_names_and_labels(tmp_path):
    nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,1024,2,T4\nn1,32000,1024,2,T4\n"
    kind, (got, _) = same_both_ways(write(tmp_path, nodes, ",".join(POD_HEADER) + "\n"))
    assert kind == "ok"
    assert [n[0].metadata.labels["kubernetes.io/hostname"] for n in got] == ["n0", "n1"]
    assert got[0][0].status is got[1][0].status   # decoded once


def test_the_fast_reader_is_on_by_default():
    assert trace_rows.ENABLED


def test_a_bad_cell_in_a_row_of_a_known_shape_is_the_same_error(tmp_path):
    pods = (",".join(POD_HEADER) + "\np0,1000,1024,0,0,,LS,Running,0,,0\n\n\np1,1000,1024,0,0,,LS,Running,later,,0\n")
    kind, message = same_both_ways(write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\n", pods))
    assert kind == "error" and "openb_pod_list_default.csv: line 5: creation_time" in message


def test_a_deletion_before_the_creation_is_the_same_error(tmp_path):
    pods = ",".join(POD_HEADER) + "\np0,1000,1024,0,0,,LS,Running,0,5,0\np1,1000,1024,0,0,,LS,Running,9,5,0\n"
    kind, message = same_both_ways(write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\n", pods),
                                   deletions=True)
    assert kind == "error" and "line 3: deletion_time: Invalid value: 5" in message


def test_a_row_too_long_just_past_the_limit_is_the_same_error(tmp_path):
    pods = ",".join(POD_HEADER) + "\np0,1000,1024,0,0,,LS,Running,0,,0\np1,1000,1024,0,0,,LS,Running,0,,0,extra\n"
    kind, message = same_both_ways(write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\n", pods), limit=1)
    assert kind == "error" and "line 3: 12 fields, the header has 11" in message


def test_an_empty_pod_list_is_the_same_error(tmp_path):
    kind, message = same_both_ways(write(tmp_path, "sn,cpu_milli,memory_mib,gpu,model\n", ""))
    assert kind == "error" and "empty file" in message


@pytest.mark.parametrize("seed", range(150))
def test_random_traces_read_the_same_both_ways(tmp_path, seed):
    rng = random.Random(seed)
    nodes, pods = random_trace(rng)
    same_both_ways(write(tmp_path, nodes, pods), deletions=rng.random() < 0.5,
                   limit=rng.choice([None, None, 5]))
