"""The pod annotations nri-plugins reads, checked before anything runs.

The plugin reads ``*.resource-policy.nri.io`` annotations in three scopes (``KEY``,
``KEY/pod``, ``KEY/container.NAME``) and logs-and-ignores a value it cannot parse. A twin that
did the same would answer for a pod the user did not mean, so kubetwin refuses — with the file
and the annotation's path — a misspelt key and a
value the plugin would ignore (``prefer-isolated-cpus: yes``, an unknown memory type, an
unknown scheduling class). Values the plugin *rejects* at container creation (a malformed
affinity, an unknown CPU class, a bad cold-start) are left to the policy: the pod is then
reported rejected with the plugin's error, as on a real node. Annotations another policy
reads are accepted with a warning that this policy ignores them, and so is a container-scoped
annotation naming no container of the pod (it applies to nothing, as upstream).

Upstream: containers/nri-plugins v0.14.0 ``pkg/resmgr/cache/{cache,pod,container}.go``,
``cmd/plugins/topology-aware/policy/pod-preferences.go``, ``cmd/plugins/balloons/policy``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from ..diagnostics import warn
from ..errors import InputError
from ..model.strict import suggest

NS = "resource-policy.nri.io"
Validator = Callable[[str, Any], "str | None"]


def parse_yaml_value(value: str) -> Any:
    """An annotation value as ``sigs.k8s.io/yaml`` reads it (YAML or JSON, one document)."""
    from ..model.loader import parse_documents

    try:
        docs = parse_documents(value, "<annotation>")
    except InputError as exc:
        raise ValueError(exc.message) from None
    if len(docs) > 1:
        raise ValueError("more than one document")
    return docs[0] if docs else None


def _bool(value: str, _: Any) -> str | None:
    if value in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
        return None
    return "is not a boolean (strconv.ParseBool: true/false, 1/0, t/f)"


def _true_false(value: str, _: Any) -> str | None:
    if value in ("true", "false"):
        return None
    return 'must be "true" or "false" (the plugin compares with "true" exactly)'


def _one_of(*allowed: str) -> Validator:
    def check(value: str, _: Any) -> str | None:
        if value in allowed:
            return None
        return "must be one of " + ", ".join(f'"{a}"' for a in allowed)
    return check


def _memory_type(value: str, _: Any) -> str | None:
    if value == "":
        return None
    for part in value.split(","):
        if part.lower() not in ("dram", "pmem", "hbm", "mixed"):
            return f'unknown memory type "{part}" (dram, pmem, hbm, mixed)'
    return None


def _hints(value: str, _: Any) -> str | None:
    if _bool(value, None) is None:
        return None
    for part in value.split(","):
        if part not in ("mounts", "devices", "pod-resources", "all", "none"):
            return f'unknown hint source "{part}" (a boolean, or mounts, devices, pod-resources, all, none)'
    return None


def _path_list(value: str, _: Any) -> str | None:
    try:
        doc = parse_yaml_value(value)
    except ValueError as exc:
        return f"is not a path list: {exc}"
    if not isinstance(doc, dict) or set(doc) - {"type", "paths"}:
        return "must be {type: prefix|glob, paths: [...]}"
    if doc.get("type", "prefix") not in ("prefix", "glob"):
        return 'type must be "prefix" or "glob"'
    if not isinstance(doc.get("paths", []), list):
        return "paths must be a list"
    return None


def _scheduling_class(value: str, config: Any) -> str | None:
    if config is None or not hasattr(config, "scheduling_class"):
        return None
    if config.scheduling_class(value) is None:
        known = [sc.name for sc in getattr(config, "scheduling_classes", ())]
        return f'unknown scheduling class "{value}"' + (f" (known: {', '.join(known)})" if known else
                                                         " (the policy configures none)")
    return None


def _topology_level(value: str, _: Any) -> str | None:
    if value in ("system", "package", "die", "numa", "l3cache", "l2cache", "core", "thread"):
        return None
    return "must be a topology level: system, package, die, numa, l3cache"


def _not_modelled(what: str) -> Validator:
    def check(value: str, _: Any) -> str | None:
        return f"is not modelled by kubetwin: {what}"
    return check


def _free(value: str, _: Any) -> str | None:
    return None


def _annotated_resources(value: str, _: Any) -> str | None:
    try:
        doc = json.loads(value)
    except ValueError as exc:
        return f"is not JSON: {exc}"
    if not isinstance(doc, dict) or set(doc) - {"containers", "initContainers"}:
        return 'must be {"containers": {NAME: {requests, limits}}, "initContainers": ...}'
    return None


#: keys every policy's resource manager reads (scoped: KEY, KEY/pod, KEY/container.NAME)
COMMON_KEYS: dict[str, Validator] = {
    f"rdtclass.{NS}": _free,
    f"blockioclass.{NS}": _free,
    f"topologyhints.{NS}": _hints,
    f"allow.topologyhints.{NS}": _path_list,
    f"deny.topologyhints.{NS}": _path_list,
    f"strict.topologyhints.{NS}": _bool,
    f"test.topologyhints.{NS}": _not_modelled("test topology hints need the plugin's test APIs"),
    f"cpu.preserve.{NS}": _true_false,
    f"memory.preserve.{NS}": _true_false,
    f"unlimited-burstable.{NS}": _topology_level,
}
#: unscoped keys of the resource manager itself
RESMGR_KEYS: dict[str, Validator] = {
    f"{NS}/affinity": _free,  # malformed affinities fail the container creation, as upstream
    f"{NS}/anti-affinity": _free,
    "noderesource.dev/resources": _annotated_resources,
}
TOPOLOGY_AWARE_KEYS: dict[str, Validator] = {
    f"prefer-isolated-cpus.{NS}": _bool,
    f"require-isolated-cpus.{NS}": _bool,
    f"prefer-shared-cpus.{NS}": _bool,
    f"prefer-reserved-cpus.{NS}": _bool,
    f"prefer-cpu-priority.{NS}": _one_of("high", "normal", "low", "none", "default"),
    f"hide-hyperthreads.{NS}": _bool,
    f"pick-resources-by-hints.{NS}": _bool,
    f"memory-type.{NS}": _memory_type,
    f"cold-start.{NS}": _free,  # a bad value fails the container creation, as upstream
    f"scheduling-class.{NS}": _scheduling_class,
    f"cpu-class.{NS}": _free,  # an unknown class fails the container creation, as upstream
    f"irq-affinity.{NS}": _not_modelled("IRQ affinity needs the machine's interrupts (/proc/interrupts)"),
}
BALLOONS_KEYS: dict[str, Validator] = {
    f"balloon.balloons.{NS}": _free,
    f"hide-hyperthreads.{NS}": _bool,
    f"scheduling-class.{NS}": _scheduling_class,
    f"memory-type.{NS}": _memory_type,
}
POLICY_KEYS = {"topology-aware": TOPOLOGY_AWARE_KEYS, "balloons": BALLOONS_KEYS}
_OTHER_KEYS = {"toptierlimit." + NS}


def split_key(key: str) -> tuple[str, str]:
    """``KEY/container.NAME`` → (KEY, NAME); ``KEY/pod`` → (KEY, ""); ``KEY`` → (KEY, "")."""
    head, slash, tail = key.rpartition("/")
    if slash and tail.startswith("container."):
        return head, tail[len("container."):]
    if slash and tail == "pod":
        return head, ""
    return key, ""


def _ours(key: str) -> bool:
    return NS in key or key.startswith("noderesource.dev/")


def validate_pod_annotations(annotations: dict[str, str], containers: Iterable[str], policy: str, config: Any,
                             *, file: str | None, path: str) -> None:
    """Refuse misspelt or unparseable resource-policy annotations of one pod (see module doc)."""
    mine = {**COMMON_KEYS, **POLICY_KEYS.get(policy, {})}
    others = set(_OTHER_KEYS)
    for name, keys in POLICY_KEYS.items():
        if name != policy:
            others.update(k for k in keys if k not in mine)
    names = list(containers)
    for key, value in annotations.items():
        if not _ours(key):
            continue
        at = f'{path}.annotations["{key}"]'
        if key in RESMGR_KEYS:
            problem = RESMGR_KEYS[key](value, config)
            if problem:
                raise InputError(f'"{value}" {problem}', path=at, file=file)
            continue
        base, ctr = split_key(key)
        if base in others:
            warn(InputError(f"ignored by the {policy} policy (another policy reads it)", path=at, file=file))
            continue
        validator = mine.get(base)
        if validator is None:
            near = suggest(base, list(mine) + list(RESMGR_KEYS))
            raise InputError(f'unknown annotation "{base}" for the {policy} policy', path=at, file=file,
                             fix=f'did you mean "{near}"?' if near else "see docs/runtime.md for the keys it reads")
        if key.endswith("/container." + ctr) and ctr and ctr not in names:
            near = suggest(ctr, names)
            warn(InputError(f'no container "{ctr}" in the pod: the annotation applies to nothing', path=at,
                            file=file, fix=f'did you mean "container.{near}"?' if near else None))
        problem = validator(value, config)
        if problem:
            raise InputError(f'"{value}" {problem}', path=at, file=file,
                             fix="nri-resource-policy would log this and ignore the annotation")
