"""Generate mutated cases, run them, and summarise failures by class.

    .venv/bin/python -m tests.fuzz --cases 10000            # on demand: tens of thousands
    .venv/bin/python -m tests.fuzz --cases 500 --command admit --save /tmp/fuzz-failures

Cases are drawn from a seeded random generator (``--seed``), so a run is reproducible and a
failing case can be replayed by its number (``--only N``); ``--save DIR`` writes each failing
case's files and command line for replay. Commands are drawn evenly (the conformance cases
would otherwise make ``explain`` nine cases in ten), ``simulate`` less often since it is slower.
"""

from __future__ import annotations

import argparse
import collections
import random
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import execute
from .mutations import Mutated, NotApplicable, mutate, mutate_twice
from .oracle import Failure, judge, snapshot
from .seeds import Seed, all_seeds

#: relative weight of a command when drawing cases (slow commands less often)
WEIGHTS = {"simulate": 0.25}


@dataclass
class Report:
    cases: int = 0
    seconds: float = 0.0
    statuses: collections.Counter = field(default_factory=collections.Counter)
    known_invalid: int = 0
    by_command: collections.Counter = field(default_factory=collections.Counter)
    by_mutation: collections.Counter = field(default_factory=collections.Counter)
    classes: dict[str, list[tuple[int, Failure, Mutated]]] = field(default_factory=dict)

    def add(self, number: int, case: Mutated, outcome: execute.Outcome, failures: list[Failure]) -> None:
        self.cases += 1
        self.statuses[outcome.status] += 1
        self.known_invalid += case.known_invalid
        self.by_command[case.seed.command] += 1
        self.by_mutation[case.mutation.split("+")[0]] += 1
        for f in failures:
            self.classes.setdefault(f"[{f.kind}] {f.klass}", []).append((number, f, case))

    @property
    def failures(self) -> int:
        return sum(len(v) for v in self.classes.values())

    def counts(self, kind: str) -> int:
        return sum(len(v) for k, v in self.classes.items() if k.startswith(f"[{kind}]"))

    def summary(self) -> str:
        lines = [f"fuzz: {self.cases} cases in {self.seconds:.0f}s over {len(self.by_command)} commands; "
                 f"exit statuses {dict(sorted(self.statuses.items()))}; {self.known_invalid} known-invalid inputs",
                 "  commands: " + ", ".join(f"{c} {n}" for c, n in sorted(self.by_command.items())),
                 "  mutations: " + ", ".join(f"{m} {n}" for m, n in sorted(self.by_mutation.items())),
                 f"  tracebacks {self.counts('traceback')}, hangs {self.counts('hang')}, "
                 f"exit-0-on-invalid {self.counts('exit-0-on-invalid')}, invalid output {self.counts('invalid-output')}, "
                 f"errors naming no file {self.counts('bad-error')}, partial output {self.counts('partial-output')}, "
                 f"bad status {self.counts('bad-status')}"]
        for klass, items in sorted(self.classes.items(), key=lambda kv: -len(kv[1])):
            number, failure, case = items[0]
            lines.append(f"  {len(items):5d} x {klass}")
            lines.append(f"          e.g. case {number}: {case.describe()[:200]}")
            lines.append(f"               {failure.detail[:300]}")
        return "\n".join(lines)


def seeds_by_command(seeds: list[Seed]) -> dict[str, list[Seed]]:
    out: dict[str, list[Seed]] = collections.defaultdict(list)
    for s in seeds:
        out[s.command].append(s)
    return dict(out)


def generate(number: int, base_seed: int, groups: dict[str, list[Seed]]) -> Mutated:
    """Case ``number`` of the campaign ``base_seed`` (the same numbers give the same cases)."""
    rng = random.Random(f"{base_seed}:{number}")
    commands = sorted(groups)
    weights = [WEIGHTS.get(c, 1.0) for c in commands]
    for _ in range(50):
        seed = rng.choice(groups[rng.choices(commands, weights)[0]])
        try:
            return mutate_twice(rng, seed) if rng.random() < 0.15 else mutate(rng, seed)
        except (NotApplicable, RecursionError, ValueError, MemoryError):  # nothing to mutate, or too deep/big to re-dump
            continue
    raise RuntimeError(f"case {number}: no applicable mutation found")


def materialise(case: Mutated, workdir: Path) -> None:
    for name, data in case.files.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for d in case.seed.dirs:
        (workdir / d).mkdir(parents=True, exist_ok=True)


def run_case(case: Mutated, timeout: float) -> tuple[execute.Outcome, list[Failure]]:
    with tempfile.TemporaryDirectory(prefix="kubetwin-fuzz-") as tmp:
        workdir = Path(tmp)
        materialise(case, workdir)
        before = snapshot(workdir)
        outcome = execute.run(list(case.argv), workdir, timeout=timeout)
        return outcome, judge(case, outcome, workdir, before)


def warm_up(groups: dict[str, list[Seed]]) -> None:
    execute.preload()
    for seeds in groups.values():
        seed = seeds[0]
        with tempfile.TemporaryDirectory(prefix="kubetwin-fuzz-warm-") as tmp:
            case = Mutated(seed, "none", "", seed.argv, dict(seed.files), False)
            materialise(case, Path(tmp))
            execute.warm(list(seed.argv), Path(tmp))


def _limit_memory(limit: int = 8 << 30) -> None:
    """The harness itself stays under ``limit`` bytes: a mutation that blows up while being made
    is skipped (MemoryError) instead of exhausting the machine."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def campaign(cases: int, *, base_seed: int = 0, timeout: float = 30.0, commands: tuple[str, ...] = (),
             start: int = 0, on_case: Callable[[int, Mutated, execute.Outcome, list[Failure]], None] | None = None,
             seeds: list[Seed] | None = None) -> Report:
    groups = seeds_by_command(seeds if seeds is not None else all_seeds())
    if commands:
        groups = {c: s for c, s in groups.items() if c in commands}
    warm_up(groups)
    report = Report()
    began = time.monotonic()
    for number in range(start, start + cases):
        case = generate(number, base_seed, groups)
        outcome, failures = run_case(case, timeout)
        report.add(number, case, outcome, failures)
        if on_case:
            on_case(number, case, outcome, failures)
    report.seconds = time.monotonic() - began
    return report


def save(case: Mutated, number: int, folder: Path) -> None:
    dest = folder / f"case-{number}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    materialise(case, dest)
    (dest / "COMMAND").write_text(f"# {case.describe()}\nkubetwin {shlex.join(case.argv)}\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0, help="campaign seed (the same seed gives the same cases)")
    p.add_argument("--start", type=int, default=0, help="first case number")
    p.add_argument("--only", type=int, default=None, help="run only this case number (verbose)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a case counts as a hang")
    p.add_argument("--command", action="append", default=[], help="only seeds of this command (repeatable)")
    p.add_argument("--save", type=Path, default=None, help="write each failing case's files here")
    p.add_argument("--progress", type=int, default=500, help="print a line every N cases")
    args = p.parse_args(argv)
    _limit_memory()

    def each(number: int, case: Mutated, outcome: execute.Outcome, failures: list[Failure]) -> None:
        if args.only is not None:
            print(f"case {number}: {case.describe()}\n  kubetwin {shlex.join(case.argv)}\n  exit {outcome.status} "
                  f"in {outcome.seconds:.2f}s\n  stderr: {outcome.stderr[-1500:]}\n  stdout: {outcome.stdout[:500]}")
            if outcome.traceback:
                print(outcome.traceback)
            for f in failures:
                print(f"  FAIL [{f.kind}] {f.klass}: {f.detail}")
        if failures and args.save:
            save(case, number, args.save)
        if args.progress and (number - args.start + 1) % args.progress == 0:
            print(f"... {number - args.start + 1} cases", file=sys.stderr, flush=True)

    if args.only is not None:
        report = campaign(1, base_seed=args.seed, timeout=args.timeout, commands=tuple(args.command), start=args.only,
                          on_case=each)
    else:
        report = campaign(args.cases, base_seed=args.seed, timeout=args.timeout, commands=tuple(args.command),
                          start=args.start, on_case=each)
    print(report.summary())
    return 1 if report.failures else 0


