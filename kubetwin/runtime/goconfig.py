"""Reading the goresctrl configuration files as Go reads them.

goresctrl decodes its ``rdt`` and ``blockio`` files with ``sigs.k8s.io/yaml``'s
``UnmarshalStrict``: the YAML is turned into JSON *guided by the target Go type* and then decoded
by ``encoding/json`` with unknown fields refused. Three consequences a faithful reader must keep:

* struct field names match **case-insensitively** (``classes`` fills ``Classes``; ``Optional``
  fills ``optional``) — ``encoding/json``'s rule;
* a YAML scalar bound for a Go ``string`` becomes a string: ``Weight: 80`` is ``"80"``,
  ``[50, "500MBps"]`` is ``["50", "500MBps"]`` (``yamlToJSONTarget``);
* map keys are strings in JSON, so a YAML key ``1:`` is ``"1"``.

:func:`decode_go_config` applies those rules to an already parsed document and then checks it
with :mod:`kubetwin.model.strict` (unknown and mistyped fields, with the file and field path).
"""

from __future__ import annotations

import math
from typing import Any

from ..model.strict import STRING, ListOf, MapOf, Obj, Spec, check


def go_scalar_string(value: Any) -> Any:
    """A YAML scalar as ``yamlToJSONTarget`` writes it into a Go string field (others unchanged)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return value


def go_map_key(key: Any) -> Any:
    """A YAML map key as a JSON object key."""
    return go_scalar_string(key)


def fold(value: Any, spec: Spec) -> Any:
    """``value`` with struct keys in their declared case and string leaves stringified."""
    if value is None:
        return None
    if isinstance(spec, Obj) and isinstance(value, dict):
        fields = spec.fields
        lowered = {name.lower(): name for name in fields}
        out: dict[Any, Any] = {}
        for key, sub in value.items():
            name = key
            if isinstance(key, str) and key not in fields:
                name = lowered.get(key.lower(), key)
            sub_spec = fields.get(name) if isinstance(name, str) else None
            # encoding/json: a later key of the same field (in any case) wins
            out.pop(name, None)
            out[name] = fold(sub, sub_spec) if sub_spec is not None else sub
        return out
    if isinstance(spec, ListOf) and isinstance(value, list):
        return [fold(x, spec.item) for x in value]
    if isinstance(spec, MapOf) and isinstance(value, dict):
        return {go_map_key(k): fold(v, spec.value) for k, v in value.items()}
    if spec == STRING:
        return go_scalar_string(value)
    return value


def decode_go_config(value: Any, spec: Spec, *, file: str | None, prefix: str = "",
                     what: str = "strict decoding error") -> Any:
    """Fold ``value`` as Go decodes it, then refuse unknown and mistyped fields."""
    folded = fold(value, spec)
    check(folded, spec, file=file, prefix=prefix, what=what)
    return folded


__all__ = ["decode_go_config", "fold", "go_scalar_string", "go_map_key"]
