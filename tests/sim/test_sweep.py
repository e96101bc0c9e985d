"""Sweeps: several runs in parallel, on local processes or on a Dask cluster."""

from __future__ import annotations

import pytest

from kubetwin.sim.sweep import RunSpec, parse_variant, run_all


def _specs(tmp_path, kit):
    kit.scenario(tmp_path, {"nodeGroups": [{"name": "n", "count": 2, "machine": "1s2n4c2t",
                                            "kubeletConfig": {"cpuManagerPolicy": "static",
                                                              "topologyManagerPolicy": "single-numa-node",
                                                              "kubeReserved": {"cpu": "1"}}}],
                            "workloads": [kit.workload(count=6, cpu="5", limits=True)]})
    src = ("file", str(tmp_path / "scenario.yaml"))
    return [RunSpec(src), RunSpec(src, parse_variant("none:kubelet.topologyManagerPolicy=none"))]


def test_runs_on_a_local_dask_cluster_match_local_runs(tmp_path, kit):
    distributed = pytest.importorskip("dask.distributed")
    specs = _specs(tmp_path, kit)
    local = run_all(specs, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_all(specs, dask_address=cluster.scheduler_address)
    assert [r.scenario for r in remote] == ["t", "t:none"]
    assert [r.summary()["rejectedByKubelet"] for r in remote] == [r.summary()["rejectedByKubelet"] for r in local]
    assert [[(p.name, p.node, p.cpus) for p in r.pods] for r in remote] == \
        [[(p.name, p.node, p.cpus) for p in r.pods] for r in local]


def test_dask_workers_get_the_scenario_content_not_its_path(tmp_path, kit, monkeypatch):
    """Workers on other machines cannot read the client's files: every scenario is loaded on
    the client and the loaded scenario is what a task carries."""
    import threading

    import kubetwin.sim.sweep as sweep

    distributed = pytest.importorskip("dask.distributed")
    specs = _specs(tmp_path, kit)
    loaded_in: list[str] = []
    real = sweep.load_run

    def spy(spec):
        loaded_in.append(threading.current_thread().name)
        return real(spec)

    monkeypatch.setattr(sweep, "load_run", spy)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        results = run_all(specs, dask_address=cluster.scheduler_address)
    assert loaded_in == [threading.main_thread().name] * 2
    assert [r.scenario for r in results] == ["t", "t:none"]


def test_variants_change_only_what_they_name(tmp_path, kit):
    specs = _specs(tmp_path, kit)
    base, none = run_all(specs, jobs=1)
    assert base.summary()["rejectedByKubelet"] == {"TopologyAffinityError": 2}   # a third pod per node spans NUMA
    assert none.summary()["rejectedByKubelet"] == {}
