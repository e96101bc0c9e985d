"""``NodeAffinityArgs`` (``kubescheduler.config.k8s.io/v1``), decoded strictly: ``addedAffinity``
is a core/v1 ``NodeAffinity``, checked against the release's API definitions
(``pkg/scheduler/apis/config/validation/validation_pluginargs.go``: ``ValidateNodeAffinityArgs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.meta import convert
from ....model.pod import NodeAffinity as NodeAffinitySpec
from ....model.strict import Obj
from ...framework.args import args_spec, decode_args
from . import NAME


@dataclass(frozen=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinitySpec | None = None


def _spec() -> Obj:
    from ....model.apischema import type_spec

    return args_spec(addedAffinity=type_spec("io.k8s.api.core.v1.NodeAffinity"))


def parse_node_affinity_args(raw: Mapping[str, Any] | None, path: str = "",
                             file: str | None = None) -> NodeAffinityArgs:
    # no args: nothing to check, and the API schema (about 7 ms to load) is not read for it
    args = {} if raw is None else decode_args(NAME, raw, _spec(), path, file)
    added = args.get("addedAffinity")
    if added is None:
        return NodeAffinityArgs()
    try:
        return NodeAffinityArgs(convert(added, NodeAffinitySpec, path=f"{path}.addedAffinity" if path else "addedAffinity"))
    except InputError as exc:
        raise exc.in_file(file) from None
