"""Reading a live cluster into a snapshot, against a local API server speaking the real shapes
(``tests/live/fakeapi.py``): lists in pages, Status errors, notes for what cannot be read."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.live.client import MAX_RETRIES, Client
from kubetwin.live.config import load
from kubetwin.live.read import read_cluster
from kubetwin.sim.snapshot import builtins, get

from .fakeapi import cluster, kubeconfig, pod_item


@pytest.fixture
def api():
    return cluster()


def connect(api, tmp_path, *, page_size=2, sleeps=None):
    server, url = api.serve()
    client = Client(load(kubeconfig(tmp_path, url)), page_size=page_size,
                    sleep=(sleeps.append if sleeps is not None else lambda s: None))
    return server, client


def names(items):
    return sorted(get(i, "metadata", "name") for i in items)


def test_every_kind_is_read_into_one_snapshot(api, tmp_path):
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert names(snap.nodes) == ["worker-0", "worker-1", "worker-2"]
    assert len(snap.pods) == 6 and names(snap.pending) == ["web-6"]
    assert [get(w, "kind") for w in snap.workloads] == ["Deployment"]
    assert sorted(get(o, "kind") for o in snap.objects) == ["PriorityClass", "Service"]


def test_list_items_get_the_kind_and_api_version_of_their_list(api, tmp_path):
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert (get(snap.pods[0], "kind"), get(snap.pods[0], "apiVersion")) == ("Pod", "v1")
    assert {get(o, "kind"): get(o, "apiVersion") for o in snap.objects}["PriorityClass"] == "scheduling.k8s.io/v1"


def test_managed_fields_are_dropped(api, tmp_path):
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert "managedFields" not in builtins(snap.nodes[0])["metadata"]


def test_lists_are_read_in_pages_of_limit_with_continue(api, tmp_path):
    server, client = connect(api, tmp_path, page_size=2)
    read_cluster(client)
    server.shutdown()
    pod_gets = [r for r in api.requests if r.startswith("/api/v1/pods")]
    assert len(pod_gets) == 4 and all("limit=2" in r for r in pod_gets)
    assert all("continue=" in r for r in pod_gets[1:])


def test_an_expired_continue_token_restarts_the_list_from_the_start(api, tmp_path):
    api.expire_once.add("/api/v1/pods")
    server, client = connect(api, tmp_path, page_size=3)
    snap = read_cluster(client)
    server.shutdown()
    pod_gets = [r for r in api.requests if r.startswith("/api/v1/pods")]
    assert "continue=" not in pod_gets[2]            # the list again, from scratch
    assert len(snap.pods) + len(snap.pending) == 7    # each pod once


def test_a_429_is_retried_after_the_retry_after_seconds(api, tmp_path):
    api.throttle["/api/v1/nodes"] = 2
    api.retry_after = "3"
    sleeps: list[float] = []
    server, client = connect(api, tmp_path, sleeps=sleeps)
    snap = read_cluster(client)
    server.shutdown()
    assert sleeps == [3.0, 3.0] and len(snap.nodes) == 3


def test_retries_are_bounded(api, tmp_path):
    api.throttle["/api/v1/nodes"] = MAX_RETRIES + 5
    server, client = connect(api, tmp_path)
    with pytest.raises(InputError, match="429"):
        read_cluster(client)
    server.shutdown()


def test_a_forbidden_list_names_the_verb_resource_and_api_group(api, tmp_path):
    api.forbid.add("/apis/apps/v1/daemonsets")
    server, client = connect(api, tmp_path)
    with pytest.raises(InputError) as err:
        read_cluster(client)
    server.shutdown()
    assert 'cannot list resource "daemonsets" in API group "apps" at the cluster scope' in str(err.value)
    assert "snapshot-rbac.yaml" in str(err.value)


def test_refused_credentials_are_an_error_naming_the_context(api, tmp_path):
    api.token = "another"
    server, client = connect(api, tmp_path)
    with pytest.raises(InputError, match="Unauthorized.*kind-dev"):
        read_cluster(client)
    server.shutdown()


def test_a_kind_whose_api_is_not_served_is_a_note(api, tmp_path):
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert any("topology.node.k8s.io/v1alpha2 noderesourcetopologies is not served" in n for n in snap.notes())


def test_each_nodes_kubelet_configuration_is_read_from_configz(api, tmp_path):
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    cfg = snap.kubelet_configs["worker-1"]
    assert cfg["kind"] == "KubeletConfiguration" and cfg["cpuManagerPolicy"] == "static"


def test_configz_forbidden_is_a_note_not_an_error(api, tmp_path):
    api.forbid.update(f"/api/v1/nodes/worker-{i}/proxy/configz" for i in range(3))
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert snap.kubelet_configs == {} and any("nodes/proxy" in n for n in snap.notes())


def test_a_node_whose_kubelet_does_not_answer_is_a_note(api, tmp_path):
    del api.configz["worker-2"]
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert sorted(snap.kubelet_configs) == ["worker-0", "worker-1"]
    assert any(n.startswith("node worker-2: kubelet configuration not read (503") for n in snap.notes())


def test_a_namespace_reads_namespaced_kinds_of_that_namespace_only(api, tmp_path):
    kind, items = api.lists.pop("/api/v1/pods")
    api.lists["/api/v1/namespaces/team-a/pods"] = (kind, [pod_item("a", "worker-0", namespace="team-a")])
    for path in list(api.lists):
        if path.rsplit("/", 1)[-1] in {"services", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs", "cronjobs",
                                       "resourcequotas", "limitranges", "poddisruptionbudgets", "resourceclaims",
                                       "resourceclaimtemplates"}:
            base, plural = path.rsplit("/", 1)
            api.lists[f"{base}/namespaces/team-a/{plural}"] = api.lists.pop(path)
    server, client = connect(api, tmp_path)
    snap = read_cluster(client, namespace="team-a")
    server.shutdown()
    assert names(snap.pods) == ["a"] and len(snap.nodes) == 3
    assert any('only the namespace "team-a"' in n for n in snap.notes())


def test_a_field_no_release_knows_is_an_error_naming_it(api, tmp_path):
    api.lists["/api/v1/pods"][1][0]["spec"]["containers"][0]["resorces"] = {}
    server, client = connect(api, tmp_path)
    with pytest.raises(InputError, match=r'spec\.containers\[0\]\.resorces'):
        read_cluster(client)
    server.shutdown()


def test_the_shipped_cluster_role_grants_exactly_what_a_snapshot_reads():
    from pathlib import Path

    import yaml

    from kubetwin.live.read import RESOURCES

    docs = list(yaml.safe_load_all((Path(__file__).resolve().parents[2] / "docs" / "snapshot-rbac.yaml").read_text()))
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    granted = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
               for v in rule["verbs"]}
    needed = {(res.group, res.plural, "list") for res in RESOURCES} | {("", "nodes/proxy", "get")}
    assert granted == needed


def test_a_server_of_the_release_read_gives_no_warning(api, tmp_path):
    from kubetwin.diagnostics import collecting
    from kubetwin.live.read import check_server_version

    server, client = connect(api, tmp_path)
    with collecting() as warnings:
        assert check_server_version(client, "1.36") == "1.36"
    server.shutdown()
    assert not warnings


def test_a_server_of_another_release_is_a_warning_naming_the_flag(api, tmp_path):
    from kubetwin.diagnostics import collecting
    from kubetwin.live.read import check_server_version

    api.version = {"major": "1", "minor": "35+", "gitVersion": "v1.35.2-eks-1"}
    server, client = connect(api, tmp_path)
    with collecting() as warnings:
        check_server_version(client, None)
    server.shutdown()
    [text] = [str(w) for w in warnings]
    assert "runs Kubernetes 1.35" in text and "--kubernetes-version 1.35" in text


def test_a_server_of_another_release_is_refused_under_strict(api, tmp_path):
    from kubetwin.diagnostics import strict_mode
    from kubetwin.live.read import check_server_version

    api.version = {"major": "1", "minor": "34"}
    server, client = connect(api, tmp_path)
    try:
        with strict_mode(True), pytest.raises(InputError) as err:
            check_server_version(client, "1.36")
    finally:
        server.shutdown()
    assert err.value.path == "--kubernetes-version"


def test_a_server_without_version_is_not_checked(api, tmp_path):
    from kubetwin.live.read import check_server_version

    api.version = None
    server, client = connect(api, tmp_path)
    assert check_server_version(client, "1.36") is None
    server.shutdown()


def test_each_page_is_decoded_as_it_arrives_and_a_restart_drops_the_pages_before(api, tmp_path):
    api.expire_once.add("/api/v1/pods")
    server, client = connect(api, tmp_path)
    snap = read_cluster(client)
    server.shutdown()
    assert len(snap.pods) == 6 and names(snap.pending) == ["web-6"]
