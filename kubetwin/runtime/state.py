"""The state folder: a node carried from one ``kubetwin runtime`` call to the next.

``node.json`` records what the node is (a digest of the machine, the policy resource, the
kubelet configuration, the Python plugins and isolated CPUs it was started with) and what
happened to it: every step's deleted and created pods, in order. The next call checks that it
is given the same node, replays the steps (the plugins decide exactly as before: every
decision is deterministic) and goes on from there. A snapshot of the result — containers with
their cpusets and grants, the policy's pools — is written beside the history for people and
other tools; the history is what is replayed.

The file is written atomically (a reader sees the old state or the new one) and only after
the step succeeded.

Not an upstream module: kubetwin's own state folder for ``kubetwin runtime`` (written atomically).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..outputs import write_atomic

STATE_FILE = "node.json"
STATE_KIND = "KubetwinRuntimeNode"
STATE_VERSION = 1


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


@dataclass
class NodeState:
    identity: dict[str, str]
    history: list[dict[str, Any]] = field(default_factory=list)
    #: the snapshot read with the state (None for a new node): what the history must give again
    snapshot: dict[str, Any] | None = None

    def to_json(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        from .. import __version__ as version

        return {"kind": STATE_KIND, "version": STATE_VERSION, "kubetwin": version, "node": self.identity,
                "history": self.history, "snapshot": snapshot}


def load_state(folder: str | Path) -> NodeState:
    p = Path(folder) / STATE_FILE
    if not Path(folder).is_dir():
        raise InputError("no such state folder", file=str(folder), path="--state-dir",
                         fix="give the folder a previous call wrote with --write-state")
    if not p.exists():
        raise InputError(f"the state folder has no {STATE_FILE}", file=str(folder), path="--state-dir",
                         fix="give the folder a previous call wrote with --write-state")
    from ..model.loader import parse_json

    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"not a kubetwin runtime state file: {exc}", file=str(p)) from None
    # duplicate keys, NaN and deep nesting refused with the file named, as for every JSON input
    doc = parse_json(text, str(p))
    if not isinstance(doc, dict) or doc.get("kind") != STATE_KIND:
        raise InputError(f"not a kubetwin runtime state file (kind is not {STATE_KIND})", file=str(p))
    if doc.get("version") != STATE_VERSION:
        raise InputError(f"state file version {doc.get('version')} is not {STATE_VERSION}", file=str(p),
                         fix="write a new state folder with this kubetwin")
    _check_keys(doc, _STATE_KEYS, "", p)
    node, history, snapshot = doc.get("node"), doc.get("history"), doc.get("snapshot")
    if not isinstance(node, dict) or not isinstance(history, list):
        raise InputError("state file without node identity or history", file=str(p))
    for key, value in node.items():
        if not isinstance(value, str):
            raise InputError(f"expected a string, got {type(value).__name__}", file=str(p), path=f"node.{key}")
    for i, step in enumerate(history):
        if not isinstance(step, dict):
            raise InputError("expected an object with delete and create", file=str(p), path=f"history[{i}]")
        _check_keys(step, _STEP_KEYS, f"history[{i}].", p)
        deletes = step.get("delete") or []
        if not isinstance(deletes, list) or not all(isinstance(d, str) for d in deletes):
            raise InputError("expected a list of namespace/name strings", file=str(p), path=f"history[{i}].delete")
        if not isinstance(step.get("create") or [], list):
            raise InputError("expected a list of pods", file=str(p), path=f"history[{i}].create")
    if snapshot is not None and not isinstance(snapshot, dict):
        raise InputError("expected an object", file=str(p), path="snapshot")
    return NodeState(dict(node), list(history), snapshot)


_STATE_KEYS = ("kind", "version", "kubetwin", "node", "history", "snapshot")
_STEP_KEYS = ("delete", "create")


def _check_keys(obj: dict[str, Any], valid: tuple[str, ...], prefix: str, file: Path) -> None:
    from ..model.strict import unknown_key_error

    for k in obj:
        if k not in valid:
            raise unknown_key_error(k, valid, path=f"{prefix}{k}", file=str(file))


def check_snapshot(state: NodeState, replayed: dict[str, Any], folder: str) -> None:
    """The snapshot read with the state is what replaying its history gives (the history is what
    is replayed; a snapshot that differs was edited, or written from another history)."""
    if state.snapshot is None:
        return
    if json.loads(json.dumps(replayed, default=str)) != state.snapshot:
        raise InputError("the snapshot in the state file is not what its history gives (edited by hand?)",
                         file=str(Path(folder) / STATE_FILE), path="snapshot",
                         fix="give the folder a previous call wrote with --write-state, unchanged")


def check_same_node(state: NodeState, identity: dict[str, str], folder: str) -> None:
    for key, value in identity.items():
        if state.identity.get(key) != value:
            raise InputError(f"the state folder holds a node started with another {key}", file=str(folder),
                             path="--state-dir",
                             fix=f"give the same {key} as the call that wrote it, or start a new --write-state folder")
    extra = set(state.identity) - set(identity)
    if extra:
        raise InputError(f"the state folder holds a node started with {', '.join(sorted(extra))}",
                         file=str(folder), path="--state-dir")


def write_state(folder: str | Path, state: NodeState, snapshot: dict[str, Any]) -> None:
    p = Path(folder)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the state folder: {exc.strerror or exc}", file=str(p),
                         path="--write-state") from None
    write_atomic(p / STATE_FILE, json.dumps(state.to_json(snapshot), indent=1) + "\n", "--write-state")
