"""QoS class as ``pkg/apis/core/v1/helper/qos`` computes it."""

from kubetwin.kubelet.qos import compute_pod_qos, get_pod_qos
from kubetwin.model.features import gates_for

from .podspec import c, make_pod, sidecar

G = {"cpu": "1", "memory": "1Gi"}
PLR_OFF = gates_for("1.36", {"PodLevelResources": False})
FIX_OFF = gates_for("1.36", {"PodLevelResourcesFixKubeletQOSClass": False})


def qos(p, gates=None):
    return get_pod_qos(p, gates)


def test_no_requests_or_limits_is_best_effort():
    assert qos(make_pod([c("a"), c("b")])) == "BestEffort"


def test_zero_quantities_and_hugepages_do_not_count():
    p = make_pod([c("a", {"cpu": "0", "memory": "0", "hugepages-2Mi": "1Gi"},
                    {"cpu": "0", "memory": "0", "hugepages-2Mi": "1Gi"})])
    assert qos(p) == "BestEffort"


def test_equal_cpu_and_memory_requests_and_limits_is_guaranteed():
    assert qos(make_pod([c("a", G, G), c("b", G, G)])) == "Guaranteed"


def test_one_best_effort_container_makes_the_pod_burstable():
    assert qos(make_pod([c("a", G, G), c("b")])) == "Burstable"


def test_sums_are_compared_not_containers():
    p = make_pod([c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
                  c("b", {"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})])
    assert qos(p) == "Guaranteed"


def test_limit_without_request_is_burstable():
    assert qos(make_pod([c("a", None, {"cpu": "10"})])) == "Burstable"


def test_limits_only_for_cpu_and_memory_without_requests_is_burstable():
    assert qos(make_pod([c("a", None, G)])) == "Burstable"


def test_init_containers_and_sidecars_count():
    assert qos(make_pod([c("a")], init=[c("i", {"cpu": "10m"}, {"cpu": "100m"})])) == "Burstable"
    assert qos(make_pod([c("a", G, G)], init=[sidecar("s")])) == "Burstable"


def test_pod_level_resources_decide_alone():
    p = make_pod([c("a", {"cpu": "3m"}, {"cpu": "5m"})],
                 resources={"requests": {"cpu": "10m", "memory": "100Mi"}, "limits": {"cpu": "10m", "memory": "100Mi"}})
    assert qos(p) == "Guaranteed"
    assert qos(p, PLR_OFF) == "Burstable"


def test_pod_level_requests_without_limits_is_burstable():
    p = make_pod([c("a", {"cpu": "5m"})], resources={"requests": {"cpu": "10m", "memory": "10Mi"}})
    assert qos(p) == "Burstable"


def test_empty_pod_level_resources_fall_back_to_containers_with_the_fix():
    p = make_pod([c("a", G, G)], resources={})
    assert qos(p) == "Guaranteed"


def test_empty_pod_level_resources_make_best_effort_without_the_fix():
    p = make_pod([c("a", G, G)], resources={})
    assert qos(p, FIX_OFF) == "BestEffort"


def test_status_qos_class_wins():
    p = make_pod([c("a")], status={"qosClass": "Guaranteed"})
    assert qos(p) == "Guaranteed"


def test_decision_names_the_rule():
    d = compute_pod_qos(make_pod([c("a", G, G), c("b")]))
    assert d.qos_class == "Burstable" and "container b" in d.rule


def test_a_pod_with_many_containers_is_classed_as_container_by_container():
    many = [c(f"c{i}", G, G) for i in range(40)]
    assert qos(make_pod(many)) == "Guaranteed"
    assert qos(make_pod(many + [c("last", G)])) == "Burstable"


def test_a_pod_with_many_containers_is_answered_again_under_other_gates():
    # the class is kept per pod object, and per whether pod-level resources decide
    p = make_pod([c(f"c{i}", G, G) for i in range(40)], resources={})
    assert qos(p) == "Guaranteed"
    assert qos(p, FIX_OFF) == "BestEffort"   # without the fix an empty spec.resources decides
    assert qos(p) == "Guaranteed"


def test_a_pod_with_5000_containers_is_classed_once_per_pod_not_per_container(monkeypatch):
    # found by the fuzzer: explain asked the class once per container, each walk over them all
    from kubetwin.kubelet import qos as q

    p = make_pod([c(f"c{i}", {"cpu": "1m"}) for i in range(5000)])
    calls = []
    real = q._compute_pod_qos
    monkeypatch.setattr(q, "_compute_pod_qos", lambda *a: calls.append(a) or real(*a))
    for _ in range(5000):
        assert qos(p) == "Burstable"
    assert len(calls) == 1
