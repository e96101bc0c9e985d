"""Checkpoint files: atomic writes (via :mod:`kubetwin.outputs`) and JSON reads with the kubelet's errors.

Upstream: ``pkg/kubelet/checkpointmanager/checkpoint_manager.go`` (reads, corrupt-checkpoint
errors); the writing is kubetwin's own."""

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


def read_json(path: Path, manager: str = "CPU") -> Any:
    """The checkpoint's JSON; a file that is not JSON is refused as the kubelet refuses it at
    start-up (``could not restore state from checkpoint: ...``), with where the JSON breaks."""
    from .cpu_manager_state import corrupt_error

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read checkpoint: {exc.strerror}", file=str(path)) from None
    limit = limits.MAX_INPUT_BYTES.value()
    if len(data) > limit:
        raise InputError(f"checkpoint is {len(data)} bytes, more than the {limit} bytes kubetwin reads", file=str(path),
                         fix=f"raise the limit with {limits.MAX_INPUT_BYTES.env}=N if this is meant")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text (byte {exc.start})"
    except json.JSONDecodeError as exc:
        reason = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        reason = "not valid JSON: nested too deeply"
    except ValueError as exc:  # a number of thousands of digits
        reason = f"not valid JSON: {exc}"
    err = corrupt_error(str(path), manager, path.name, reason)
    err.path = ""
    raise err
