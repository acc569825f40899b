"""Hypothesis profiles for the random property tests: a fast, derandomized default run and
a slow, random one that PYIR_FULL_TESTS=1 selects."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FULL = os.environ.get("PYIR_FULL_TESTS") == "1"
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])


def profiles(run, examples, full_examples):
    """Two tests of ``run(data)`` (a property drawing from hypothesis' ``data``): the default
    one over ``examples`` derandomized examples, and the slow one over ``full_examples``
    random examples that PYIR_FULL_TESTS=1 selects instead."""
    @pytest.mark.skipif(FULL, reason="the full profile runs instead")
    @settings(max_examples=examples, derandomize=True, **_COMMON)
    @given(st.data())
    def default(data):
        run(data)

    @pytest.mark.slow
    @pytest.mark.skipif(not FULL, reason="set PYIR_FULL_TESTS=1 for the full profile")
    @settings(max_examples=full_examples, **_COMMON)
    @given(st.data())
    def full(data):
        run(data)

    return default, full
