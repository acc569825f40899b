"""Random unscheduled prim functions (`random_prims`): built with the default schedule at a
random LLVM level and without it, both compute what numpy computes from the same
description, for several values of the symbolic extents (0 included); the default-scheduled
module prints and parses back to itself.

The default profile runs 60 functions (deterministically); PYIR_FULL_TESTS=1 selects the
slow full profile of 600."""

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyir
from pyir import transform
from pyir.ir import IRModule, assert_structural_equal
from pyir.script import from_source

from random_prims import SYMBOL_VALUES, random_prim, run_and_compare

FULL = os.environ.get("PYIR_FULL_TESTS") == "1"


def check_random_prim(data):
    prim = random_prim(lambda options, label: data.draw(st.sampled_from(list(options)),
                                                        label=label))
    mod = IRModule.from_dict({"f": from_source(prim.text)})
    scheduled = transform.default_schedule(mod)
    assert_structural_equal(from_source(scheduled.script()), scheduled)
    level = data.draw(st.sampled_from(["O3", "fast", "none"]), label="opt_level")
    libs = [pyir.build(mod, opt_level=level), pyir.build(mod, default_schedule=False,
                                                         opt_level="none")]
    for k, values in enumerate(SYMBOL_VALUES):
        for lib in libs:
            run_and_compare(prim, lib, dict(zip("nm", values)), seed=k)


PROFILE = dict(max_examples=600) if FULL else dict(max_examples=60, derandomize=True)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                HealthCheck.data_too_large], **PROFILE)
@given(st.data())
def test_random_prims_match_numpy(data):
    check_random_prim(data)
