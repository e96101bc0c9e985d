"""Test-suite settings: no Hypothesis deadlines.

Timing belongs in ``benchmarks/``, never in unit tests: a property test that takes longer than
Hypothesis' default 200 ms deadline on a loaded machine is not wrong, so deadlines are off for
every property test (a test may still set its own).
"""

from hypothesis import settings

settings.register_profile("kubetwin", deadline=None)
settings.load_profile("kubetwin")
