#!/usr/bin/env python3
"""Run the shared conformance suite with progress, on all cases or on those selected.

    scripts/conformance.py [-k EXPR] [CASE_OR_DIR ...]

The runner (``$SHARED/conformance/run``) is not ours to change, so selection happens here: the
cases under the given paths (default: the whole suite) whose path or name matches ``-k EXPR``
(pytest's -k syntax: substrings with ``and``/``or``/``not``, case-insensitive) are handed to the
runner as paths. Its per-case output becomes a progress line (rewritten in place on a terminal,
every 50 cases otherwise); failures and the final ``conformance: N passed, M failed`` line are
printed as the runner prints them. The exit status is the runner's (1 when a case fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import yaml


def _matcher(expr: str) -> Callable[[str], bool]:
    """``pytest -k`` semantics over one text (the case's path and name)."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # pragma: no cover - pytest is a test dependency
        return lambda text: expr.lower() in text.lower()
    compiled = Expression.compile(expr)

    def match(text: str) -> bool:
        low = text.lower()
        return compiled.evaluate(lambda name, **_: name.lower() in low)

    return match


def _cases(suite: Path, targets: list[Path]) -> list[Path]:
    """Case files the runner would visit for ``targets`` (it skips machines/ and bad-input/)."""
    out: list[Path] = []
    for t in targets:
        if t.is_file():
            out.append(t)
        else:
            out += sorted(p for p in t.rglob("*.yaml") if not {"machines", "bad-input"} & set(p.parts))
    return out


def _kind_and_name(path: Path) -> tuple[str, str]:
    try:
        case = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return "", path.name
    if not isinstance(case, dict):
        return "", path.name
    return str(case.get("kind") or ""), str(case.get("name") or path.name)


def main(argv: list[str]) -> int:
    shared = Path(os.environ.get("KUBETWIN_SHARED", "../shared"))
    suite = shared / "conformance"
    runner = suite / "run"
    expr = None
    targets: list[Path] = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "-k" and args:
            expr = args.pop(0)
        elif a.startswith("-k") and len(a) > 2:
            expr = a[2:].lstrip("=")
        else:
            targets.append(Path(a))
    cases = _cases(suite, targets or [suite])
    picked: list[Path] = []
    match = _matcher(expr) if expr else None
    for p in cases:
        kind, name = _kind_and_name(p)
        if not kind:
            continue  # not a case (the runner skips it too)
        rel = str(p.resolve().relative_to(suite.resolve())) if p.resolve().is_relative_to(suite.resolve()) else str(p)
        if match is None or match(f"{rel} {name}"):
            picked.append(p)
    if not picked:
        print(f"conformance: no case matches{f' -k {expr!r}' if expr else ''}; nothing run")
        return 0
    print(f"running {len(picked)} conformance case(s)" + (f" matching -k {expr!r}" if expr else ""), flush=True)
    cmd = [sys.executable, str(runner), "--verbose", *(str(p) for p in (picked if (expr or targets) else [suite]))]
    tty = sys.stdout.isatty()
    done = failed = 0
    total = len(picked)
    # The runner is called exactly as anyone calls it (FORMAT.md's commands, no extra options).
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ok   "):
            done += 1
        elif line.startswith("FAIL "):
            done += 1
            failed += 1
            print(("\r\033[K" if tty else "") + line, end="", flush=True)
            continue
        elif line.startswith("     "):  # the detail lines of a failure
            print(line, end="", flush=True)
            continue
        else:
            print(("\r\033[K" if tty else "") + line, end="", flush=True)
            continue
        if tty:
            print(f"\r\033[Kconformance: {done}/{total}" + (f", {failed} failed" if failed else ""), end="", flush=True)
        elif done % 50 == 0:
            print(f"conformance: {done}/{total}" + (f", {failed} failed" if failed else ""), flush=True)
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
