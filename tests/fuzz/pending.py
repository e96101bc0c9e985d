"""Failure classes the fuzzer finds that belong to work under way elsewhere in issue 11.

Strict decoding of kubetwin's own formats (MachineInfo, the Summary API, timelines,
checkpoints, Node labels), of DRA objects, and quantities as Kubernetes parses them are parts A
and B of issue 11 (plugin args: the scheduler reshape); until they land, an unknown or misspelt
field in those inputs is still read with exit status 0. The campaign reports these classes
(``pending`` in the summary) but the CI test does not fail on them. Delete an entry when the
input it names is strict: the test then holds it to the full rule.

Each entry is (mutation, input file of the seed) as the oracle classes them; tracebacks, hangs,
invalid output and half-written files are never pending.
"""

from __future__ import annotations

import fnmatch

#: input files (shell patterns on the seed's file names) whose strictness is under way elsewhere
LOOSE_INPUTS: dict[str, str] = {}
#: mutations that make an input invalid only through a field the strict decoders will refuse
STRICTNESS_MUTATIONS = frozenset({"unknown-field", "misspelt-field", "duplicate-key", "wrong-kind", "retyped-field",
                                  "extreme-quantity"})


#: option values whose strictness is under way elsewhere (part B: --variant and --feature-gates)
LOOSE_OPTIONS: dict[str, str] = {}


def pending_reason(kind: str, mutation: str, target: str, detail: str = "") -> str | None:
    """Why this failure is left to another part of issue 11, or None when it must not happen."""
    if "+" in mutation:  # two mutations: pending if one of them is
        reasons = [pending_reason(kind, m, t, d) for m, t, d in zip(mutation.split("+"), target.split("+"),
                                                                    detail.split("; ") + [""] * 2)]
        return next((r for r in reasons if r), None)
    if kind == "exit-0-on-invalid" and mutation == "option-value":
        return next((why for option, why in LOOSE_OPTIONS.items() if detail.startswith(option)), None)
    if kind != "exit-0-on-invalid" or mutation not in STRICTNESS_MUTATIONS:
        return None
    return next((why for pattern, why in LOOSE_INPUTS.items() if fnmatch.fnmatch(target, pattern)), None)
