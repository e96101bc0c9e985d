"""A pod's claims: template instantiation as the resourceclaim controller does it, name
resolution and ownership as the scheduler checks them, joint allocation and reservation."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from kubetwin.dra.allocator import AllocationError, Allocator
from kubetwin.dra.api import (
    Node,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.dra.podclaims import (
    DELETE_PROTECTION_FINALIZER,
    NAME_SUFFIX_ALPHABET,
    POD_CLAIM_NAME_ANNOTATION,
    PodClaimError,
    PreBoundRaw,
    allocate_for_pod,
    bind_claims,
    claims_for_pod,
    filter_on_node,
    generate_name_base,
    is_controlled_by,
    random_suffix,
    random_suffix_plain,
)
from kubetwin.model.pod import pod_from_dict

from .conftest import CLASS, KUBETWIN, NODE, slice_

POD_UID = "aaaaaaaa-0000-0000-0000-000000000001"


def pod(name="trainer", uid=POD_UID, claims=(("gpu", None, "one-gpu"),), statuses=None):
    spec_claims = []
    for entry, by_name, by_template in claims:
        item = {"name": entry}
        if by_name:
            item["resourceClaimName"] = by_name
        if by_template:
            item["resourceClaimTemplateName"] = by_template
        spec_claims.append(item)
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": spec_claims}}
    if statuses is not None:
        obj["status"] = {"resourceClaimStatuses": statuses}
    return pod_from_dict(obj)


def template(name="one-gpu", count=1, labels=None):
    return parse_resource_claim_template({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"metadata": {"labels": labels or {}, "annotations": {"team": "ml"}},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                               "count": count}}]}}}})


def claim(name, owner_uid=None, annotation=None, allocated_device=None, reserved=(), node_name="node-1"):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": owner_uid,
                                    "controller": True}]
    if annotation:
        meta["annotations"] = {POD_CLAIM_NAME_ANNOTATION: annotation}
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    if allocated_device or reserved:
        obj["status"] = {}
    if allocated_device:
        obj["status"]["allocation"] = {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool-1",
                                     "device": allocated_device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}
    if reserved:
        obj["status"]["reservedFor"] = [{"resource": "pods", "name": f"p{i}", "uid": u} for i, u in enumerate(reserved)]
    return parse_resource_claim(obj)


def allocator(claims=(), devices=("gpu-0", "gpu-1")):
    s = parse_resource_slice(slice_(devices=[{"name": d} for d in devices]))
    return Allocator(AllocatorFeatures(), {"gpu": parse_device_class(CLASS)}, [s],
                     [c for c in claims if c.allocated is not None])


NODE_1 = Node("node-1", {"zone": "a"})


# ---------------------------------------------------------------------------- names
def test_generate_name_is_pod_dash_claim_dash_when_short():
    assert generate_name_base("trainer", "gpu") == "trainer-gpu-"


def test_generate_name_shortens_both_parts_in_proportion_without_the_final_dash():
    base = generate_name_base("a" * 60, "b" * 20)
    # 82 characters: pod part 60*57//82 = 41, claim part 20*57//82 = 13.
    assert base == "a" * 41 + "-" + "b" * 13


def test_generated_claim_name_is_the_base_plus_five_characters_of_the_apiserver_alphabet():
    pc = claims_for_pod(pod(), [], [template()])
    name = pc.claims[0].claim.name
    assert name.startswith("trainer-gpu-") and len(name) == len("trainer-gpu-") + 5
    assert all(ch in NAME_SUFFIX_ALPHABET for ch in name[-5:])


def test_generated_names_are_deterministic_for_a_seed_and_differ_between_pods():
    a = claims_for_pod(pod(), [], [template()]).claims[0].claim.name
    again = claims_for_pod(pod(), [], [template()]).claims[0].claim.name
    other_seed = claims_for_pod(pod(), [], [template()], seed=7).claims[0].claim.name
    other_pod = claims_for_pod(pod(uid="aaaaaaaa-0000-0000-0000-000000000002"), [], [template()]).claims[0].claim.name
    assert a == again
    assert a != other_seed and a != other_pod


def test_the_name_suffix_is_what_drawing_each_character_with_random_choice_gives():
    import random

    for seed in range(2000):
        fast, plain = random.Random(f"{seed}/pod/gpu"), random.Random(f"{seed}/pod/gpu")
        assert random_suffix(fast) == random_suffix_plain(plain)
        assert fast.getstate() == plain.getstate()   # the uid drawn next stays the same too


def test_a_generated_name_that_exists_already_is_drawn_again():
    first = claims_for_pod(pod(), [], [template()]).claims[0].claim.name
    clash = claim(first)
    second = claims_for_pod(pod(claims=(("gpu", None, "one-gpu"), ("other", "x", None))), [clash, claim("x")],
                            [template()]).claims[0].claim.name
    assert second != first and second.startswith("trainer-gpu-")


# ---------------------------------------------------------------------------- template claims
def test_template_claim_is_owned_by_the_pod_and_annotated_with_the_pod_claim_name():
    c = claims_for_pod(pod(), [], [template(labels={"app": "x"})]).claims[0].claim
    meta = c.raw["metadata"]
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": POD_UID,
                                        "controller": True, "blockOwnerDeletion": True}]
    assert meta["annotations"] == {"team": "ml", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["labels"] == {"app": "x"}
    assert meta["generateName"] == "trainer-gpu-"
    assert c.requests[0].exactly.device_class_name == "gpu"


def test_template_claim_is_recorded_in_pod_resource_claim_statuses():
    pc = claims_for_pod(pod(), [], [template()])
    assert pc.resource_claim_statuses == ({"name": "gpu", "resourceClaimName": pc.claims[0].claim.name},)


def test_claim_named_in_pod_status_is_used_when_the_pod_owns_it():
    owned = claim("trainer-gpu-abcde", owner_uid=POD_UID)
    pc = claims_for_pod(pod(statuses=[{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}]), [owned],
                        [template()])
    assert pc.claims[0].claim is owned and not pc.claims[0].generated


def test_claim_named_in_pod_status_but_owned_by_another_pod_is_refused():
    foreign = claim("trainer-gpu-abcde", owner_uid="someone-else")
    with pytest.raises(PodClaimError, match="was not created for pod default/trainer \\(pod is not owner\\)"):
        claims_for_pod(pod(statuses=[{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}]), [foreign], [])


def test_pod_status_entry_without_a_claim_name_means_no_claim_is_needed():
    pc = claims_for_pod(pod(statuses=[{"name": "gpu"}]), [], [])
    assert pc.claims == ()


def test_an_orphaned_claim_of_the_pod_is_adopted_instead_of_generating_another():
    orphan = claim("trainer-gpu-zzzzz", owner_uid=POD_UID, annotation="gpu")
    pc = claims_for_pod(pod(), [orphan], [template()])
    assert pc.claims[0].claim is orphan
    assert pc.resource_claim_statuses == ({"name": "gpu", "resourceClaimName": "trainer-gpu-zzzzz"},)


def test_missing_template_is_reported_like_the_controller():
    with pytest.raises(PodClaimError, match='resourceclaimtemplates.resource.k8s.io "one-gpu" not found'):
        claims_for_pod(pod(), [], [])


def test_missing_named_claim_makes_the_pod_wait():
    with pytest.raises(PodClaimError, match='resourceclaim "shared" not found') as err:
        claims_for_pod(pod(claims=(("s", "shared", None),)), [], [])
    assert err.value.unschedulable


def test_claims_of_another_namespace_are_not_seen():
    other = parse_resource_claim({**claim("shared").raw, "metadata": {"name": "shared", "namespace": "team-b"}})
    with pytest.raises(PodClaimError):
        claims_for_pod(pod(claims=(("s", "shared", None),)), [other], [])


def _fields(c):
    import dataclasses

    return {f.name: getattr(c, f.name) for f in dataclasses.fields(c)}


def test_a_generated_claim_is_what_decoding_the_object_the_controller_creates_gives():
    c = claims_for_pod(pod(), [], [template(count=2, labels={"app": "x"})]).claims[0].claim
    assert _fields(c) == _fields(parse_resource_claim(c.raw))


def test_claims_of_one_template_share_its_decoded_spec_and_differ_in_metadata():
    t = template()
    a = claims_for_pod(pod(), [], [t]).claims[0].claim
    b = claims_for_pod(pod(name="other", uid="aaaaaaaa-0000-0000-0000-000000000002"), [], [t]).claims[0].claim
    assert a.requests is b.requests and a.raw["spec"] is b.raw["spec"]
    assert a.name != b.name and a.uid != b.uid


def test_a_generated_claim_does_not_share_its_spec_with_the_template_object():
    t = template()
    c = claims_for_pod(pod(), [], [t]).claims[0].claim
    assert c.raw["spec"] == t.spec and c.raw["spec"] is not t.spec


# ---------------------------------------------------------------------------- allocation
def test_all_claims_of_the_pod_are_allocated_together_and_reserved_for_it():
    shared = claim("shared")
    pc = claims_for_pod(pod(claims=(("gpu", None, "one-gpu"), ("s", "shared", None))), [shared], [template()])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    assert result.allocated
    devices = [c["status"]["allocation"]["devices"]["results"][0]["device"] for c in result.claims]
    assert devices == ["gpu-0", "gpu-1"]
    for c in result.claims:
        assert c["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": POD_UID}]
        assert DELETE_PROTECTION_FINALIZER in c["metadata"]["finalizers"]


def test_bound_claims_are_read_back_as_decoding_what_prebind_writes_gives():
    shared = claim("shared")
    pc = claims_for_pod(pod(claims=(("gpu", None, "one-gpu"), ("s", "shared", None))), [shared], [template()])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    assert len(result.parsed) == len(result.claims) == 2
    for typed, raw in zip(result.parsed, result.claims):
        assert _fields(typed) == _fields(parse_resource_claim(raw))


def test_the_devices_a_binding_takes_are_those_of_each_new_allocation_in_pod_claim_order():
    shared = claim("shared", allocated_device="gpu-0", reserved=("other-pod",))
    pc = claims_for_pod(pod(claims=(("s", "shared", None), ("gpu", None, "one-gpu"))), [shared], [template()])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    assert list(result.devices) == ["gpu"]
    assert result.devices["gpu"] == result.results["gpu"].devices() == result.parsed[1].allocated


def test_an_allocated_shared_claim_read_back_keeps_its_allocation_and_gains_the_pod():
    shared = claim("shared", allocated_device="gpu-0", reserved=("other-pod",))
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [shared], [])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    typed = result.parsed[0]
    assert typed.allocated == shared.allocated and typed.node_selector == shared.node_selector
    assert [r["uid"] for r in typed.reserved_for] == ["other-pod", POD_UID]
    assert _fields(typed) == _fields(parse_resource_claim(result.claims[0]))


def test_pod_claims_that_do_not_fit_together_are_unsatisfiable():
    pc = claims_for_pod(pod(claims=(("a", None, "two"), ("b", None, "two"))), [], [template("two", count=2)])
    assert not allocate_for_pod(allocator(), NODE_1, pc).allocated


def test_an_allocated_shared_claim_is_reused_and_the_next_pod_is_appended_to_reserved_for():
    shared = claim("shared", allocated_device="gpu-0", reserved=["other-pod"])
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [shared], [])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    assert result.allocated
    assert [r["uid"] for r in result.claims[0]["status"]["reservedFor"]] == ["other-pod", POD_UID]
    assert result.claims[0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def test_an_allocated_claim_for_another_node_makes_this_node_unsuitable():
    shared = claim("shared", allocated_device="gpu-0", node_name="node-2")
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [shared], [])
    result = allocate_for_pod(allocator([shared]), NODE_1, pc)
    assert not result.allocated and result.outcome.reason == "resourceclaim not available on the node"


def test_reserving_a_claim_for_a_257th_consumer_is_rejected_like_the_api_server():
    full = claim("shared", allocated_device="gpu-0", reserved=[f"u{i}" for i in range(256)])
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [full], [])
    with pytest.raises(AllocationError, match="status.reservedFor: Too many: 257: must have at most 256 items"):
        allocate_for_pod(allocator([full]), NODE_1, pc)


def test_a_pod_already_in_reserved_for_is_not_added_twice():
    mine = claim("shared", allocated_device="gpu-0", reserved=[POD_UID])
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [mine], [])
    result = allocate_for_pod(allocator([mine]), NODE_1, pc)
    assert len(result.claims[0]["status"]["reservedFor"]) == 1


# ---------------------------------------------------------------------------- lazy PreBind objects
_LAZY_CASES = {
    "generated and shared": (("gpu", None, "one-gpu"), ("s", "shared", None)),
    "shared first": (("s", "shared", None), ("gpu", None, "one-gpu")),
    "generated only": (("gpu", None, "one-gpu"),),
    "allocated shared only": (("s", "held", None),),
    "already reserved": (("s", "mine", None),),
}


def _lazy_and_plain(entries):
    claims = [claim("shared"), claim("held", allocated_device="gpu-0", reserved=("other-pod",)),
              claim("mine", allocated_device="gpu-1", reserved=(POD_UID,))]
    pc = claims_for_pod(pod(claims=entries), claims, [template()])
    outcome = filter_on_node(allocator(claims, devices=("gpu-0", "gpu-1", "gpu-2", "gpu-3")), NODE_1, pc)
    assert outcome.allocated
    return bind_claims(pc, outcome, "node-1", lazy=True), bind_claims(pc, outcome, "node-1")


@pytest.mark.parametrize("case", list(_LAZY_CASES))
def test_lazy_prebind_objects_read_as_the_plain_ones_key_for_key_and_in_order(case):
    lazy, plain = _lazy_and_plain(_LAZY_CASES[case])
    assert lazy.claims == () and len(lazy.parsed) == len(plain.claims)
    for typed, raw in zip(lazy.parsed, plain.claims):
        assert isinstance(typed.raw, PreBoundRaw)
        assert list(typed.raw) == list(raw) and dict(typed.raw) == raw
        assert json.dumps(dict(typed.raw)) == json.dumps(raw)


@pytest.mark.parametrize("case", list(_LAZY_CASES))
def test_lazy_prebind_claims_hold_the_plain_typed_values(case):
    lazy, plain = _lazy_and_plain(_LAZY_CASES[case])
    for a, b in zip(lazy.parsed, plain.parsed):
        assert _fields(a) == _fields(b)
    assert (lazy.results, lazy.devices, lazy.resource_claim_statuses) == \
        (plain.results, plain.devices, plain.resource_claim_statuses)


def test_a_lazy_prebind_claim_is_owned_by_the_pod_that_owns_its_source():
    lazy, _ = _lazy_and_plain(_LAZY_CASES["generated only"])
    assert is_controlled_by(lazy.parsed[0], pod())
    assert not lazy.parsed[0].raw._status   # reading the owner built no status


def test_a_lazy_prebind_for_a_257th_consumer_is_rejected_like_the_plain_one():
    full = claim("shared", allocated_device="gpu-0", reserved=[f"u{i}" for i in range(256)])
    pc = claims_for_pod(pod(claims=(("s", "shared", None),)), [full], [])
    outcome = filter_on_node(allocator([full]), NODE_1, pc)
    with pytest.raises(AllocationError, match="status.reservedFor: Too many: 257: must have at most 256 items"):
        bind_claims(pc, outcome, "node-1", lazy=True)


# ---------------------------------------------------------------------------- CLI
def _write(tmp_path: Path, objects, the_pod):
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(the_pod))


TEMPLATE_OBJ = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu"}]}}}}
POD_OBJ = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "uid": POD_UID},
           "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}


def test_cli_allocate_pod_generates_allocates_and_reserves(tmp_path: Path):
    _write(tmp_path, [CLASS, slice_(), TEMPLATE_OBJ], POD_OBJ)
    out = subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml", "--pod",
                                     "pod.yaml", "-o", "json"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outcome"] == "allocated"
    name = data["claims"][0]["metadata"]["name"]
    assert data["pod"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": name}]
    assert data["claims"][0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def test_cli_allocate_pod_with_a_missing_template_is_unsatisfiable_with_the_reason(tmp_path: Path):
    _write(tmp_path, [CLASS, slice_()], POD_OBJ)
    out = subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml", "--pod",
                                     "pod.yaml", "-o", "json"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0
    assert "not found" in json.loads(out.stdout)["reason"]


def test_cli_allocate_pod_with_both_claim_sources_names_the_file_and_field(tmp_path: Path):
    bad = json.loads(json.dumps(POD_OBJ))
    bad["spec"]["resourceClaims"][0]["resourceClaimName"] = "x"
    _write(tmp_path, [CLASS, slice_(), TEMPLATE_OBJ], bad)
    out = subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml", "--pod",
                                     "pod.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 1
    assert "pod.yaml" in out.stderr and "spec.resourceClaims[0]" in out.stderr


def test_cli_allocate_without_claims_or_pod_is_a_usage_error(tmp_path: Path):
    _write(tmp_path, [CLASS], POD_OBJ)
    out = subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "objects.yaml", "--node", "node.yaml"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2


def test_a_generated_claim_uid_is_the_version_4_uuid_of_the_drawn_bits():
    import random
    import uuid

    from kubetwin.dra.podclaims import _uuid4_text

    rng = random.Random(7)
    for _ in range(1000):
        bits = rng.getrandbits(128)
        assert _uuid4_text(bits) == str(uuid.UUID(int=bits, version=4))
