"""Result files are checked before work starts and written atomically."""

import os
import subprocess
import sys

import pytest

from kubetwin.errors import InputError
from kubetwin.outputs import check_output, write_atomic


def test_missing_parent_folders_are_created(tmp_path):
    target = tmp_path / "a" / "b" / "report.html"
    assert check_output(target, "--report") == target
    assert target.parent.is_dir()


def test_a_directory_is_not_an_output_file(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        check_output(tmp_path, "--report")


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "m.prom"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["m.prom"]


def test_simulate_refuses_an_unwritable_report_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = subprocess.run([sys.executable, "-m", "kubetwin", "simulate", "--no-progress",
                          "--report", str(blocker / "r.html")], capture_output=True, text=True)
    assert out.returncode == 1
    assert "--report" in out.stderr and "Traceback" not in out.stderr
