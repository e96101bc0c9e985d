"""Pod annotations the resource policies read: misspelt keys and values the plugin would ignore
are refused with the annotation's path; other policies' keys and empty scopes are warnings."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.runtime.annotations import split_key, validate_pod_annotations
from kubetwin.runtime.config import decode_topology_aware


def check(ann: dict[str, str], names=("c0", "c1"), policy="topology-aware", config=None) -> None:
    validate_pod_annotations(ann, names, policy, config, file="pods.yaml", path="metadata")


def test_scopes_split_as_the_plugin_reads_them() -> None:
    assert split_key("k.resource-policy.nri.io/container.c0") == ("k.resource-policy.nri.io", "c0")
    assert split_key("k.resource-policy.nri.io/pod") == ("k.resource-policy.nri.io", "")


def test_known_annotations_pass() -> None:
    check({"prefer-isolated-cpus.resource-policy.nri.io/pod": "true",
           "memory-type.resource-policy.nri.io/container.c1": "hbm,dram",
           "resource-policy.nri.io/affinity": "c0: [c1]", "app": "x"})


def test_a_misspelt_key_is_refused_with_the_nearest_one() -> None:
    with pytest.raises(InputError) as err:
        check({"prefer-isolated-cpu.resource-policy.nri.io/pod": "true"})
    assert err.value.fix == 'did you mean "prefer-isolated-cpus.resource-policy.nri.io"?'
    assert err.value.path == 'metadata.annotations["prefer-isolated-cpu.resource-policy.nri.io/pod"]'


@pytest.mark.parametrize("key, value", [
    ("prefer-shared-cpus.resource-policy.nri.io", "yes"),
    ("memory-type.resource-policy.nri.io", "optane"),
    ("prefer-cpu-priority.resource-policy.nri.io", "urgent"),
    ("cpu.preserve.resource-policy.nri.io", "True"),
    ("unlimited-burstable.resource-policy.nri.io", "socket"),
    ("topologyhints.resource-policy.nri.io", "gpus"),
])
def test_a_value_the_plugin_would_ignore_is_refused(key: str, value: str) -> None:
    with pytest.raises(InputError, match="would log this and ignore"):
        check({key: value})


def test_an_unknown_scheduling_class_is_refused() -> None:
    cfg = decode_topology_aware({"reservedResources": {"cpu": "1"}, "schedulingClasses": [{"name": "rt"}]})
    check({"scheduling-class.resource-policy.nri.io": "rt"}, config=cfg)
    with pytest.raises(InputError, match='unknown scheduling class "batch"'):
        check({"scheduling-class.resource-policy.nri.io": "batch"}, config=cfg)


def test_irq_affinity_is_refused_as_not_modelled() -> None:
    with pytest.raises(InputError, match="not modelled"):
        check({"irq-affinity.resource-policy.nri.io": "{claim: [eth0]}"})


def test_another_policys_annotation_is_a_warning() -> None:
    with collecting() as warnings:
        check({"balloon.balloons.resource-policy.nri.io": "full-core"})
    assert any("ignored by the topology-aware policy" in w for w in warnings)


def test_a_scope_naming_no_container_is_a_warning() -> None:
    with collecting() as warnings:
        check({"hide-hyperthreads.resource-policy.nri.io/container.special": "true"})
    assert any('no container "special"' in w for w in warnings)
