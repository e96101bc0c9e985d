"""Run one kubetwin command line in a forked copy of this process, with a time and memory limit.

Forking after the CLI's modules are imported makes a case cost what the command itself costs
(no interpreter start-up), while every case still starts from the same clean state: global
switches (``--strict``, the schema release), caches and warnings seen cannot leak from one
case into the next, and a case that hangs in C code (a huge integer power, a regular
expression) or eats all memory is killed without taking the harness down.

The child redirects file descriptors 1 and 2 to files, so C-level writes are captured too. A
case still running after ``timeout`` seconds gets SIGALRM, which raises :class:`Hang` where the
Python code is (its traceback says where it hung); a child that does not react is killed.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

#: exit status the child uses when an exception escaped ``main`` (a traceback)
TRACEBACK_STATUS = 70
#: exit status the child uses when the alarm fired (a hang)
HANG_STATUS = 71


class Hang(BaseException):
    """Raised by the alarm in a case that runs past its time limit."""


@dataclass(frozen=True)
class Outcome:
    status: int                 # the exit status; TRACEBACK_STATUS / HANG_STATUS / -signal for the harness's own
    stdout: str
    stderr: str
    seconds: float
    exception: str = ""         # "ValueError" for a traceback, "Hang" for a hang, "Killed" when SIGKILLed
    location: str = ""          # innermost kubetwin frame: "kubetwin/model/duration.py:parse_duration"
    traceback: str = ""
    truncated: bool = False     # stdout was longer than the harness reads (not judged as JSON/YAML)

    @property
    def crashed(self) -> bool:
        return self.status in (TRACEBACK_STATUS, HANG_STATUS) or self.status < 0


def preload() -> None:
    """Import every command module once, in the parent, so forked children start warm."""
    import importlib

    from kubetwin.cli import main as cli_main

    for module, _attr, _help in cli_main.COMMANDS.values():
        if cli_main._available(module):
            importlib.import_module(module)


def warm(argv: list[str], cwd: Path) -> None:
    """Run one command in this process (output discarded) so its lazy imports and caches
    (API schemas, CEL environment) are ready before children are forked.

    It runs in a copy of the current context: warnings it reports are not remembered as seen
    by the children, and no global switch it sets outlives it."""
    import contextlib
    import contextvars
    import io

    from kubetwin.cli.main import main

    def call() -> None:
        here = os.getcwd()
        os.chdir(cwd)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(argv)
        except SystemExit:
            pass
        finally:
            os.chdir(here)

    contextvars.copy_context().run(call)
    from kubetwin.diagnostics import set_strict
    from kubetwin.model.apischema import set_schema_version

    set_strict(False)
    set_schema_version(None)


def _innermost_kubetwin_frame(tb: object) -> str:
    frames = traceback.extract_tb(tb)  # type: ignore[arg-type]  # tb is set: an exception is being handled
    for frame in reversed(frames):
        path = frame.filename.replace(os.sep, "/")
        i = path.rfind("/kubetwin/")
        if i >= 0 and "/tests/" not in path[:i + 1]:
            return f"{path[i + 1:]}:{frame.name}"
    last = frames[-1] if frames else None
    return f"{Path(last.filename).name}:{last.name}" if last else "?"


def run(argv: list[str], cwd: Path, *, timeout: float = 20.0, memory_bytes: int = 4 << 30,
        max_output: int = 64 << 20) -> Outcome:
    """``kubetwin ARGV`` in ``cwd``, in a forked child; never raises for anything the command does."""
    out_fd, out_path = tempfile.mkstemp(prefix="kubetwin-fuzz-out-")
    err_fd, err_path = tempfile.mkstemp(prefix="kubetwin-fuzz-err-")
    tb_path = out_path + ".traceback"
    start = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = TRACEBACK_STATUS
        try:
            os.chdir(cwd)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            sys.stdin = open(0, "r", closefd=False)
            sys.stdout = open(1, "w", closefd=False, buffering=1)
            sys.stderr = open(2, "w", closefd=False, buffering=1)
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))

            def alarm(_sig: int, _frame: object) -> None:
                raise Hang(f"still running after {timeout:g}s")

            signal.signal(signal.SIGALRM, alarm)
            signal.setitimer(signal.ITIMER_REAL, timeout)
            from kubetwin.cli.main import main

            try:
                main(argv)
                status = 0
            except SystemExit as exc:
                code = exc.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
            except BaseException as exc:  # noqa: BLE001 - a traceback or a hang: record where
                signal.setitimer(signal.ITIMER_REAL, 0)
                status = HANG_STATUS if isinstance(exc, Hang) else TRACEBACK_STATUS
                with open(tb_path, "w") as f:
                    f.write(f"{type(exc).__name__}\n{_innermost_kubetwin_frame(exc.__traceback__)}\n")
                    f.write("".join(traceback.format_exception(exc)))
            signal.setitimer(signal.ITIMER_REAL, 0)
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:  # noqa: BLE001
                pass
        finally:
            os._exit(status)
    os.close(out_fd)
    os.close(err_fd)
    killed = _wait(pid, timeout + 5.0)
    status = killed if killed is not None else 0
    if killed is None:
        _, raw = os.waitpid(pid, 0)
        status = os.waitstatus_to_exitcode(raw)
    seconds = time.monotonic() - start
    truncated = os.path.getsize(out_path) > max_output
    stdout = _read(out_path, max_output)
    stderr = _read(err_path, max_output)
    exception = location = tb = ""
    if status in (TRACEBACK_STATUS, HANG_STATUS) and os.path.exists(tb_path):
        exception, location, tb = (Path(tb_path).read_text(errors="replace").split("\n", 2) + ["", ""])[:3]
        os.unlink(tb_path)
    elif status < 0:
        exception, location = ("Killed" if killed is not None else f"signal {-status}"), "?"
    return Outcome(status, stdout, stderr, seconds, exception, location, tb, truncated)


def _wait(pid: int, limit: float) -> int | None:
    """Wait for the child; kill it after ``limit`` seconds (returns -9 then, else None)."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], limit)
        if ready:
            return None
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return -signal.SIGKILL
    finally:
        os.close(fd)


def _read(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    finally:
        os.unlink(path)
    return data.decode("utf-8", errors="replace")
