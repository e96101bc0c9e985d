"""Reports: HTML is self-contained and renders; Prometheus text parses; the CLI writes them all."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubetwin.report.html import render_html
from kubetwin.report.prometheus import render_metrics
from kubetwin.sim import load_scenario, simulate

SCENARIO = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "r"},
            "spec": {"nodeGroups": [{"name": "n", "count": 2, "machine": "1s2n4c2t",
                                     "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}}],
                     "workloads": [{"name": "w", "count": 6, "arrival": {"interval": "10s"},
                                    "template": {"spec": {"containers": [{"name": "c", "resources": {
                                        "requests": {"cpu": "2", "memory": "1Gi"},
                                        "limits": {"cpu": "2", "memory": "1Gi"}}}]}}}]}}


@pytest.fixture
def result(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SCENARIO))
    return simulate(load_scenario(p))


def test_html_needs_no_network(result):
    page = render_html([result])
    assert "<svg" in page and "Per-node NUMA maps" in page
    assert not re.search(r"(src|href)=[\"']?https?://", page)
    assert "<script" not in page


def test_html_compares_runs_side_by_side(result):
    page = render_html([result, result])
    assert page.count("<th>r</th>") == 2


def test_prometheus_text_has_help_type_and_samples(result):
    text = render_metrics([result])
    assert "# TYPE kubetwin_sim_pods gauge" in text
    assert 'kubetwin_sim_pods{scenario="r",phase="Running"} 6' in text
    for line in text.splitlines():
        assert line.startswith("#") or re.match(r'^[a-z_]+(\{[^}]*\})? [-0-9.e+]+$', line), line


def test_json_results_have_placements_and_time_series(result):
    data = result.to_json()
    assert data["kind"] == "SimulationResult"
    assert all(p["node"] for p in data["pods"]) and data["timeSeries"]
    json.dumps(data)


def _kubetwin() -> list[str]:
    exe = Path(sys.executable).parent / "kubetwin"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kubetwin"]


def test_simulate_without_arguments_runs_the_default_scenario_and_writes_only_the_files_asked_for(tmp_path):
    out = subprocess.run(_kubetwin() + ["simulate", "--no-progress", "--json", "r.json", "--metrics", "m.prom"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["scheduled"] > 0
    assert "kubetwin_sim_pods" in (tmp_path / "m.prom").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.prom", "r.json"]


def test_simulate_writes_the_html_report_when_asked(tmp_path):
    out = subprocess.run(_kubetwin() + ["simulate", "--no-progress", "--report", "r.html"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000
    assert out.stdout.rstrip().endswith("report: r.html")


def test_simulate_bad_scenario_exits_1_naming_file_and_field(tmp_path):
    bad = dict(SCENARIO, spec={"nodeGroups": [{"name": "g", "count": "many", "capacity": {"cpu": "1"}}]})
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    out = subprocess.run(_kubetwin() + ["simulate", "bad.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1
    assert "bad.yaml" in out.stderr and "spec.nodeGroups[0].count" in out.stderr


def test_simulate_bad_variant_exits_1(tmp_path):
    out = subprocess.run(_kubetwin() + ["simulate", "--variant", "x:kubelet", "--report", "-"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 1 and "--variant[0]" in out.stderr


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed")
def test_the_report_renders_in_headless_chromium(tmp_path, result):
    page = tmp_path / "report.html"
    page.write_text(render_html([result]))
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--no-first-run", f"--user-data-dir={profile}", "--window-size=1200,1600",
                    f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=90)
    assert shot.exists() and shot.stat().st_size > 20_000
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          "--no-first-run", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=90).stdout
    assert "At a glance" in dom and "Over time" in dom


PRESSURE = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "p"},
            "spec": {"sampleInterval": "10s", "horizon": "10m",
                     "nodeGroups": [{"name": "n", "count": 2, "capacity": {"cpu": "4", "memory": "8Gi"}}],
                     "workloads": [{"name": "hog", "usage": {"memory": [["0s", "1Gi"], ["2m", "7.95Gi"]]},
                                    "template": {"spec": {"containers": [{"name": "c", "resources": {
                                        "requests": {"cpu": "1", "memory": "1Gi"}}}]}}},
                                   {"name": "leak", "usage": {"memory": [["0s", "0"], ["30s", "1Gi"]]},
                                    "template": {"spec": {"containers": [{"name": "c", "resources": {
                                        "requests": {"cpu": "1", "memory": "512Mi"},
                                        "limits": {"cpu": "1", "memory": "512Mi"}}}]}}}]}}


def test_evictions_and_oom_kills_reach_every_report(tmp_path):
    from kubetwin.report.terminal import render_summary

    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(PRESSURE))
    r = simulate(load_scenario(p))
    assert r.counters.evicted == 1 and r.counters.oom_killed >= 1
    page = render_html([r])
    assert "Node pressure" in page and "The node was low on resource: memory." in page
    assert "OOM kills (cumulative)" in page and "nodes under memory pressure" in page
    metrics = render_metrics([r])
    assert 'kubetwin_sim_evictions_total{scenario="p",signal="memory.available"} 1' in metrics
    assert re.search(r'kubetwin_sim_oom_kills_total\{scenario="p"\} [1-9]', metrics)
    events = r.to_json()["events"]
    assert {e["type"] for e in events} >= {"Evicted", "OOMKilled", "NodeConditions"}
    import io

    from rich.console import Console

    buf = io.StringIO()
    render_summary([r], Console(file=buf, width=120))
    out = buf.getvalue()
    assert "OOM kills" in out and "evicted: memory.available" in out


# --- variants, deltas, labels, per-pod table, DRA devices -------------------------------------------------------------
def _variant_result(result, name="x", changes=("kubelet.cpuManagerPolicy=none",)):
    import dataclasses

    return dataclasses.replace(result, scenario=f"{result.scenario}:{name}", variant=name, changes=tuple(changes))


def test_a_variant_is_compared_with_the_run_of_the_same_workload_without_variant(result):
    from kubetwin.sim.results import baseline_of

    variant = _variant_result(result)
    assert baseline_of([result, variant]) == [None, result]


def test_terminal_summary_shows_deltas_to_the_baseline_and_what_the_variant_changed(result):
    import dataclasses
    import io

    from rich.console import Console

    from kubetwin.report.terminal import render_summary

    variant = _variant_result(dataclasses.replace(result, pods=result.pods[:-2]))
    buf = io.StringIO()
    render_summary([result, variant], Console(file=buf, width=160))
    out = buf.getvalue()
    assert re.search(r"│ pods +│ +6 │ +4 \(−2\) │", out), out
    assert "r:x: kubelet.cpuManagerPolicy=none (compared with r)" in out


def test_figures_are_labelled_end_of_run_or_time_average(result):
    import io

    from rich.console import Console

    from kubetwin.report.terminal import render_summary

    buf = io.StringIO()
    render_summary([result], Console(file=buf, width=160))
    out = buf.getvalue()
    for label in ("running at the end", "running, time average", "cpu requested / allocatable, at the end",
                  "cpu requested / allocatable, time average", "pending at the end"):
        assert label in out
    page = render_html([result])
    assert "cpu requested / allocatable, time average" in page and "<i>at the end</i>" in page


def test_time_average_holds_each_sample_until_the_next(result):
    import dataclasses

    from kubetwin.sim.results import Sample

    samples = [Sample(0, 2, 0, {}), Sample(10, 4, 0, {}), Sample(40, 0, 0, {})]
    r = dataclasses.replace(result, samples=samples)
    assert r.time_average(lambda s: s.running) == (2 * 10 + 4 * 30) / 40


def test_html_report_lists_variants_with_their_changes_and_deltas(result):
    page = render_html([result, _variant_result(result)])
    assert "<h2>Variants</h2>" in page and "kubelet.cpuManagerPolicy=none" in page
    assert "(=)" in page  # an unchanged figure says so


def test_html_report_has_a_per_pod_table_with_placement_phase_reason_and_message(result):
    page = render_html([result])
    assert "<h2>Pods — r</h2>" in page
    assert "<th>placement</th><th>phase</th><th>reason</th><th>message</th>" in page
    assert "cpus " in page  # the static CPU manager's exclusive CPUs are part of the placement


def test_pods_that_did_not_run_come_first_in_the_pod_table(tmp_path):
    from kubetwin.report.terminal import pod_rows

    spec = yaml.safe_load(yaml.safe_dump(SCENARIO))
    spec["spec"]["workloads"][0]["count"] = 30   # more than the two nodes hold
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(spec))
    rows = pod_rows(simulate(load_scenario(p)))
    phases = [r["phase"] for r in rows]
    assert phases[0] != "Running" and phases[-1] == "Running"


def test_dra_devices_in_use_are_shown_per_node(tmp_path):
    out = subprocess.run(_kubetwin() + ["simulate", "--no-progress", "--json", "r.json", "--report", "r.html"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    nodes = json.loads((tmp_path / "r.json").read_text())["nodes"]
    with_dra = [n for n in nodes if n["dra_devices"]]
    assert with_dra and all(set(n["dra_allocated"]) <= set(n["dra_devices"]) for n in with_dra)
    page = (tmp_path / "r.html").read_text()
    assert "(DRA)" in page and "DRA gpu:" in page


def test_simulate_json_alone_writes_only_the_json(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SCENARIO))
    out = subprocess.run(_kubetwin() + ["simulate", "-f", "s.yaml", "--json", "r.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json", "s.yaml"]


def test_several_runs_report_their_progress_on_stderr(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(SCENARIO))
    out = subprocess.run(_kubetwin() + ["simulate", "-f", "s.yaml", "--variant", "x:kubelet.cpuManagerPolicy=none",
                                        "-j", "1", "-o", "json"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "run 1/2 finished: r" in out.stderr and "run 2/2 finished: r:x" in out.stderr
    runs = json.loads(out.stdout)["runs"]
    assert runs[1]["variant"] == {"name": "x", "changes": ["kubelet.cpuManagerPolicy=none"]}
