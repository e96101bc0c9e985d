"""What a run of a mutated input may do, and the failure classes it falls into otherwise.

Allowed: exit status 0 with valid output (JSON that parses for ``-o json``, YAML without anchors
for ``-o yaml``), or exit status 1 with one ``error: FILE...`` line naming an input file (2 for
a usage error in an option value). Never: a traceback, a hang, exit 0 on a known-invalid input,
an error that names no input, a half-written output or state file.

A failure's *class* leaves out what varies from case to case (the seed, the field, the
value): a traceback is classed by exception type and innermost kubetwin function, an exit 0 on
invalid input by command and mutation, so the summary lists bugs, not cases.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .execute import Outcome
from .mutations import Mutated


@dataclass(frozen=True)
class Failure:
    kind: str       # traceback | hang | exit-0-on-invalid | bad-error | invalid-output | partial-output | bad-status
    klass: str      # the class: what stays the same across cases of one bug
    detail: str     # this case: the message, the traceback's last line


_ANCHOR = re.compile(r"(^|[\s\[{,:-])&id\d+", re.M)


def judge(case: Mutated, outcome: Outcome, workdir: Path, before: set[str]) -> list[Failure]:
    """Every way ``outcome`` breaks the rules (empty: the run was fine)."""
    command = case.seed.command
    failures: list[Failure] = []
    if outcome.exception == "Hang" or outcome.exception == "Killed":
        return [Failure("hang", f"hang {command} at {outcome.location}", case.describe())]
    if outcome.crashed or "Traceback (most recent call last)" in outcome.stderr:
        last = (outcome.traceback.strip().splitlines() or [outcome.stderr.strip()[-200:]])[-1]
        return [Failure("traceback", f"{outcome.exception or 'traceback'} at {outcome.location}", f"{last[:200]}")]
    if outcome.status == 0:
        if case.known_invalid:
            failures.append(Failure("exit-0-on-invalid", f"{command}: {case.mutation} on {_kind_of(case.target)}",
                                    case.describe()))
        failures.extend(_check_output(case, outcome, workdir))
    elif outcome.status == 1:
        failures.extend(_check_error(case, outcome))
        failures.extend(_check_no_partial_output(case, workdir, before))
    elif outcome.status == 2:
        if "option-value" not in case.mutation:
            failures.append(Failure("bad-status", f"{command}: usage error (2) for a bad file ({case.mutation})",
                                    _last_line(outcome.stderr)))
    else:
        failures.append(Failure("bad-status", f"{command}: exit status {outcome.status}", _last_line(outcome.stderr)))
    return failures


def strict_json(text: str) -> object:
    """JSON as JSON defines it: Python's reader also takes NaN and Infinity, which no other does."""
    def refuse(name: str) -> object:
        raise json.JSONDecodeError(f"{name} is not JSON", name, 0)

    return json.loads(text, parse_constant=refuse)


def _kind_of(target: str) -> str:
    """The role of a file in its seed, for classes: 'state/cpu_manager_state', 'pods.yaml'."""
    return target


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(nothing on stderr)"


def _check_error(case: Mutated, outcome: Outcome) -> list[Failure]:
    command = case.seed.command
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("error: ")]
    if not errors:
        return [Failure("bad-error", f"{command}: exit 1 without an 'error:' line", _last_line(outcome.stderr))]
    message = errors[-1]
    if "option-value" in case.mutation:  # the error may be about the option
        return []
    names = {n for n in case.files} | {n.split("/")[0] for n in case.files}
    if not any(n in message for n in names):
        return [Failure("bad-error", f"{command}: error names no input file ({case.mutation} on {case.target})",
                        message[:300])]
    return []


def _check_output(case: Mutated, outcome: Outcome, workdir: Path) -> list[Failure]:
    command = case.seed.command
    fmt = case.seed.output_format if not outcome.truncated else "table"  # a cut text cannot be parsed
    out: list[Failure] = []
    if fmt == "json":
        try:
            strict_json(outcome.stdout)
        except json.JSONDecodeError as exc:
            out.append(Failure("invalid-output", f"{command}: -o json printed invalid JSON", f"{exc}: {outcome.stdout[:120]!r}"))
    elif fmt in ("yaml", "nrt"):
        try:
            list(yaml.safe_load_all(outcome.stdout))
        except yaml.YAMLError as exc:
            out.append(Failure("invalid-output", f"{command}: -o {fmt} printed invalid YAML", str(exc)[:200]))
        if _ANCHOR.search(outcome.stdout):
            out.append(Failure("invalid-output", f"{command}: -o {fmt} printed YAML anchors", outcome.stdout[:120]))
    elif fmt == "machineinfo":
        try:
            strict_json(outcome.stdout)
        except json.JSONDecodeError as exc:
            out.append(Failure("invalid-output", f"{command}: -o machineinfo printed invalid JSON", str(exc)))
    for name in case.seed.outputs:
        path = workdir / name
        for f in ([path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []):
            if f.is_file() and f.name.startswith("."):
                out.append(Failure("partial-output", f"{command}: temporary file left in {name}", f.name))
            elif f.is_file() and (f.suffix == ".json" or f.parent.name.endswith("state") or f.name.endswith("_state")):
                try:
                    strict_json(f.read_text())
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    out.append(Failure("invalid-output", f"{command}: wrote invalid JSON to {name}", f"{f.name}: {exc}"))
    return out


def _check_no_partial_output(case: Mutated, workdir: Path, before: set[str]) -> list[Failure]:
    """After a refusal, no output file the run created (state folders may exist, empty)."""
    command = case.seed.command
    created = sorted(set(_listing(workdir)) - before)
    written = [p for p in created if any(p == o or p.startswith(o + "/") for o in case.seed.outputs)
               and not (workdir / p).is_dir()]
    if written:
        return [Failure("partial-output", f"{command}: refused input but wrote {written[0].split('/')[0]}", ", ".join(written[:3]))]
    return []


def _listing(workdir: Path) -> list[str]:
    return [str(p.relative_to(workdir)) for p in workdir.rglob("*")]


def snapshot(workdir: Path) -> set[str]:
    return set(_listing(workdir))
