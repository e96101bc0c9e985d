"""The report's memory and I/O pressure section: memory.pressure and io.pressure over time, per
node and per pod."""

from __future__ import annotations

from kubetwin.report.html import render_html
from kubetwin.report.sections.stalls import render_stalls
from kubetwin.sim import simulate


def _scenario(tmp_path, spec):
    import yaml

    from kubetwin.sim.scenario import load_scenario

    docs = [{"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "t"}, "spec": spec}]
    p = tmp_path / "scenario.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    return load_scenario(p)


def _workload(name, usage):
    res = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
    return {"name": name, "count": 1, "duration": "12m", "usage": usage,
            "template": {"spec": {"containers": [{"name": "c", "resources": res}]}}}


def run(tmp_path, usage, **group):
    g = {"name": "n", "count": 1, "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, **group}
    return simulate(_scenario(tmp_path, {"nodeGroups": [g], "sampleInterval": "10s",
                                         "workloads": [_workload("a", usage), _workload("b", usage)]}))


def test_the_report_shows_memory_pressure_per_node_and_per_pod(tmp_path):
    r = run(tmp_path, {"memory": [["0s", "1Gi"], ["10m", "1990Mi"]]},
            kubeletConfig={"featureGates": {"MemoryQoS": True}})
    page = render_html([r])
    assert "Memory pressure — t" in page
    assert "memory.pressure some avg10 per node (%)" in page and "memory.pressure some avg10 per pod (%)" in page
    assert "<td>default/a-0</td><td>c</td>" in page and "memory.high 2040107008" in page


def test_the_report_shows_io_pressure_when_the_disk_is_contended(tmp_path):
    page = render_stalls(run(tmp_path, {"io": "80Mi"}, disk={"nodefs": "100Gi", "ioBandwidth": "100Mi"}))
    assert "I/O pressure — t" in page and "io.pressure some avg10 per pod (%)" in page
    assert "Memory pressure" not in page


def test_a_run_in_which_nothing_stalled_has_no_pressure_section(tmp_path):
    assert render_stalls(run(tmp_path, {"memory": "1Gi"})) == ""


def test_the_terminal_summary_has_a_row_for_peak_memory_and_io_pressure():
    from kubetwin.report.terminal import summary_rows

    base = {"oomKilled": 0, "recreated": 0, "utilization": {}, "gpuFragmentation": 0}
    rows = {label: (f, kind) for label, f, kind in summary_rows(
        [{**base, "memoryPressure": {"peakNodeMemorySomeAvg10": 12.5}, "ioPressure": {"peakNodeIOSomeAvg10": 37.0}}])}
    f, kind = rows["peak node memory.pressure some avg10"]
    assert (f({"memoryPressure": {"peakNodeMemorySomeAvg10": 12.5}}), kind) == (0.125, "%")
    assert rows["peak node io.pressure some avg10"][0]({"ioPressure": {"peakNodeIOSomeAvg10": 37.0}}) == 0.37


def test_the_report_names_the_pod_level_memory_high_a_pod_is_throttled_by(tmp_path):
    w = {"name": "p", "count": 1, "duration": "12m",
         "usage": {"containers": {"a": {"memory": [["0s", "512Mi"], ["10m", "1500Mi"]]}, "b": {"memory": "500Mi"}}},
         "template": {"spec": {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
                               "containers": [{"name": n, "resources": {"requests": {"memory": "512Mi"}}}
                                              for n in ("a", "b")]}}}
    g = {"name": "n", "count": 1, "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
         "kubeletConfig": {"featureGates": {"MemoryQoS": True}, "memoryThrottlingFactor": 0.9}}
    r = simulate(_scenario(tmp_path, {"nodeGroups": [g], "sampleInterval": "10s", "workloads": [w],
                                      "kubernetesVersion": "1.37"}))
    page = render_stalls(r)
    assert "<td>default/p-0</td><td>a</td>" in page and "pod memory.high 2040107008" in page
