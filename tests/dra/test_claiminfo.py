"""The node's prepared claims kept in place (:class:`kubetwin.dra.claiminfo.NodeClaims`) against
the plain ``prepare_claims``/``unprepare_pod`` on whole checkpoints: after random sequences of
prepares and unprepares the checkpoint file bytes, the CDI spec files (names, order, JSON), the
errors (type and words) and the unprepared claims are the same."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.dra.api import AllocatedDevice, Node, ResourceClaim
from kubetwin.dra.cdi import CDISpec
from kubetwin.dra.checkpoint import ClaimInfoState, encode_checkpoint
from kubetwin.dra.claiminfo import NodeClaims
from kubetwin.dra.prepare import PrepareError, prepare_claims
from kubetwin.dra.unprepare import unprepare_pod
from kubetwin.errors import InputError
from kubetwin.model.pod import Pod, pod_from_dict

DRIVERS = ("gpu.example.com", "nic.example.com", "1bad.example.com")   # the last: not a CDI vendor
DEVICES = ("gpu-0", "gpu-1", "dev.a:b", "x")
POD_UIDS = tuple(f"pod-{k}" for k in range(6))


def _claim(rng: random.Random, k: int) -> ResourceClaim:
    name = f"claim-{k % 7}"     # names repeat: several claims (UIDs) may share one name
    namespace = rng.choice(("", "default", "default", "default", "other"))
    uid = rng.choice((f"uid-{k}", f"uid-{k}", "", "bad uid" if rng.random() < 0.1 else f"u{k}"))
    allocated: tuple[AllocatedDevice, ...] | None = None
    if rng.random() < 0.95:
        allocated = tuple(AllocatedDevice(rng.choice(("gpu", "gpu/small", "nic")),
                                          rng.choice(DRIVERS[:2] if rng.random() < 0.9 else DRIVERS),
                                          rng.choice(("pool-1", "pool-2")), rng.choice(DEVICES),
                                          share_id=rng.choice((None, None, "s-1")))
                          for _ in range(rng.randint(1, 3)))
    reserved = tuple({"resource": "pods", "uid": u} for u in POD_UIDS if rng.random() < 0.9)
    owner = POD_UIDS[k % len(POD_UIDS)]
    raw: dict[str, Any] = {"metadata": {"ownerReferences": [{"controller": True, "uid": owner}]}}
    if rng.random() < 0.1:
        raw["status"] = {"allocation": {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": [rng.choice(("a", "b"))]}]}]}}}
    return ResourceClaim(name=name, namespace=namespace, uid=uid, allocated=allocated, reserved_for=reserved,
                         raw=raw)


def _pod(rng: random.Random, uid: str, claims: list[ResourceClaim]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    entries: list[dict[str, Any]] = []
    statuses: list[dict[str, Any]] = []
    for k in range(rng.choice((1, 1, 2, 3))):
        name = rng.choice((f"c{k}",) * 9 + ("c0",))   # sometimes a duplicate entry name
        kind = rng.random()
        owned = [c for c in claims if c.raw["metadata"]["ownerReferences"][0]["uid"] == uid]
        target = rng.choice(owned if owned and kind >= 0.5 and rng.random() < 0.9 else claims).name
        if kind < 0.5:
            entries.append({"name": name, "resourceClaimName": target})
        else:
            entries.append({"name": name, "resourceClaimTemplateName": "t"})
            if kind < 0.97:
                statuses.append({"name": name, **({"resourceClaimName": target} if kind < 0.93 else {})})
    namespace = rng.choice(("default",) * 5 + ("other",))
    return ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{uid}", "namespace": namespace, "uid": uid},
             "spec": {"containers": [{"name": "c"}], "resourceClaims": entries}}, statuses)


def _with_statuses(doc: dict[str, Any], statuses: list[dict[str, Any]]) -> Pod:
    doc = {**doc, "status": {"resourceClaimStatuses": statuses}} if statuses else doc
    return pod_from_dict(doc)


def _specs(specs: dict[str, CDISpec]) -> list[tuple[str, Any]]:
    return [(name, spec.to_json()) for name, spec in specs.items()]


def _outcome(call: Any, *args: Any, **kw: Any) -> tuple[str, Any]:
    try:
        return "ok", call(*args, **kw)
    except (PrepareError, InputError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("seed", range(40))
def test_prepares_and_unprepares_in_place_leave_the_checkpoint_and_cdi_specs_of_the_plain_path(seed):
    rng = random.Random(seed)
    claims = [_claim(rng, k) for k in range(rng.randint(2, 14))]
    node = Node("node-1", {"zone": "a"}) if rng.random() < 0.5 else None
    fast = NodeClaims()
    state: tuple[ClaimInfoState, ...] = ()
    cdi: dict[str, CDISpec] = {}
    prepared: dict[str, tuple[Pod, tuple[str, ...]]] = {}
    for _ in range(30):
        uid = rng.choice(POD_UIDS)
        if uid in prepared and rng.random() < 0.5:
            plain_pod, names = prepared.pop(uid)
            done = unprepare_pod(plain_pod, state)
            state = done.state
            for name in done.cdi_specs_removed:
                cdi.pop(name, None)
            gone = fast.unprepare(uid, plain_pod.namespace or "default", names)
            assert gone.unprepared == tuple((e.namespace, e.claim_name) for e in done.unprepared)
            assert gone.cdi_specs_removed == done.cdi_specs_removed
        else:
            doc, statuses = _pod(rng, uid, claims)
            plain_pod = _with_statuses(doc, statuses)
            pool = claims if rng.random() < 0.8 else rng.sample(claims, rng.randint(1, len(claims)))
            plain = _outcome(prepare_claims, plain_pod, pool, node, state=state)
            got = _outcome(fast.prepare, pod_from_dict(doc), statuses, pool, node)
            assert got[0] == plain[0]
            if plain[0] != "ok":
                assert got[1] == plain[1]
            else:
                from kubetwin.dra.unprepare import pod_claim_names

                assert got[1] == tuple(pod_claim_names(plain_pod))
                state = plain[1].state
                cdi.update(plain[1].cdi_specs)
                prepared[uid] = (plain_pod, got[1])
        assert encode_checkpoint(fast.checkpoint()) == encode_checkpoint(state)
        assert _specs(fast.cdi_specs()) == _specs(cdi)


def test_a_prepared_claim_is_built_into_a_checkpoint_entry_only_when_read():
    claim = ResourceClaim(name="c", namespace="default", uid="u-1",
                          allocated=(AllocatedDevice("gpu", "gpu.example.com", "pool-1", "gpu-0"),),
                          reserved_for=({"uid": "pod-0"},))
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "pod-0"},
           "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "a", "resourceClaimName": "c"}]}}
    fast = NodeClaims()
    assert fast.prepare(pod_from_dict(doc), [], [claim]) == ("c",)
    assert fast.entries["u-1"].built is None
    (entry,) = fast.checkpoint()
    assert entry.claim_uid == "u-1" and entry.pod_uids == {"pod-0"}
    assert list(fast.cdi_specs()) == ["gpu.example.com-device_u-1.json"]
