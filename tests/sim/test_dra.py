"""DRA claims in the loop: slices from the node groups' machines, claims from templates,
allocated by the scheduler's DynamicResources plugin and released when pods end."""

from __future__ import annotations

import pytest

from kubetwin.sim import simulate

DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def gpu_group(count=1, gpus=2, **kw):
    return {"name": "g", "count": count, "machine": f"1s1n4c1t:gpus={gpus}",
            "draDrivers": [{"driver": "gpu.example.com", "kinds": ["gpu"]}], **kw}


def claiming(name, count=1, **kw):
    return {"name": name, "count": count, "template": {"spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}]}}, **kw}


def test_each_pod_gets_a_claim_from_its_template_on_a_node_with_a_free_gpu(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(count=2)], "workloads": [claiming("w", 4)]},
                      DEVICE_CLASS, TEMPLATE)
    r = simulate(sc)
    assert [p.phase for p in r.pods] == ["Running"] * 4
    assert all(len(p.claims) == 1 and p.claims[0].startswith("default/w-") for p in r.pods)
    assert sorted(p.node for p in r.pods) == ["g-0", "g-0", "g-1", "g-1"]


def test_a_pod_without_a_free_device_waits_with_the_dra_message(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(gpus=1)], "workloads": [claiming("w", 2)]},
                      DEVICE_CLASS, TEMPLATE)
    p = simulate(sc).pods[1]
    assert p.phase == "Pending"
    assert p.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")


def test_devices_are_released_when_a_pod_ends(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(gpus=1)],
                                 "workloads": [claiming("a", duration="1m"), claiming("b", arrival={"at": "1s"})]},
                      DEVICE_CLASS, TEMPLATE)
    pods = {p.name: p for p in simulate(sc).pods}
    assert pods["a-0"].phase == "Succeeded"
    assert pods["b-0"].phase == "Running" and pods["b-0"].start == 60.0


@pytest.mark.parametrize(("driver", "path", "text"), [
    ({"kinds": ["gpu"]}, "draDrivers[0].driver", "Required value: driver"),
    ({"driver": "gpu.example.com", "kinds": ["tpu"]}, "draDrivers[0].kinds[0]", 'Unsupported value: "tpu"'),
    ({"driver": "gpu.example.com", "vendorIDs": ["zz"]}, "draDrivers[0].vendorIDs[0]", "Invalid value: 'zz'"),
    ({"driver": "gpu.example.com", "colour": "red"}, "draDrivers[0].colour",
         'unknown field "spec.nodeGroups[0].draDrivers[0].colour"'),
])
def test_bad_dra_drivers_are_refused_with_their_field(tmp_path, kit, driver, path, text):
    from kubetwin.errors import InputError

    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [{**gpu_group(), "draDrivers": [driver]}]})
    assert f"spec.nodeGroups[0].{path}" in str(e.value) and text in str(e.value)
    assert "scenario.yaml" in str(e.value)


def test_allocated_devices_are_sampled_as_device_utilisation(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(gpus=4)], "workloads": [claiming("w", 1)]},
                      DEVICE_CLASS, TEMPLATE)
    assert simulate(sc).summary()["utilization"]["devices"] == 0.25


# ---------------------------------------------------------------------------- the node's side
def _sim(sc):
    from kubetwin.sim.loop import Simulator

    s = Simulator(sc)
    s.run()
    return s


def test_a_running_pods_claim_is_prepared_on_its_node(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(gpus=1)], "workloads": [claiming("a")]},
                      DEVICE_CLASS, TEMPLATE)
    s = _sim(sc)
    (entry,) = s.node_dra.state[0]
    assert entry.claim_name.startswith("a-0-gpu-") and len(s.node_dra.cdi[0]) == 1


def test_after_a_pod_with_a_claim_completes_checkpoint_and_cdi_specs_are_gone_and_devices_free(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(gpus=1)], "workloads": [claiming("a", duration="1m")]},
                      DEVICE_CLASS, TEMPLATE)
    s = _sim(sc)
    assert s.pods[0].phase == "Succeeded"
    assert s.node_dra.state[0] == [] and s.node_dra.cdi[0] == {}
    assert s.dra.allocations() == {} and s.node_dra.mismatches == []


def test_the_node_and_the_scheduler_agree_on_every_released_claim(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(count=2)],
                                 "workloads": [claiming("w", 4, duration="1m"), claiming("x", 2, arrival={"at": "30s"},
                                                                                         duration="2m")]},
                      DEVICE_CLASS, TEMPLATE)
    s = _sim(sc)
    assert s.node_dra.mismatches == [] and all(st == [] for st in s.node_dra.state)
