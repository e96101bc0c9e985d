"""Which RDT class a container gets, and whether the runtime takes it.

Facts from intel/goresctrl v0.12.0 (as containerd v2.3 vendors it) ``pkg/rdt/kubernetes_test.go``
(``TestContainerClassFromAnnotations``:
container annotation first, then the pod's per-container annotation, then the pod annotation;
class must exist; classes may deny pod or container annotations) and containerd v2.3
``internal/cri/server/rdt.go`` (a class while RDT is not enabled is refused unless
``ignore_rdt_not_enabled_errors``).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from kubetwin.machine.spec import parse_spec
from kubetwin.runtime.rdt import (
    RDT_CONTAINER_ANNOTATION,
    RDT_POD_ANNOTATION,
    RDT_POD_ANNOTATION_CONTAINER_PREFIX,
    RdtClassError,
    RdtUnavailable,
    container_rdt_class,
    parse_rdt_config,
    rdt_class_from_annotations,
)
from kubetwin.runtime.resctrl import machine_resctrl

from .resctrl_fixtures import FIXTURES

NAME = "test-container"
CONFIG = parse_rdt_config({"partitions": {"p": {"classes": {"class-1": {}, "class-2": {}, "class-3": {}}}}})
POD = {RDT_POD_ANNOTATION_CONTAINER_PREFIX + NAME: "class-2", RDT_POD_ANNOTATION: "class-3"}
CTR = {RDT_CONTAINER_ANNOTATION: "class-1"}


def machine_with(resctrl: dict | None):
    m = parse_spec("1s1n2c1t")
    extra = m.extra
    if resctrl is not None:
        extra["resctrl"] = resctrl
    return dataclasses.replace(m, extra_json=json.dumps(extra, sort_keys=True))


RDT_MACHINE = machine_with(FIXTURES["resctrl.l2"])
NO_RDT = machine_with(None)


def test_no_annotation_no_class_even_without_rdt() -> None:
    assert container_rdt_class(None, NO_RDT, NAME, {}) is None


def test_a_class_on_a_machine_without_rdt_is_refused() -> None:
    with pytest.raises(RdtClassError, match="RDT not initialized"):
        container_rdt_class(CONFIG, NO_RDT, NAME, POD, CTR)


def test_a_class_without_an_rdt_configuration_is_refused() -> None:
    with pytest.raises(RdtClassError, match="RDT disabled, refusing to set RDT class"):
        container_rdt_class(None, RDT_MACHINE, NAME, POD)


def test_ignore_rdt_not_enabled_errors_drops_the_class() -> None:
    assert container_rdt_class(None, NO_RDT, NAME, POD, ignore_not_enabled=True) is None


def test_unknown_class_is_refused() -> None:
    with pytest.raises(RdtClassError, match="RDT class not found"):
        container_rdt_class(parse_rdt_config({}), RDT_MACHINE, NAME, POD, CTR)


def test_container_annotation_comes_first() -> None:
    assert container_rdt_class(CONFIG, RDT_MACHINE, NAME, POD, CTR) == "class-1"


def test_container_annotation_denied_by_the_class_is_refused() -> None:
    config = parse_rdt_config({"partitions": {"p": {"classes": {
        "class-1": {"kubernetes": {"denyContainerAnnotation": True}}, "class-2": {}, "class-3": {}}}}})
    with pytest.raises(RdtClassError, match="not allowed from Container annotation"):
        container_rdt_class(config, RDT_MACHINE, NAME, POD, CTR)


def test_unqualified_class_name_is_refused() -> None:
    with pytest.raises(RdtClassError, match="unqualified RDT class name"):
        container_rdt_class(CONFIG, RDT_MACHINE, NAME, POD, {RDT_CONTAINER_ANNOTATION: "foo/bar"})


def test_per_container_pod_annotation_comes_next() -> None:
    assert container_rdt_class(CONFIG, RDT_MACHINE, NAME, POD) == "class-2"


def test_pod_annotation_denied_by_the_class_is_refused() -> None:
    config = parse_rdt_config({"partitions": {"p": {"classes": {
        "class-2": {"kubernetes": {"denyPodAnnotation": True}}, "class-3": {}}}}})
    with pytest.raises(RdtClassError, match="not allowed from Pod annotations"):
        container_rdt_class(config, RDT_MACHINE, NAME, POD)


def test_pod_annotation_is_last() -> None:
    assert container_rdt_class(CONFIG, RDT_MACHINE, NAME, {RDT_POD_ANNOTATION: "class-3"}) == "class-3"


def test_refusal_points_at_the_annotation() -> None:
    with pytest.raises(RdtClassError) as err:
        container_rdt_class(parse_rdt_config({}), RDT_MACHINE, NAME, {RDT_POD_ANNOTATION: "gold"})
    assert err.value.path == f'metadata.annotations["{RDT_POD_ANNOTATION}"]'


def test_empty_class_name_is_the_root_class() -> None:
    assert container_rdt_class(parse_rdt_config({}), RDT_MACHINE, NAME, {RDT_POD_ANNOTATION: ""}) == ""


def test_annotation_lookup_alone() -> None:
    assert rdt_class_from_annotations(POD, NAME) == "class-2"
    assert rdt_class_from_annotations(POD, "other") == "class-3"
    assert rdt_class_from_annotations({}, NAME) is None


def test_machine_without_resctrl_has_no_rdt() -> None:
    assert machine_resctrl(NO_RDT) is None
    with pytest.raises(RdtUnavailable, match="RDT is not available on this machine"):
        CONFIG.schemata("class-1", NO_RDT)


def test_machine_resctrl_is_read_from_the_description() -> None:
    info = machine_resctrl(RDT_MACHINE)
    assert info is not None and info.cat_level("L2").cache_ids == (0, 1)
    assert CONFIG.schemata("class-1", RDT_MACHINE) == {"L2": "0=ff;1=ff"}
