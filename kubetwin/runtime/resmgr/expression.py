"""nri-plugins' key/operator/values expressions, evaluated against pods and containers.

Used by affinity annotations (``scope`` and ``match``) and by the balloons policy's
``matchExpressions``. Keys name fields of the subject (``name``, ``namespace``, ``qosclass``,
``id``, ``uid``, ``labels/KEY``, ``tags/KEY``, ``pod/...`` for a container's pod); a key of the
form ``:SEP VSEP key1 SEP key2`` joins several values. Globs are Go's ``filepath.Match``.

Upstream: containers/nri-plugins v0.14.0 ``pkg/apis/resmgr/v1alpha1/{expression,types}.go``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..gomatch import BadPattern, match

EQUALS, NOT_EQUAL, IN, NOT_IN = "Equals", "NotEqual", "In", "NotIn"
EXISTS, NOT_EXIST, ALWAYS_TRUE = "Exists", "NotExist", "AlwaysTrue"
MATCHES, MATCHES_NOT, MATCHES_ANY, MATCHES_NONE = "Matches", "MatchesNot", "MatchesAny", "MatchesNone"
OPERATORS = (EQUALS, NOT_EQUAL, IN, NOT_IN, EXISTS, NOT_EXIST, ALWAYS_TRUE, MATCHES, MATCHES_NOT, MATCHES_ANY,
             MATCHES_NONE)

KEY_POD, KEY_ID, KEY_UID, KEY_NAME, KEY_NAMESPACE = "pod", "id", "uid", "name", "namespace"
KEY_QOS_CLASS, KEY_LABELS, KEY_TAGS = "qosclass", "labels", "tags"


class ExpressionError(ValueError):
    pass


class Evaluable(Protocol):
    def eval_key(self, key: str) -> Any: ...


@dataclass
class Expression:
    key: str = ""
    op: str = ""
    values: list[str] = field(default_factory=list)

    def validate(self) -> None:
        self._validate_key()
        op, n = self.op, len(self.values)
        if op in (EQUALS, NOT_EQUAL, MATCHES, MATCHES_NOT):
            if n != 1:
                raise ExpressionError(f"invalid expression, '{op}' requires a single value")
        elif op in (EXISTS, NOT_EXIST, ALWAYS_TRUE):
            if n != 0:
                raise ExpressionError(f"invalid expression, '{op}' does not take any values")
        elif op not in (IN, NOT_IN, MATCHES_ANY, MATCHES_NONE):
            raise ExpressionError(f'invalid expression, unknown operator: "{op}"')

    def _validate_key(self) -> None:
        keys, _ = split_keys(self.key)
        for key in keys:
            key = key.lstrip("/")
            while True:
                pref, _, rest = key.partition("/")
                if pref in (KEY_ID, KEY_UID, KEY_NAME, KEY_NAMESPACE, KEY_QOS_CLASS):
                    if rest:
                        raise ExpressionError(f'invalid expression, trailing key "{rest}" after "{pref}"')
                elif pref == KEY_POD:
                    if not rest:
                        raise ExpressionError(f'invalid expression, missing trailing pod key after "{pref}"')
                elif pref in (KEY_LABELS, KEY_TAGS):
                    if not rest:
                        raise ExpressionError(f'invalid expression, missing trailing map key after "{pref}"')
                    break
                else:
                    raise ExpressionError(f'invalid expression, unknown key "{pref}"')
                if not rest:
                    break
                key = rest

    def evaluate(self, subject: Evaluable) -> bool:
        if self.op == ALWAYS_TRUE:
            return True
        value, ok = key_value(self.key, subject)
        op, vals = self.op, self.values
        if op == EQUALS:
            return ok and (value == vals[0] or vals[0] == "*")
        if op == NOT_EQUAL:
            return not ok or value != vals[0]
        if op in (MATCHES, MATCHES_NOT):
            m = False
            if ok:
                try:
                    m = match(vals[0], value)
                except BadPattern:
                    m = False
            res = ok and m
            return not res if op == MATCHES_NOT else res
        if op in (IN, NOT_IN):
            res = ok and any(value == v or v == "*" for v in vals)
            return not res if op == NOT_IN else res
        if op in (MATCHES_ANY, MATCHES_NONE):
            res = False
            if ok:
                for pattern in vals:
                    try:
                        if match(pattern, value):
                            res = True
                            break
                    except BadPattern:
                        continue
            return not res if op == MATCHES_NONE else res
        if op == EXISTS:
            return ok
        if op == NOT_EXIST:
            return not ok
        return False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.op}
        if self.values:
            out["values"] = list(self.values)
        return out


def split_keys(keys: str) -> tuple[list[str], str]:
    if len(keys) < 4 or keys[0] != ":":
        return [keys], ""
    keys = keys[1:]
    ksep, vsep = keys[0], keys[1]
    if _valid_separator(ksep) and _valid_separator(vsep):
        keys = keys[2:]
    else:
        ksep = vsep = ":"
    return keys.split(ksep), vsep


def _valid_separator(c: str) -> bool:
    return not (c.isascii() and (c.isalnum() or c in "/."))


def key_value(key: str, subject: Evaluable) -> tuple[str, bool]:
    keys, vsep = split_keys(key)
    if len(keys) == 1:
        return resolve_ref(subject, keys[0])
    vals, ok = [], False
    for k in keys:
        v, found = resolve_ref(subject, k)
        vals.append(v)
        ok = ok or found
    return vsep.join(vals), ok


def resolve_ref(subject: Evaluable, spec: str) -> tuple[str, bool]:
    key = posixpath.normpath(spec) if spec else "."
    obj: Any = subject
    while True:
        if hasattr(obj, "eval_key"):
            pref, _, rest = key.partition("/")
            obj = obj.eval_key(pref)
            key = rest
        elif isinstance(obj, dict):
            if key not in obj:
                return "", False
            obj = obj[key]
            key = ""
        else:
            return "", False
        if key == "":
            break
    if not isinstance(obj, str):
        return "", False
    return obj, True


def parse_expression(obj: Any, path: str = "") -> Expression:
    """An expression from its YAML form (``key``, ``operator``, ``values``); shape checked by the caller."""
    e = Expression(key=obj.get("key", ""), op=obj.get("operator", ""), values=list(obj.get("values") or []))
    return e
