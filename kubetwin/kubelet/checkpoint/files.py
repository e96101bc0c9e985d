"""Atomic checkpoint writes: write a temporary file in the same directory, fsync, rename."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ...errors import InputError


def atomic_write(path: str | Path, data: bytes) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path: Path) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"cannot read checkpoint: {exc.strerror}", file=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"checkpoint is corrupted: not valid JSON ({exc.msg} at line {exc.lineno})",
                         file=str(path)) from None
