"""Checkpoint files: atomic writes (via :mod:`kubetwin.outputs`) and JSON reads with the kubelet's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...outputs import write_atomic


def atomic_write(path: str | Path, data: bytes) -> None:
    """Checkpoints are replaced in one rename, as the kubelet's checkpoint manager does."""
    write_atomic(path, data)


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
