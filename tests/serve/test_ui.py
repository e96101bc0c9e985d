"""Specifications of the web UI of ``kubetwin serve``, end to end: a real ``kubetwin serve`` on a
free loopback port, the page in headless Chromium (Debian's, through Playwright's
``executable_path``; never a downloaded browser). Each view shows the names and figures of the
JSON API, tables search, sort and filter, links lead overview → node → pod, errors are messages,
the page asks nothing of any host but the server, and each view's screenshot is not blank.

Skipped, not failed, where Playwright or Chromium is missing (``.ci/run`` installs Debian's
chromium when it runs as root)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from .cluster_fixture import SCENARIO
from .png import distinct_colours

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install '.[test]')")

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).is_file()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")

#: the serve tests' cluster, and a pod no node can hold (its Filter table has failures)
UI_SCENARIO = SCENARIO + """\
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: batch, uid: huge-uid}
spec:
  containers:
  - {name: c, image: x, resources: {requests: {cpu: "64", memory: 1Gi}}}
"""

#: every view, with a text it must show
VIEWS = [("/overview", "numa-0"), ("/nodes/numa-0", "NUMA node 1"), ("/pods/default/running", "Topology Manager hints"),
         ("/pods/default/waiting", "Score"), ("/pending", "batch/huge"), ("/simulations", "Start a simulation"),
         ("/what-if", "Schedule it")]


class Served:
    def __init__(self, proc: subprocess.Popen[str], base: str):
        self.proc, self.base = proc, base

    def json(self, path: str, token: str | None = None) -> Any:
        req = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)


#: a node whose memory manager is Static: memory blocks per NUMA node, per container
MEMORY_SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: memory}
spec:
  nodeGroups:
  - name: mm
    count: 1
    machine: 2s2n8c2t
    kubeletConfig: {cpuManagerPolicy: static, memoryManagerPolicy: Static, topologyManagerPolicy: single-numa-node,
                    reservedSystemCPUs: "0", kubeReserved: {memory: 924Mi}, evictionHard: {memory.available: 100Mi},
                    reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default, uid: db-uid}
spec:
  nodeName: mm-0
  containers:
  - {name: db, image: x, resources: {requests: {cpu: "4", memory: 4Gi}, limits: {cpu: "4", memory: 4Gi}}}
  - {name: side, image: x, resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}}
"""


def _serve(folder: Path, *extra: str, scenario: str = UI_SCENARIO) -> Iterator[Served]:
    (folder / "scenario.yaml").write_text(scenario)
    kubetwin = str(Path(sys.executable).parent / "kubetwin")
    proc = subprocess.Popen([kubetwin, "serve", "--cluster", str(folder / "scenario.yaml"), "--port", "0", *extra],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert port, line
        yield Served(proc, f"http://127.0.0.1:{port.group(1)}")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Page:
    """A browser page that lets only the server's own address through and keeps what went wrong."""

    def __init__(self, browser: Any, base: str):
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 860})
        self.requests: list[str] = []
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith(self.base + "/") or url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, hash_route: str) -> Any:
        self.page.goto(f"{self.base}/ui/#{hash_route}")
        return self.ready()

    def ready(self) -> Any:
        self.page.wait_for_selector("#view[data-state=ready]", timeout=60_000)
        return self.page

    def rows(self, table: str) -> list[str]:
        return self.page.locator(f"#{table} tbody tr").all_inner_texts()

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser: Any, served: Served) -> Iterator[Page]:
    p = Page(browser, served.base)
    yield p
    p.close()
    assert not p.outside, f"requests outside the server: {p.outside}"
    assert not p.errors, f"errors in the page: {p.errors}"


def first_cells(p: Page, table: str) -> list[str]:
    return [r.split("\t")[0].strip() for r in p.rows(table)]


# --- the overview ----------------------------------------------------------------------------

def test_the_overview_lists_every_node_of_the_api(page, served):
    page.open("/overview")
    assert first_cells(page, "nodes") == sorted(n["name"] for n in served.json("/api/v1/cluster")["nodes"])


def test_the_overview_shows_the_clusters_pod_counts(page, served):
    p = page.open("/overview")
    data = served.json("/api/v1/cluster")
    assert p.inner_text("[data-stat=running] .stat-value") == str(data["runningPods"])
    assert p.inner_text("[data-stat=pending] .stat-value") == str(data["pendingPods"])


def test_the_overview_shows_requested_over_allocatable_cpu(page):
    page.open("/overview")
    row = next(r for r in page.rows("nodes") if r.startswith("numa-0"))
    assert "4 / 7" in row      # the running 4-CPU pod; 8 CPUs less the reserved one


def test_the_overview_totals_the_rows_shown(page):
    p = page.open("/overview")
    assert "Total (3 nodes)" in p.inner_text("#nodes tfoot")
    p.fill("[data-table=nodes] [data-role=search]", "numa")
    assert "Total (2 nodes)" in p.inner_text("#nodes tfoot")


def test_a_search_filters_the_table(page):
    p = page.open("/overview")
    p.fill("[data-table=nodes] [data-role=search]", "plain")
    assert first_cells(page, "nodes") == ["plain-0"]
    assert p.inner_text("[data-table=nodes] [data-role=count]") == "1 of 3 rows"


def test_a_click_on_a_header_sorts_and_a_second_click_reverses(page):
    p = page.open("/overview")
    header = p.locator("#nodes th[data-key=name]")
    assert first_cells(page, "nodes") == ["numa-0", "numa-1", "plain-0"]
    header.click()
    assert first_cells(page, "nodes") == ["plain-0", "numa-1", "numa-0"]
    assert header.get_attribute("aria-sort") == "descending"


def test_a_numeric_column_sorts_by_its_amount(page):
    p = page.open("/overview")
    p.click("#nodes th[data-key='res:cpu']")      # the largest request first
    assert first_cells(page, "nodes")[0] == "numa-0"


def test_a_column_filter_keeps_the_rows_with_its_value(page):
    p = page.open("/overview")
    p.select_option("[data-table=nodes] select[data-filter=kubelet]", "not modelled")
    assert first_cells(page, "nodes") == ["plain-0"]


# --- navigation and the node's NUMA map ------------------------------------------------------

def test_overview_to_node_to_pod(page):
    p = page.open("/overview")
    p.click("#nodes >> text=numa-0")
    page.ready()
    assert p.inner_text("h1") == "numa-0" and "#/nodes/numa-0" in p.url
    p.click("#containers >> text=default/running")
    page.ready()
    assert p.inner_text("h1") == "default/running" and p.inner_text("[data-stat=phase] .stat-value") == "Running"


def test_the_numa_map_shows_each_cpu_with_its_holder(page, served):
    p = page.open("/nodes/numa-0")
    numa1 = next(r for r in served.json("/api/v1/nodes/numa-0")["kubelet"]["numaNodes"] if r["id"] == 1)
    assert numa1["exclusive"] == {"default/running/c": "4-7"}
    for cpu in range(4, 8):
        assert p.get_attribute(f".cpu[data-cpu='{cpu}']", "data-owner") == "default/running/c"
        assert p.locator(f"[data-numa='1'] .cpu[data-cpu='{cpu}']").count() == 1
    assert "reserved" in p.get_attribute(".cpu[data-cpu='0']", "class")
    assert p.get_attribute(".cpu[data-cpu='1']", "data-owner") == ""


def test_the_numa_map_groups_cpus_by_socket_and_numa_node(page):
    p = page.open("/nodes/numa-0")
    assert p.locator(".socket").count() == 1 and p.locator(".numa").count() == 2
    assert p.locator(".core").count() == 8


def test_a_node_without_a_kubelet_says_how_to_model_one(page):
    p = page.open("/nodes/plain-0")
    assert "no modelled kubelet" in p.inner_text("#view")


def test_the_numa_map_shows_the_memory_each_container_was_given_on_each_numa_node(browser, tmp_path):
    for served in _serve(tmp_path, scenario=MEMORY_SCENARIO):
        p = Page(browser, served.base)
        try:
            page = p.open("/nodes/mm-0")
            numa0 = next(r for r in served.json("/api/v1/nodes/mm-0")["kubelet"]["numaNodes"] if r["id"] == 0)
            assert numa0["memoryOwners"] == {"default/db/db memory": 4 << 30, "default/db/side memory": 1 << 30}
            text = page.inner_text("[data-numa='0'] .numa-memory")
            assert "default/db/db memory: 4Gi" in text and "default/db/side memory: 1Gi" in text
            assert "memory: 5Gi given to containers" in text
            assert "0 given to containers" in page.inner_text("[data-numa='1'] .numa-memory")
        finally:
            p.close()
        assert not p.outside and not p.errors


# --- the pod drill-down ----------------------------------------------------------------------

def test_a_pending_pods_filter_table_has_a_row_per_node_and_a_column_per_plugin(page, served):
    p = page.open("/pods/default/waiting")
    sched = served.json("/api/v1/pods/default/waiting")["scheduling"]
    assert sorted(first_cells(page, "filter")) == sorted(sched["nodes"])
    for plugin in sched["nodes"]["numa-0"]["filter"]:
        assert p.locator(f"#filter th[data-key='f:{plugin}']").count() == 1


def test_the_score_table_shows_each_nodes_total_and_marks_the_chosen_node(page, served):
    p = page.open("/pods/default/waiting")
    sched = served.json("/api/v1/pods/default/waiting")["scheduling"]
    totals = {n: v["total"] for n, v in sched["nodes"].items()}
    rows = {r.split("\t")[0].replace("chosen", "").strip(): r.split("\t")[-1].strip() for r in page.rows("score")}
    assert rows == {n: str(t) for n, t in totals.items()}
    assert p.inner_text("#score tr.chosen td:first-child").startswith(sched["node"])
    assert first_cells(page, "score")[0].startswith(max(totals, key=totals.get))     # sorted by total


def test_an_unschedulable_pods_filter_table_names_the_failing_plugin_and_its_reason(page, served):
    p = page.open("/pods/batch/huge")
    sched = served.json("/api/v1/pods/batch/huge")["scheduling"]
    assert sched["node"] is None
    assert p.inner_text("[data-role=message]") == sched["message"]
    fit = sched["nodes"]["numa-0"]["filter"]["NodeResourcesFit"]
    assert fit["reasons"][0] in p.inner_text("#filter")
    assert all(r.split("\t")[1].startswith("failed: NodeResourcesFit") for r in page.rows("filter"))


def test_a_running_pods_drill_down_shows_the_hints_per_manager_and_the_cgroup_values(page, served):
    p = page.open("/pods/default/running")
    d = served.json("/api/v1/pods/default/running")
    hints = p.inner_text("#hints")
    assert "cpu" in hints and "{1} preferred" in hints
    assert "4-7" in p.inner_text("#containers")
    for f in d["cgroups"]["podCgroup"]:
        assert f["file"] in p.inner_text("#cgroups")


def test_a_running_pods_drill_down_shows_its_cycle_as_if_scheduled_now_without_itself(page, served):
    p = page.open("/pods/default/running")
    r = served.json("/api/v1/pods/default/running")["rescheduled"]
    assert p.inner_text("[data-role=rescheduled-note]") == r["note"]
    assert sorted(first_cells(page, "filter")) == sorted(r["scheduling"]["nodes"])
    assert p.inner_text("#score tr.chosen td:first-child").startswith(r["chosenNode"])
    # numa-0 is the node it runs on; without the pod, numa-0's kubelet admits it again
    assert "admits" in next(row for row in page.rows("filter") if row.startswith("numa-0"))


def test_a_running_pods_page_says_whether_the_scheduler_would_pick_its_node_again(page, served):
    p = page.open("/pods/default/running")
    r = served.json("/api/v1/pods/default/running")["rescheduled"]
    text = p.inner_text("[data-role=same-node]")
    assert r["runsOn"] in text and r["chosenNode"] in text
    assert ("again" in text) == r["sameNode"]


DRA = {"claims": [{"claim": "default/running-gpu", "allocated": [{"request": "gpu", "driver": "gpu.example.com",
                                                                "pool": "numa-0", "device": "gpu-1"}],
                   "passedOver": [{"device": "gpu-0", "why": "attribute memory 16Gi < 40Gi (the request's selector)"}]}]}


def test_a_pods_dra_devices_are_shown_when_the_api_gives_them(page, served):
    body = served.json("/api/v1/pods/default/running")
    page.context.route("**/api/v1/pods/default/running",
                       lambda route: route.fulfill(json={**body, "dra": DRA}))
    p = page.open("/pods/default/running")
    text = p.inner_text("[data-role=dra]")
    assert "default/running-gpu" in text and "gpu-1" in text and "attribute memory 16Gi < 40Gi" in text


def test_without_dra_devices_the_pod_page_has_no_dra_part(page):
    p = page.open("/pods/default/running")
    assert p.locator("[data-role=dra]").count() == 0 and "DRA" not in p.inner_text("#view")


# --- pending pods and simulations ------------------------------------------------------------

def test_the_pending_view_shows_each_pod_with_the_schedulers_message(page, served):
    page.open("/pending")
    rows = page.rows("pending")
    for pod in served.json("/api/v1/pending")["pods"]:
        assert any(r.startswith(pod["pod"]) and pod["message"] in r for r in rows)


def test_a_simulation_started_from_the_page_shows_its_runs_side_by_side(page):
    p = page.open("/simulations")
    p.fill("textarea[name=variants]", "nopin:kubelet.cpuManagerPolicy=none,kubelet.topologyManagerPolicy=none")
    p.click("text=Start simulation")
    p.wait_for_selector("[data-view=simulation] [data-role=charts]", timeout=120_000)
    assert p.locator("[data-run=nopin] code").all_inner_texts() == ["kubelet.cpuManagerPolicy=none",
                                                                     "kubelet.topologyManagerPolicy=none"]
    heads = p.locator("#compare thead th").all_inner_texts()
    assert heads[1:3] == ["as loaded", "nopin"]
    exclusive = next(r for r in page.rows("compare") if r.startswith("exclusiveCpuPods"))
    assert exclusive.split("\t")[1:4] == ["1", "0", "differs"]
    assert p.locator("[data-role=charts] svg polyline[data-series=nopin]").count() == 5


def test_the_what_if_page_schedules_the_pod_given_and_shows_each_kubelets_verdict(page, served):
    p = page.open("/what-if")
    pod = {"metadata": {"name": "big", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {
               "requests": {"cpu": "5", "memory": "1Gi"}, "limits": {"cpu": "5", "memory": "1Gi"}}}]}}
    p.fill("textarea[name=pod]", json.dumps(pod))
    p.click("text=Schedule it")
    p.wait_for_selector("#score")
    rows = {r.split("\t")[0].strip(): r for r in page.rows("filter")}
    # numa-1 has 7 allocatable CPUs but 3 and 4 on its NUMA nodes: the scheduler passes it, its kubelet does not
    assert "passed" in rows["numa-1"] and "rejects: TopologyAffinityError" in rows["numa-1"]
    assert "failed: NodeResourcesFit" in rows["numa-0"] and "not modelled" in rows["plain-0"]
    assert p.inner_text("[data-role=message]").startswith("scheduled on ")


def test_a_what_if_pod_that_is_not_json_is_a_message(page):
    p = page.open("/what-if")
    p.fill("textarea[name=pod]", "{nope")
    p.click("text=Schedule it")
    assert "not JSON" in p.inner_text("[data-role=what-if-result] .error")


def test_a_what_if_pod_the_api_refuses_shows_the_field(page):
    p = page.open("/what-if")
    p.fill("textarea[name=pod]", json.dumps({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "imag": "x"}]}}))
    p.click("text=Schedule it")
    p.wait_for_selector("[data-role=what-if-result] .error")
    assert "400" in p.inner_text(".error") and "imag" in p.inner_text(".error")


# --- errors, privacy, pixels -----------------------------------------------------------------

def test_an_api_error_is_shown_as_a_message(page):
    p = page.open("/nodes/nope")
    assert "404" in p.inner_text(".error") and "not in the served cluster" in p.inner_text(".error")


def test_an_unknown_page_is_a_message(page):
    p = page.open("/nowhere")
    assert "No page /nowhere" in p.inner_text(".error")


def test_no_view_asks_anything_of_another_host(page):
    for route, _ in VIEWS:
        page.open(route)
    assert page.requests and all(u.startswith(page.base + "/") or u.startswith("data:") for u in page.requests)


def test_each_views_screenshot_shows_its_content(page, tmp_path):
    for route, text in VIEWS:
        p = page.open(route)
        assert text in p.inner_text("#view"), route
        shot = tmp_path / (route.strip("/").replace("/", "_") + ".png")
        p.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000, route
        assert distinct_colours(shot.read_bytes()) > 20, f"{route}: the screenshot is (nearly) one colour"


def test_with_a_token_the_page_asks_for_it_and_then_shows_the_cluster(browser, tmp_path):
    (tmp_path / "token").write_text("s3cret\n")
    for served in _serve(tmp_path, "--token-file", str(tmp_path / "token")):
        p = Page(browser, served.base)
        try:
            page = p.open("/overview")
            assert "401" in page.inner_text(".error")
            page.fill(".error input[type=password]", "s3cret")
            page.click(".error button")
            page.wait_for_selector("#nodes", timeout=60_000)
            assert first_cells(p, "nodes") == ["numa-0", "numa-1", "plain-0"]
        finally:
            p.close()


def test_the_readme_screenshot_is_taken_from_the_readme_session(tmp_path):
    out = tmp_path / "what-if.png"
    script = Path(__file__).resolve().parents[2] / "scripts" / "ui_screenshot.py"
    r = subprocess.run([sys.executable, str(script), "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size <= 150_000 and distinct_colours(out.read_bytes()) > 20


# --- the page's helpers, in the browser ------------------------------------------------------

def helper(page: Page, module: str, expression: str) -> Any:
    """``expression`` over the exports ``m`` of a UI module, evaluated in the page."""
    page.open("/overview")
    return page.page.evaluate(f"async () => {{ const m = await import('{page.base}/ui/{module}'); return {expression}; }}")


def test_amounts_are_formatted_in_kubectls_units(page):
    got = helper(page, "lib/dom.js", "[m.fmtAmount('cpu', 1500), m.fmtAmount('cpu', 4000), m.fmtAmount('memory', 1073741824),"
                                     " m.fmtAmount('memory', 1610612736), m.fmtAmount('hugepages-2Mi', 4194304),"
                                     " m.fmtAmount('pods', 110), m.fmtAmount('memory', 512)]")
    assert got == ["1500m", "4", "1Gi", "1.5Gi", "4Mi", "110", "512"]


def test_a_linux_cpu_list_is_read_as_ids(page):
    assert helper(page, "lib/dom.js", "[m.parseCpuList('0-2,5,8-9'), m.parseCpuList(''), m.parseCpuList('7')]") == \
        [[0, 1, 2, 5, 8, 9], [], [7]]


def test_a_pods_colour_is_the_same_on_every_page(page):
    a, b, c = helper(page, "lib/dom.js", "[m.colourOf('default/db'), m.colourOf('default/db'), m.colourOf('default/web')]")
    assert a == b and a != c


def test_numbers_sort_as_numbers_and_empty_cells_last(page):
    order = helper(page, "lib/table.js", """(() => {
        const t = m.dataTable({id: 't', rows: [{v: 10}, {v: ''}, {v: 9}, {v: 100}],
                               columns: [{key: 'v', label: 'v', numeric: true}], sort: {key: 'v', desc: false}});
        return [...t.querySelectorAll('tbody td')].map((td) => td.textContent);
    })()""")
    assert order == ["9", "10", "100", ""]


def test_names_with_numbers_sort_naturally(page):
    order = helper(page, "lib/table.js", """(() => {
        const t = m.dataTable({id: 't', rows: ['node-10', 'node-9', 'node-1'].map((n) => ({n})),
                               columns: [{key: 'n', label: 'n'}], sort: {key: 'n', desc: false}});
        return [...t.querySelectorAll('tbody td')].map((td) => td.textContent);
    })()""")
    assert order == ["node-1", "node-9", "node-10"]


def test_a_search_needs_every_word_in_the_row(page):
    shown = helper(page, "lib/table.js", """(() => {
        const t = m.dataTable({id: 't', rows: [{a: 'numa-0', b: 'static'}, {a: 'numa-1', b: 'none'}],
                               columns: [{key: 'a', label: 'a'}, {key: 'b', label: 'b'}]});
        const box = t.querySelector('input');
        box.value = 'numa static';
        box.dispatchEvent(new Event('input'));
        return [...t.querySelectorAll('tbody tr')].map((tr) => tr.textContent);
    })()""")
    assert shown == ["numa-0static"]


def test_new_rows_keep_the_search_filters_and_sort_the_user_chose(page):
    shown = helper(page, "lib/table.js", """(() => {
        const t = m.dataTable({id: 't', rows: [{a: 'job-1', s: 'running'}, {a: 'job-2', s: 'queued'}],
                               columns: [{key: 'a', label: 'a'}, {key: 's', label: 's', filter: true}]});
        const sel = t.querySelector('select');
        sel.value = 'running';
        sel.dispatchEvent(new Event('change'));
        t.querySelector('th').click(); t.querySelector('th').click();     // a, descending
        t.setRows([{a: 'job-1', s: 'succeeded'}, {a: 'job-2', s: 'running'}, {a: 'job-3', s: 'running'}]);
        return [[...t.querySelectorAll('tbody tr')].map((tr) => tr.textContent), sel.value,
                [...sel.options].map((o) => o.value)];
    })()""")
    assert shown == [["job-3running", "job-2running"], "running", ["", "running", "succeeded"]]
