"""The claim index resolves a pod's claims as the plain list does, at the cost of what the pod names."""

from __future__ import annotations

from kubetwin.dra.api import parse_resource_claim
from kubetwin.dra.podclaims import ClaimIndex, claim_key, claims_for_pod

from .test_podclaims import POD_UID, claim, pod, template


def _resolved(claims_arg):
    pc = claims_for_pod(pod(), claims_arg, [template()])
    return [(c.name, c.claim.name, c.generated) for c in pc.claims], pc.resource_claim_statuses


def test_orphan_is_adopted_from_the_index_as_from_the_list():
    claims = [claim("unrelated"), claim("orphan", owner_uid=POD_UID, annotation="gpu")]
    assert _resolved(ClaimIndex(claims)) == _resolved(claims)
    assert _resolved(ClaimIndex(claims))[0] == [("gpu", "orphan", False)]


def test_generated_name_avoids_names_in_the_index():
    first = claims_for_pod(pod(), [], [template()]).claims[0].claim.name
    clash = claim(first)
    assert _resolved(ClaimIndex([clash])) == _resolved([clash])
    assert _resolved(ClaimIndex([clash]))[0][0][1] != first


def test_claims_of_another_namespace_are_not_adopted():
    c = claim("orphan", owner_uid=POD_UID, annotation="gpu")
    raw = dict(c.raw)
    raw["metadata"] = {**raw["metadata"], "namespace": "elsewhere"}
    other = parse_resource_claim(raw)
    assert _resolved(ClaimIndex([other])) == _resolved([other])
    assert _resolved(ClaimIndex([other]))[0][0][2] is True


def test_deleted_claims_leave_every_index():
    c = claim("orphan", owner_uid=POD_UID, annotation="gpu")
    index = ClaimIndex([c])
    del index[claim_key(c)]
    assert list(index.controlled_by(POD_UID)) == [] and dict(index.in_namespace("default")) == {}
    assert _resolved(index)[0][0][2] is True
