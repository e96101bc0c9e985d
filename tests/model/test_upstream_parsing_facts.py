"""Parsing answers recorded from the released upstream Go code (differential testing, issue 14).

Each case is a disagreement the harness found between kubetwin and upstream, with upstream's
answer: ``cpuset.Parse`` of k8s.io/utils at v0.0.0-20260707023825-cf1189d6abe3 (the version
Kubernetes v1.36.3 builds with) and ``resource.ParseQuantity`` + ``Quantity.Value`` /
``MilliValue`` / ``String`` of k8s.io/apimachinery v0.36.3.
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.quantity import Quantity

# (input, upstream's CPU list or None for an error)
CPUSET_FACTS = [
    (" 5", None),            # strconv.Atoi takes no spaces
    ("1 ,2", None),
    ("0-3\n", None),
    ("1_0", None),           # Python's int takes underscores, Atoi does not
    ("\u0663", None),        # nor non-ASCII digits
    ("+1", [1]),             # Atoi takes a leading +
    ("3-+5", [3, 4, 5]),
    ("007-8", [7, 8]),
]


@pytest.mark.parametrize(("text", "cpus"), CPUSET_FACTS, ids=[repr(t) for t, _ in CPUSET_FACTS])
def test_cpuset_parse_accepts_what_utils_cpuset_parse_accepts(text: str, cpus: list[int] | None) -> None:
    if cpus is None:
        with pytest.raises(InputError):
            CPUSet.parse(text)
    else:
        assert CPUSet.parse(text).sorted() == cpus


def test_cpuset_parse_refuses_cpu_ids_no_machine_has() -> None:
    # upstream would try to build a set of 10^11 CPUs; kubetwin refuses (its own limit)
    with pytest.raises(InputError, match="largest CPU id"):
        CPUSet.parse("0-99999999999")


# (input, upstream's String(), Value(), MilliValue())
QUANTITY_FACTS = [
    ("-1500m", "-1500m", -2, -1500),                                   # int64Amount: away from zero
    ("-.128Gi", "-137438953472m", -137438952, -137438953472),          # inf.Dec: truncate, then +1
    ("-2851.3753122n", "-2852n", 1, 1),
    ("-10.8830571Mi", "-11411712481689600n", -11411711, -11411712480),
    ("-664407Gi", "-664407Gi", 7796248276, 7796248275200),             # the Dec's nano digits wrap int64
    ("-1.5Gi", "-1536Mi", -1610612736, -1610612736000),                # exact: nothing to round
]


@pytest.mark.parametrize(("text", "string", "value", "milli"), QUANTITY_FACTS, ids=[f[0] for f in QUANTITY_FACTS])
def test_negative_quantities_round_as_apimachinery_does(text: str, string: str, value: int, milli: int) -> None:
    q = Quantity.parse(text)
    assert (str(q), q.value(), q.milli_value()) == (string, value, milli)


def test_a_sum_with_a_dec_quantity_rounds_as_a_dec() -> None:
    # inf.Dec + int64Amount is an inf.Dec (Quantity.Add): its negative Value() truncates, then +1
    total = Quantity.parse("-.128Gi") + Quantity.parse("-1")
    assert total.value() == -137438953
