"""Checkpoint files: atomic writes (via :mod:`kubetwin.outputs`) and JSON reads with the kubelet's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ... import limits
from ...errors import InputError
from ...outputs import write_atomic


def atomic_write(path: str | Path, data: bytes) -> None:
    """Checkpoints are replaced in one rename, as the kubelet's checkpoint manager does."""
    write_atomic(path, data)


def read_json(path: Path) -> Any:
    """A checkpoint's JSON; anything unreadable is the kubelet's "corrupted checkpoint", naming the file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read checkpoint: {exc.strerror}", file=str(path)) from None
    limit = limits.MAX_INPUT_BYTES.value()
    if len(raw) > limit:
        raise InputError(f"checkpoint is {len(raw)} bytes, more than the {limit} bytes kubetwin reads", file=str(path),
                         fix=f"raise the limit with {limits.MAX_INPUT_BYTES.env}=N if this is meant")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"checkpoint is corrupted: not UTF-8 text (byte {exc.start})", file=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"checkpoint is corrupted: not valid JSON ({exc.msg} at line {exc.lineno})",
                         file=str(path)) from None
    except RecursionError:
        raise InputError("checkpoint is corrupted: JSON nesting is too deep", file=str(path)) from None
    except ValueError as exc:  # a number of thousands of digits
        raise InputError(f"checkpoint is corrupted: {exc}", file=str(path)) from None
