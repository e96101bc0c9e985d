"""One mix simulated: fits only when every pod runs; failures put down to their binding constraint."""

from __future__ import annotations

from pathlib import Path

from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.trial import constraints_of, run_trial
from kubetwin.plan.workload import read_workload

from .conftest import deployment, write


def _numa(folder: Path):
    return parse_node_type("numa=1s2n4c2t:mem=64Gi,kubelet=kubelet-numa.yaml", root=folder)


def test_a_mix_fits_when_every_pod_runs(folder: Path) -> None:
    t = run_trial(read_workload([folder / "web.yaml"]), [_numa(folder)], (4,))
    assert t.fits and t.pods == 8 and not t.failures


def test_kubelet_rejections_make_a_mix_not_fit(folder: Path) -> None:
    t = run_trial(read_workload([folder / "web.yaml"]), [_numa(folder)], (3,))
    assert not t.fits
    assert {f.reason for f in t.failures} == {"TopologyAffinityError"}
    assert t.short == (("Deployment/default/web", 6, 8),)


def test_without_kubelet_admission_the_scheduler_alone_decides(folder: Path) -> None:
    assert run_trial(read_workload([folder / "web.yaml"]), [_numa(folder)], (3,), kubelet=False).fits


def test_unschedulable_pods_name_the_scheduler_reason(tmp_path: Path) -> None:
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=3, cpu="10", memory="1Gi"))])
    t = run_trial(wl, [parse_node_type("a=1s1n8c2t:mem=64Gi")], (2,))
    assert [(f.phase, f.constraints) for f in t.failures] == [("Pending", ("cpu",))]


def test_constraints_are_read_from_the_reasons() -> None:
    assert constraints_of("Insufficient memory, Too many pods") == ["memory", "pod count"]
    assert constraints_of("TopologyAffinityError") == ["NUMA alignment"]
    assert constraints_of("didn't match pod anti-affinity rules") == ["pod anti-affinity"]
    assert constraints_of("didn't match pod topology spread constraints") == ["topology spread"]
    assert constraints_of("Insufficient example.com/gpu") == ["devices"]
    assert constraints_of("something new") == ["other"]
