"""The report's CPU section: throttling and CPU pressure over time, per node and per pod."""

from __future__ import annotations

from kubetwin.report.html import render_html
from kubetwin.report.sections.cpu import render_cpu
from kubetwin.sim import simulate


def run(tmp_path, kit, usage):
    w = kit.workload("w", cpu="1", memory="1Gi", limits=True, usage=usage, duration="2m")
    return simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="4")], "sampleInterval": "10s",
                                            "workloads": [w]}))


def test_the_report_shows_throttling_and_pressure_per_node_and_per_pod(tmp_path, kit):
    page = render_html([run(tmp_path, kit, {"cpu": "2"})])
    assert "CPU: throttling and pressure" in page
    assert "cpu.pressure some avg10 per node (%)" in page and "cpu.pressure some avg10 per pod (%)" in page
    assert "<td>default/w-0</td><td class=l>c</td><td>100000 100000</td>" in page


def test_a_run_without_cpu_curves_has_no_cpu_section(tmp_path, kit):
    assert render_cpu(run(tmp_path, kit, {"memory": "512Mi"})) == ""
