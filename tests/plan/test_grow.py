"""Growing a mix when no type alone runs the workload: pods held to their types, then shrunk."""

from __future__ import annotations

from pathlib import Path

from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.search import plan
from kubetwin.plan.workload import read_workload

from .conftest import deployment, write


def _two_pools(folder: Path):
    gpu = deployment("train", replicas=3, cpu="4", memory="1Gi",
                     extra={"nodeSelector": {"pool": "gpu"},
                            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]})
    web = deployment("web", replicas=6, cpu="4", memory="1Gi")
    return read_workload([write(folder, "w.yaml", gpu, web)])


def _types():
    return [parse_node_type("gpu=1s1n4c2t:mem=32Gi,labels=pool=gpu,taints=gpu=true:NoSchedule,price=3"),
            parse_node_type("cpu=1s1n4c2t:mem=32Gi,price=1")]


def test_pods_held_to_different_types_get_a_mix_of_both(folder: Path) -> None:
    p = plan(_two_pools(folder), _types(), scheduler_only=False)
    assert p.best is not None and dict(p.best.mix) == {"gpu": 2, "cpu": 3}   # 8 CPUs a node: two pods each


def test_a_grown_mix_is_searched_below_for_a_cheaper_one(folder: Path) -> None:
    p = plan(_two_pools(folder), _types(), scheduler_only=False)
    assert p.exhaustive and not p.too_many_mixes


def test_no_mix_when_a_pod_fits_no_type(folder: Path) -> None:
    gpu_only = deployment("train", replicas=1, cpu="1", memory="1Gi", extra={"nodeSelector": {"pool": "tpu"}})
    wl = read_workload([write(folder, "w.yaml", gpu_only)])
    p = plan(wl, _types(), scheduler_only=False)
    assert p.best is None
