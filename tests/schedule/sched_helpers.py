"""Checks every scheduled module in the tests goes through: verify, print -> parse round
trip, trace replay, every index bounded at entry, and results equal to the unscheduled
build."""

import numpy as np

import pyir
from pyir.ir import assert_structural_equal, verify
from pyir.schedule import Schedule
from pyir.script import from_source

import sched_kernels

SIZES = (1, 7, 13)
_REF = {}


def reference(name):
    if name not in _REF:
        _REF[name] = pyir.build(sched_kernels.KERNELS[name])
    return _REF[name]


def fresh(name, seed=0):
    return Schedule(sched_kernels.KERNELS[name], seed=seed)


def check_roundtrip(sch, name):
    verify(sch.mod)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    replayed = sch.trace.apply_to(fresh(name))
    assert_structural_equal(replayed.mod, sch.mod)


def check_results(sch, name, sizes=SIZES):
    # The corpus indexes with loops and shapes only: every access is bounded at entry,
    # whatever the schedule, and none is left to a check where it is used.
    lowered = pyir.transform.lower(sch.mod)
    assert not lowered[name].attr("access_checks"), lowered[name].attr("access_checks")
    lib = pyir.build(sch.mod)
    ref = reference(name)
    for n in sizes:
        got = sched_kernels.args_for(name, n)
        want = sched_kernels.args_for(name, n)
        lib[name](*got)
        ref[name](*want)
        np.testing.assert_allclose(got[-1], want[-1], rtol=1e-4, atol=1e-4)
