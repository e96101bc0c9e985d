"""The commands the pages of docs/ show run as written and print what the pages show.

The same contract as tests/test_readme.py, for every ``console`` block of ``docs/*.md``: each
``$ command`` runs from the repository root (a copy of its examples and docs), in page order, so a
command may read what an earlier one of its page wrote; it exits with status 0 — 1 when the block
shows an ``error:`` line — and prints the lines shown (``...`` stands for lines left out, a
``wall time`` figure is not compared). Pipelines through other tools (``jq``, ``column``) run in a
shell and are skipped where the tool is not installed. Only the command prefixes of
:data:`NOT_RUN` (the README's, and those below) are not run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import NOT_RUN as README_NOT_RUN
from tests.test_readme import Example, examples, matches

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))

#: command prefix -> why it is not run here
NOT_RUN = {
    **README_NOT_RUN,
    "dask ": "starts a Dask scheduler or worker: a server that runs until stopped",
    "pip install": "installs into an environment (network)",
    "kubetwin simulate scenario.yaml": "a placeholder scenario of the reader's own, run on a Dask cluster",
}


def _console_examples(page: Path) -> list[Example]:
    """The ``$ command`` lines of the page's ``console`` blocks (its ``sh`` blocks hold placeholders)."""
    return [e for e in examples(page.read_text()) if e.expected is not None]


ALL = [(page, e) for page in DOCS for e in _console_examples(page)]


def _skip_reason(cmd: str) -> str | None:
    for prefix, why in NOT_RUN.items():
        if cmd.startswith(prefix):
            return why
    tokens = list(shlex.shlex(cmd, posix=True, punctuation_chars=True))
    tools = [tokens[0]] + [tokens[i + 1] for i, tok in enumerate(tokens[:-1]) if tok == "|"]
    for tool in tools:
        if tool != "kubetwin" and shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's inputs, so commands that write leave the tree clean."""
    dest = tmp_path_factory.mktemp("clone")
    for name in ("examples", "docs"):
        shutil.copytree(ROOT / name, dest / name)
    return dest


def test_the_docs_have_commands_to_check():
    assert len([e for _, e in ALL if _skip_reason(e.command) is None]) >= 6


@pytest.mark.parametrize("page, example", ALL, ids=[f"{p.name}:{e.line}" for p, e in ALL])
def test_docs_command_runs_as_written(page: Path, example: Example, workdir: Path):
    why = _skip_reason(example.command)
    if why:
        pytest.skip(why)
    exe_dir = Path(sys.executable).parent
    if not (exe_dir / "kubetwin").exists():
        pytest.skip("kubetwin is not installed beside this interpreter")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PATH"] = f"{exe_dir}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(example.command, shell=True, cwd=workdir, capture_output=True, text=True,
                          timeout=600, env=env)
    where = f"docs/{page.name}:{example.line}: {example.command}"
    shows_error = any(x.startswith("error:") for x in example.expected or ())
    assert proc.returncode == (1 if shows_error else 0), f"{where}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr
    out = (proc.stderr if shows_error else proc.stdout).splitlines()
    ok, diff = matches(example.expected or (), out)
    assert ok, f"{where}\n{diff}"
