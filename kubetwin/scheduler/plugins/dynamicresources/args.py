"""``DynamicResourcesArgs`` (``kubescheduler.config.k8s.io/v1``), decoded strictly
(``ValidateDynamicResourcesArgs``). ``filterTimeout`` and ``bindingTimeout`` bound wall-clock
time, which a model does not spend: a value other than the default is reported as not modelled."""

from __future__ import annotations

from typing import Any, Mapping

from ....diagnostics import not_modelled
from ....errors import InputError
from ....model.duration import parse_duration
from ....model.strict import STRING
from ...framework.args import args_spec, decode_args
from . import NAME

SPEC = args_spec(filterTimeout=STRING, bindingTimeout=STRING)
#: ``DynamicResourcesFilterTimeoutDefault``
FILTER_TIMEOUT_DEFAULT = 10.0


def parse_dynamic_resources_args(raw: Mapping[str, Any] | None, path: str = "", file: str | None = None) -> None:
    args = decode_args(NAME, raw, SPEC, path, file)
    p = path + "." if path else ""
    for field in ("filterTimeout", "bindingTimeout"):
        text = args.get(field)
        if text is None:
            continue
        try:
            seconds = parse_duration(text, f"{p}{field}").seconds
        except InputError as exc:
            raise exc.in_file(file) from None
        if field == "filterTimeout" and seconds < 0:
            raise InputError(f'Invalid value: "{text}": must be zero or positive', path=f"{p}{field}", file=file)
        if field == "bindingTimeout" and seconds < 1:
            raise InputError(f'Invalid value: "{text}": must be at least 1 second', path=f"{p}{field}", file=file)
        if not (field == "filterTimeout" and seconds == FILTER_TIMEOUT_DEFAULT):
            not_modelled(f"{p}{field}", file=file, why="kubetwin's allocations take no wall-clock time")
    return None
