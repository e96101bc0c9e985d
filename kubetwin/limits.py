"""Size and time limits on every input path, so no input makes a command run for hours.

Kubernetes bounds most inputs itself (the API server's validation: 128 devices per
ResourceSlice, 32 devices per request, a CEL cost budget); this module holds the bounds that
kubetwin adds where Kubernetes has none, or where kubetwin's own formats (scenarios, machine
specs, checkpoints written by hand) could ask for unbounded work: CPU ids, machine sizes,
simulated time and pod counts, YAML alias expansion and nesting, digits of a quantity.

Each limit has a default generous for real clusters and an environment variable to raise it
(``KUBETWIN_MAX_CPU_ID=1048575``); an input past a limit is an :class:`~kubetwin.errors.InputError`
that names the limit and its variable, before any work starts. The table is documented in
``docs/limits.md`` (a test keeps the two in step).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import InputError


@dataclass(frozen=True)
class Limit:
    name: str       # KUBETWIN_<NAME> overrides it
    default: int
    what: str       # what is counted, for the message and the docs

    @property
    def env(self) -> str:
        return f"KUBETWIN_{self.name}"

    def value(self) -> int:
        raw = os.environ.get(self.env)
        if raw is None or raw == "":
            return self.default
        try:
            v = int(raw)
        except ValueError:
            raise InputError(f"{self.env}={raw!r} is not an integer", fix=f"unset it (default {self.default})") from None
        if v < 1:
            raise InputError(f"{self.env}={raw!r} must be at least 1", fix=f"unset it (default {self.default})")
        return v

    def check(self, amount: int, *, file: str | None = None, path: str = "", what: str | None = None) -> None:
        """Refuse ``amount`` above the limit with a message naming the limit and how to raise it."""
        limit = self.value()
        if amount > limit:
            raise InputError(f"{what or self.what} is {amount}, more than kubetwin's limit of {limit}",
                             file=file, path=path, fix=f"raise the limit with {self.env}=N if this is meant")

    def exceeded(self, amount: int, *, file: str | None = None, path: str = "", what: str | None = None) -> InputError:
        limit = self.value()
        return InputError(f"{what or self.what} is more than kubetwin's limit of {limit}",
                          file=file, path=path, fix=f"raise the limit with {self.env}=N if this is meant")


MAX_INPUT_BYTES = Limit("MAX_INPUT_BYTES", 512 * 1024 * 1024, "the size of one input file in bytes")
MAX_NESTING = Limit("MAX_NESTING", 200, "the nesting depth of a YAML or JSON document")
MAX_ALIAS_EXPANSION = Limit("MAX_ALIAS_EXPANSION", 1_000_000,
                            "the number of YAML nodes a document's aliases expand to")
#: aliases may multiply a document's written nodes by at most this (beyond MIN_ALIAS_EXPANSION nodes)
ALIAS_AMPLIFICATION = 10
MIN_ALIAS_EXPANSION = 100_000
MAX_QUANTITY_DIGITS = Limit("MAX_QUANTITY_DIGITS", 1000, "the number of digits of a quantity")
MAX_CPU_ID = Limit("MAX_CPU_ID", 65_535, "a CPU id")
MAX_MACHINE_CPUS = Limit("MAX_MACHINE_CPUS", 65_536, "the number of CPUs of a machine")
MAX_HUGEPAGES = Limit("MAX_HUGEPAGES", 1 << 40, "a number of pre-allocated huge pages")
MAX_SIM_NODES = Limit("MAX_SIM_NODES", 100_000, "the number of simulated nodes")
MAX_SIM_PODS = Limit("MAX_SIM_PODS", 1_000_000, "the number of simulated pods")
MAX_SIM_SECONDS = Limit("MAX_SIM_SECONDS", 10 * 365 * 24 * 3600, "the simulated time in seconds")
MAX_SIM_SAMPLES = Limit("MAX_SIM_SAMPLES", 1_000_000, "the number of time-series samples (horizon / sampleInterval)")
MAX_TIMELINE_STEPS = Limit("MAX_TIMELINE_STEPS", 10_000, "the number of eviction timeline steps")

ALL: tuple[Limit, ...] = (MAX_INPUT_BYTES, MAX_NESTING, MAX_ALIAS_EXPANSION, MAX_QUANTITY_DIGITS, MAX_CPU_ID,
                          MAX_MACHINE_CPUS, MAX_HUGEPAGES, MAX_SIM_NODES,
                          MAX_SIM_PODS, MAX_SIM_SECONDS, MAX_SIM_SAMPLES, MAX_TIMELINE_STEPS)
