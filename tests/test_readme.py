"""The README's commands run as written on a fresh clone, and show what they print.

Every ``console`` and ``sh`` block of README.md is read: each ``$ command`` (or each command line
of an ``sh`` block) is run from the repository root with the installed ``kubetwin``; it must exit
with status 0 — 1 when the block shows an ``error:`` line, the documented status for bad input —
and, in a ``console`` block, print what the block shows. A ``...`` line in a block stands for
lines left out; a ``wall time`` row is compared without its figure. Only the commands listed in
:data:`NOT_RUN` are skipped, each with its reason.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: command prefix -> why it is not run here
NOT_RUN = {
    "scripts/demo": "installs into .venv with pip (network)",
    "scripts/test": "is this test suite (running it here would recurse)",
    ".venv/bin/python benchmarks/": "a benchmark: minutes of wall-clock measurement, kept out of unit tests",
    "kubetwin discover": "reads this machine's hardware (/sys): the answer differs per machine",
    "KUBETWIN_FUZZ_CASES=": "a fuzzing campaign on demand: thousands of cases, minutes",
    ".venv/bin/python -m tests.fuzz": "a fuzzing campaign on demand: thousands of cases, minutes",
    "kubetwin snapshot --kubeconfig": "reads a live cluster (tests/cli/test_snapshot.py runs it against a local API server)",
    "kubetwin serve": "a server: runs until stopped (tests/serve/test_readme_session.py runs the README's session)",
    "curl": "calls the server above (tests/serve/test_readme_session.py runs the README's session)",
}


@dataclass(frozen=True)
class Example:
    line: int            # README line of the command
    command: str
    expected: tuple[str, ...] | None   # shown output (console blocks), None for sh blocks


def examples(text: str) -> list[Example]:
    out: list[Example] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(console|sh)\s*$", lines[i])
        if not m:
            i += 1
            continue
        kind, start = m.group(1), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = lines[start:j]
        out += _console(block, start + 1) if kind == "console" else _sh(block, start + 1)
        i = j + 1
    return out


def _console(block: list[str], first: int) -> list[Example]:
    out: list[Example] = []
    k = 0
    while k < len(block):
        if not block[k].startswith("$ "):
            k += 1
            continue
        line_no = first + k
        cmd = block[k][2:]
        while cmd.endswith("\\") and k + 1 < len(block):
            k += 1
            cmd = cmd[:-1].rstrip() + " " + block[k].strip()
        k += 1
        shown = []
        while k < len(block) and not block[k].startswith("$ "):
            shown.append(block[k])
            k += 1
        out.append(Example(line_no, cmd, tuple(shown)))
    return out


def _sh(block: list[str], first: int) -> list[Example]:
    out = []
    for k, raw in enumerate(block):
        cmd = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if cmd:
            out.append(Example(first + k, cmd, None))
    return out


ALL = examples(README.read_text())


def _skip_reason(cmd: str) -> str | None:
    for prefix, why in NOT_RUN.items():
        if cmd.startswith(prefix):
            return why
    return None


def _kubetwin() -> list[str]:
    exe = Path(sys.executable).parent / "kubetwin"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kubetwin"]


def _argv(cmd: str) -> list[str]:
    argv = shlex.split(cmd)
    if argv[0] == "kubetwin":
        return _kubetwin() + argv[1:]
    return argv


def _normalize(line: str) -> str:
    line = line.rstrip()
    if "wall time" in line:
        line = re.sub(r"\d+\.\d+ s", "N s", line)
    return line


def matches(shown: tuple[str, ...], actual: list[str]) -> tuple[bool, str]:
    """Whether ``actual`` holds the ``shown`` lines in order, ``...`` standing for any lines."""
    want = [_normalize(x) for x in shown]
    got = [_normalize(x) for x in actual]
    while want and not want[-1]:
        want.pop()
    while got and not got[-1]:
        got.pop()
    segments: list[list[str]] = [[]]
    for w in want:
        if w.strip() == "...":
            segments.append([])
        else:
            segments[-1].append(w)
    elided = len(segments) > 1
    pos = 0
    for n, seg in enumerate(segments):
        if not seg:
            continue
        anchored = not elided or (n == 0)
        found = -1
        for start in range(pos, len(got) - len(seg) + 1):
            if got[start:start + len(seg)] == seg:
                found = start
                break
            if anchored:
                break
        if found < 0:
            near = got[pos:pos + len(seg) + 2]
            return False, "expected:\n" + "\n".join(seg) + "\n\ngot:\n" + "\n".join(near)
        pos = found + len(seg)
    if not elided and pos != len(got):
        return False, "more output than shown:\n" + "\n".join(got[pos:pos + 5])
    return True, ""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's inputs, so commands that write (reports) leave the tree clean."""
    dest = tmp_path_factory.mktemp("clone")
    for name in ("examples", "docs", "README.md"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name)
        else:
            shutil.copy(src, dest / name)
    return dest


def test_the_readme_has_commands_to_check():
    assert len([e for e in ALL if _skip_reason(e.command) is None]) >= 8


def test_every_skipped_readme_command_is_listed_with_its_reason():
    skipped = {e.command for e in ALL if _skip_reason(e.command)}
    assert all(any(c.startswith(p) for p in NOT_RUN) for c in skipped)


@pytest.mark.parametrize("example", [e for e in ALL if _skip_reason(e.command) is None],
                         ids=lambda e: f"README.md:{e.line}")
def test_readme_command_runs_as_written(example: Example, workdir: Path):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(_argv(example.command), cwd=workdir, capture_output=True, text=True, timeout=600,
                          env=env)
    shows_error = bool(example.expected) and any(x.startswith("error:") for x in example.expected)
    assert proc.returncode == (1 if shows_error else 0), f"{example.command}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr
    if example.expected is not None:
        out = (proc.stderr if shows_error else proc.stdout).splitlines()
        ok, why = matches(example.expected, out)
        assert ok, f"README.md:{example.line}: {example.command}\n{why}"


def test_every_example_file_the_readme_names_is_shipped():
    named = set(re.findall(r"\b(examples/[\w./-]+\.(?:ya?ml|json))", README.read_text()))
    assert named
    missing = sorted(p for p in named if not (ROOT / p).is_file())
    assert not missing, missing
