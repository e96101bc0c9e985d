"""What a kept DynamicResources verdict is keyed by: the claims' namespace and specs."""

from __future__ import annotations

import json
from types import SimpleNamespace

from kubetwin.scheduler.plugins.dynamicresources.verdicts import claims_signature

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}


def claim(spec, name="c"):
    return SimpleNamespace(raw={"metadata": {"name": name}, "spec": spec})


def test_claims_sharing_one_spec_object_have_one_signature_whatever_their_names():
    assert claims_signature("default", [claim(SPEC, "a")]) == claims_signature("default", [claim(SPEC, "b")])


def test_equal_specs_in_separate_objects_have_the_same_signature():
    copy = json.loads(json.dumps(SPEC))
    assert claims_signature("default", [claim(SPEC)]) == claims_signature("default", [claim(copy)])


def test_the_namespace_and_the_spec_content_tell_signatures_apart():
    other = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "big-gpu"}}]}}
    base = claims_signature("default", [claim(SPEC)])
    assert claims_signature("team-b", [claim(SPEC)]) != base
    assert claims_signature("default", [claim(other)]) != base
    assert claims_signature("default", [claim(SPEC), claim(SPEC)]) != base
