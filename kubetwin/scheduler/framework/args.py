"""Plugin args decoded strictly, as kube-scheduler decodes ``pluginConfig[].args``
(``pkg/scheduler/apis/config/v1``: ``PluginConfig.decodeNestedObjects``; validation in
``pkg/scheduler/apis/config/validation/validation_pluginargs.go``).

Each in-tree plugin folder declares its ``<Plugin>Args`` fields as a :mod:`kubetwin.model.strict`
spec and decodes with :func:`decode_args`: an unknown or mistyped field is an error naming the
file and the field path (``profiles[0].pluginConfig[1].args.scoringStrategy.tpye``) with the
nearest valid name; ``kind``, when given, must be the plugin's args kind. A plugin without args
accepts none (upstream ignores args it has no type for; kubetwin says so).
"""

from __future__ import annotations

from typing import Any, Mapping

from ...diagnostics import warn
from ...errors import InputError
from ...model.strict import STRING, Obj, Spec, check, obj

API_VERSION = "kubescheduler.config.k8s.io/v1"


def args_spec(**fields: Spec) -> Obj:
    """A ``<Plugin>Args`` spec: its fields and the inline ``TypeMeta``."""
    return obj(apiVersion=STRING, kind=STRING, **fields)


def decode_args(plugin: str, raw: Mapping[str, Any] | None, spec: Obj, path: str,
                file: str | None = None) -> dict[str, Any]:
    """``raw`` checked against ``spec`` (unknown fields, types, the args kind), without its
    ``TypeMeta``. ``path``: where the args sit in the configuration."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"expected {plugin}Args (a mapping)", path=path, file=file)
    check(dict(raw), spec, file=file, prefix=path)
    kind = raw.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        raise InputError(f"args for plugin {plugin} were not of type {plugin}Args, got {kind}",
                         path=_join(path, "kind"), file=file)
    api = raw.get("apiVersion")
    if api is not None and api != API_VERSION:
        raise InputError(f'Unsupported value: "{api}": supported values: "{API_VERSION}"',
                         path=_join(path, "apiVersion"), file=file)
    return {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}


def no_args(plugin: str, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> None:
    """A plugin that takes no args: TypeMeta alone is fine; anything else is ignored upstream,
    which kubetwin reports."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError("expected a mapping", path=path, file=file)
    extra = [k for k in raw if k not in ("apiVersion", "kind")]
    if extra:
        warn(InputError(f"plugin {plugin} takes no args: kube-scheduler ignores {', '.join(map(str, extra))}",
                        path=path, file=file))
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
