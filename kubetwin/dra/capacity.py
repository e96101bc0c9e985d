"""Consumable capacity (DRAConsumableCapacity): how much of a device a request consumes.

A request's capacity is rounded by the device's request policy (up to ``validRange.min``, to
the next ``step``, to the next ``validValues`` entry); a capacity the request does not name
consumes the policy's ``default`` or, without one, the whole capacity. The device fits when,
for every capacity, what is already allocated plus what this attempt is allocating plus this
request stays within the capacity's value.

Upstream:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/consumable_capacity.go``.
"""

from __future__ import annotations

from typing import Mapping

from ..model.quantity import Quantity
from .api import CapacityRequestPolicy, Device, DeviceCapacity

ConsumedCapacity = dict[str, Quantity]


def _int_value(q: Quantity) -> int:
    """``Quantity.Value()``: rounded up to an integer."""
    u, s = q.unscaled, q.scale
    if s >= 0:
        return u * 10 ** s
    div = 10 ** -s
    return -((-u) // div)


def consumed_quantity(requested: Quantity | None, cap: DeviceCapacity) -> Quantity:
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.has_valid_range and policy.valid_range_min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values is not None:
        for v in policy.valid_values:
            if requested.cmp(v) <= 0:
                return v
        return requested
    return requested


def _round_up_range(requested: Quantity, policy: CapacityRequestPolicy) -> Quantity:
    rmin = policy.valid_range_min
    assert rmin is not None
    if requested.cmp(rmin) < 0:
        return rmin
    step = policy.valid_range_step
    if step is None:
        return requested
    req_i, step_i, min_i = _int_value(requested), _int_value(step), _int_value(rmin)
    added = req_i - min_i
    n = added // step_i if added >= 0 else -((-added) // step_i)
    if added % step_i != 0:
        n += 1
    return Quantity.from_int(min_i + step_i * n, step.format)


def violates_policy(value: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and value.cmp(policy.default) == 0:
        return False
    if policy.has_valid_range:
        if policy.valid_range_max is not None and value.cmp(policy.valid_range_max) > 0:
            return True
        if policy.valid_range_step is not None and policy.valid_range_min is not None:
            step = _int_value(policy.valid_range_step)
            if step and (_int_value(value) - _int_value(policy.valid_range_min)) % step != 0:
                return True
        return False
    if policy.valid_values:
        return all(value.cmp(v) != 0 for v in policy.valid_values)
    return False


def fits(device: Device, requests: Mapping[str, Quantity] | None, allocated: ConsumedCapacity | None,
         allocating: ConsumedCapacity | None) -> bool:
    """``CmpRequestOverCapacity``: False when a named capacity is missing, a policy is violated
    or the capacity would be overdrawn."""
    if requests:
        for name in requests:
            if name not in device.capacity:
                return False
    for name, cap in device.capacity.items():
        consumed = consumed_quantity(requests.get(name) if requests else None, cap)
        if violates_policy(consumed, cap.request_policy):
            return False
        total = consumed
        if allocated and name in allocated:
            total = total + allocated[name]
        if allocating and name in allocating:
            total = total + allocating[name]
        if total.cmp(cap.value) > 0:
            return False
    return True


def consumed_by(device: Device, requests: Mapping[str, Quantity] | None) -> ConsumedCapacity:
    """Every capacity of the device, as this request consumes it (recorded in the result)."""
    return {name: consumed_quantity(requests.get(name) if requests else None, cap)
            for name, cap in device.capacity.items()}


def add_into(target: ConsumedCapacity, amounts: Mapping[str, Quantity]) -> None:
    for name, q in amounts.items():
        target[name] = target[name] + q if name in target else q


def subtract_from(target: ConsumedCapacity, amounts: Mapping[str, Quantity]) -> None:
    for name, q in amounts.items():
        if name in target:
            target[name] = target[name] - q
