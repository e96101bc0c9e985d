"""The report's I/O pressure by Block I/O class (kubetwin.report.sections.blockio): throttling by
class per node, and each container's class with its cgroup lines."""

from __future__ import annotations

from kubetwin.report.html import render_html
from kubetwin.report.sections.blockio import render_blockio


class _Result:
    scenario = "t"
    blockio = {
        "pods": {"default/etl-0": [{"container": "etl", "node": "io-0", "blockioClass": "throttled",
                                    "origin": "annotation",
                                    "files": {"io.max": "8:0 rbps=41943040 wbps=10485760 riops=max wiops=max"}}]},
        "nodes": {"io-0": {"disk": {"name": "sda", "device": "8:0", "scheduler": "bfq"},
                           "classes": [{"class": "throttled", "weight": 50,
                                        "ioMax": "8:0 rbps=41943040 wbps=10485760 riops=max wiops=max",
                                        "containers": 2, "throttledSeconds": 600.0, "throttledBytes": 3 << 20,
                                        "contendedBytes": 0}]}}}


def test_the_section_shows_throttling_by_class_per_node():
    page = render_blockio(_Result())
    assert "I/O pressure by Block I/O class — t" in page
    assert "<td>throttled</td><td>50</td><td><code>8:0 rbps=41943040" in page and "<td>600</td><td>3.0</td>" in page


def test_the_section_shows_each_containers_class_and_cgroup_lines():
    page = render_blockio(_Result())
    assert "<td>default/etl-0</td><td>etl</td><td>io-0</td><td>throttled</td><td>annotation</td>" in page


def test_a_run_without_block_io_classes_has_no_section():
    class Plain:
        scenario = "t"
        blockio = None

    assert render_blockio(Plain()) == ""


def test_the_report_page_carries_the_section(tmp_path):
    from tests.sim.test_blockio import _run, _workload

    r = _run(tmp_path, [_workload("w", "80Mi", {"blockio.resources.beta.kubernetes.io/pod": "throttled"})])
    assert "I/O pressure by Block I/O class — bio" in render_html([r])


def test_the_per_pod_table_shows_each_containers_class_and_cgroup_lines():
    from kubetwin.report.terminal import pod_rows

    class _Pod:
        name, namespace, node, phase, reason, message, arrival = "etl-0", "default", "io-0", "Running", "", "", 0.0
        cpus = mems = ""
        gpus = None
        claims: list = []

    class _Run(_Result):
        pods = [_Pod()]

    row = pod_rows(_Run())[0]
    assert row["placement"] == ("blockio etl=throttled (io.max: 8:0 rbps=41943040 wbps=10485760 riops=max "
                                "wiops=max)")
