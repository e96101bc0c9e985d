"""Writing result files: checked before any work starts, written atomically.

A command that runs for a while must not fail at the very end because an output folder is
missing or read-only, and a reader must never see a half-written report or state file:
:func:`check_output` runs when the command starts (creating missing parent folders),
:func:`write_atomic` writes a temporary file beside the target, fsyncs and renames it.

Not an upstream module: kubetwin's own file writing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import InputError


def check_output(path: str | Path, option: str) -> Path:
    """Make sure ``path`` can be written (parent folder created if missing); a clear error otherwise."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory, expected a file name", file=str(p), path=option)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the folder {parent}: {exc.strerror or exc}", file=str(p), path=option) from None
    if not os.access(parent, os.W_OK):
        raise InputError(f"the folder {parent} is not writable", file=str(p), path=option)
    return p


def write_atomic(path: str | Path, data: str | bytes, option: str = "") -> None:
    """Replace ``path`` with ``data`` in one rename, so readers see the old file or the new one."""
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent if str(p.parent) else ".")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(p), path=option) from None
    try:
        os.fchmod(fd, _mode_for(p))  # as a plain open() would create it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except OSError as exc:
        _unlink(tmp)
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(p), path=option) from None
    except BaseException:
        _unlink(tmp)
        raise


def _mode_for(p: Path) -> int:
    """The mode the file keeps (an existing file's) or gets (0666 less the umask)."""
    try:
        return p.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
