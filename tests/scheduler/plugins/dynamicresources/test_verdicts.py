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


def _results(entry, pod_claims="claims"):
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import CycleResults

    return CycleResults(pod_claims, entry, {"a": 0, "b": 1}, lambda pc, outcome: (pc, outcome))


def test_a_cycles_results_read_the_verdicts_without_copying_them():
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import ClaimVerdicts

    entry = ClaimVerdicts(2)
    entry.fits[0], entry.outcomes[0] = True, "on-a"
    results = _results(entry)
    assert results.outcomes is entry.outcomes and results.get("a") == ("claims", "on-a")


def test_a_cycles_results_keep_what_they_read_when_the_entry_changes_afterwards():
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import ClaimVerdicts

    entry = ClaimVerdicts(2)
    entry.fits[0], entry.outcomes[0] = True, "on-a"
    results = _results(entry)
    entry.before_write()
    entry.fits[0], entry.outcomes[0] = False, None
    entry.fits[1], entry.outcomes[1] = True, "on-b"
    assert results.get("a") == ("claims", "on-a") and results.get("b") is None and results


def test_the_next_cycles_results_on_the_same_entry_leave_the_earlier_ones_their_view():
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import ClaimVerdicts

    entry = ClaimVerdicts(2)
    entry.fits[0], entry.outcomes[0] = True, "on-a"
    first = _results(entry, "first")
    second = _results(entry, "second")
    entry.before_write()
    entry.fits[0], entry.outcomes[0] = False, None
    assert first.get("a") == ("first", "on-a") and second.get("a") == ("second", "on-a")


def test_results_nobody_holds_any_more_cost_the_entry_no_copy():
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import ClaimVerdicts

    entry = ClaimVerdicts(2)
    _results(entry)
    entry.before_write()
    assert entry.lent is None


# ---------------------------------------------------------------------------- stale nodes
def _full_scan(cache, entry):
    return (entry.seen != cache.version).nonzero()[0].tolist()


def test_stale_nodes_read_from_the_changes_are_those_a_full_scan_finds():
    import random

    from kubetwin.scheduler.plugins.dynamicresources.verdicts import VerdictCache

    rng = random.Random(7)
    n = 40
    cache = VerdictCache([f"n{i}" for i in range(n)])
    for i in range(n):
        cache.watch(i, [SimpleNamespace(driver="d", name=f"pool-{i}"), SimpleNamespace(driver="d", name="shared")])
    entries = [cache.verdicts(f"sig-{k}") for k in range(3)]
    for step in range(2000):
        what = rng.random()
        if what < 0.5:
            pools = rng.sample([f"pool-{i}" for i in range(n)] + ["shared"] * 2, rng.randrange(1, 3))
            cache.devices_changed([SimpleNamespace(driver="d", pool=p) for p in pools])
        elif what < 0.55:
            i = rng.randrange(n)
            cache.node_changed(f"n{i}")
            cache.watch(i, [SimpleNamespace(driver="d", name=f"pool-{i}")])
        else:
            entry = rng.choice(entries)
            stale, mark = cache.stale(entry)
            assert stale == _full_scan(cache, entry), step
            gave_up = rng.random() < 0.1   # an allocation error part way: the rest stays stale
            for k, i in enumerate(stale):
                if gave_up and k >= len(stale) // 2:
                    break
                if rng.random() < 0.02:   # an outcome for its own cycle only
                    entry.seen[i] = -1
                    entry.volatile = True
                else:
                    entry.seen[i] = cache.version[i]
            if not gave_up:
                entry.read_to = mark


def test_an_entry_that_never_caught_up_reads_every_node():
    from kubetwin.scheduler.plugins.dynamicresources.verdicts import VerdictCache

    cache = VerdictCache(["a", "b", "c"])
    stale, _ = cache.stale(cache.verdicts("sig"))
    assert stale == [0, 1, 2]
