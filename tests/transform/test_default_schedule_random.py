"""Random unscheduled prim functions (`random_prims`): built with the default schedule at a
random LLVM level and without it, both compute what numpy computes from the same
description, for several values of the symbolic extents (0 included); the default-scheduled
module prints and parses back to itself.

The default profile runs 60 functions (deterministically); PYIR_FULL_TESTS=1 selects the
slow full profile of 600."""

from hypothesis import strategies as st

import pyir
from pyir import transform
from pyir.ir import IRModule, assert_structural_equal
from pyir.script import from_source

from property_profiles import profiles
from random_prims import SYMBOL_VALUES, random_prim, run_and_compare


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


test_random_prims_match_numpy, test_random_prims_match_numpy_full = profiles(
    check_random_prim, 60, 600)
