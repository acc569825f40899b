"""A function with stores outside blocks: the schedule's legality checks read blocks, so
the primitives that move statements or buffers refuse it (a reorder of the loops around
``s[0] = s[0] * 2 + i * 4 + j`` gave 196601 instead of 65519, and a compute_at moved a
producer past a statement reading it); those that keep every statement where and when it
runs take it, and parallel checks the statements themselves."""

import re

import numpy as np
import pytest

import pyir
from pyir import transform
from pyir.ir import IRModule
from pyir.schedule import Schedule, ScheduleError
from pyir.script import from_source
from pyir.transform.block_checks import loose_statement

IN_LOOP = from_source('''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
      s: T.Buffer((1,), "float32")):
    for i in range(4):
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
            s[0] = s[0] * T.float32(2) + T.cast(i * 4 + j, "float32")
''')

BETWEEN = from_source('''
from pyir.script import tensor as T

@T.prim_func
def g(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
      s: T.Buffer((1,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    s[0] = B[3]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
''')


def _s_of(mod):
    a, b, s = np.ones((4, 4), "float32"), np.zeros((4, 4), "float32"), np.zeros(1, "float32")
    pyir.build(mod)["f"](a, b, s)
    return s[0]


def _refused(kind):
    return re.escape(f"{kind}: prim function f: it stores or calls a kernel outside blocks "
                     f"(below), which the legality checks of {kind} do not see: they read "
                     "blocks; put the statement in a block of its own (split, fuse, unroll, "
                     "annotate, parallel and vectorize take it as it is)") \
        + r"\n    s\[0\] = s\[0\] \* 2\.0"


def test_a_reorder_around_a_statement_outside_blocks_is_refused_and_changes_nothing():
    sch = Schedule(IN_LOOP)
    i, j = sch.get_loops(sch.get_block("B"))
    before = sch.mod
    with pytest.raises(ScheduleError, match=_refused("reorder")):
        sch.reorder(j, i)
    assert sch.mod is before


def test_a_compute_at_past_a_statement_reading_the_producer_is_refused():
    sch = Schedule(BETWEEN)
    loop, = sch.get_loops(sch.get_block("C"))
    with pytest.raises(ScheduleError, match=r"^compute_at: prim function g: it stores or calls "
                                            r"a kernel outside blocks \(below\)[^\n]*\n"
                                            r"    s\[0\] = B\[3\]$"):
        sch.compute_at(sch.get_block("B"), loop)


def test_primitives_that_keep_statements_in_place_take_it():
    sch = Schedule(IN_LOOP)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[2, 2])
    sch.fuse(*sch.get_loops(sch.get_block("B"))[:2])
    sch.unroll(sch.get_loops(sch.get_block("B"))[-1])
    assert _s_of(sch.mod) == _s_of(IN_LOOP) == 65519
    with pytest.raises(ScheduleError, match=_refused("reorder")):   # also after those steps
        loops = sch.get_loops(sch.get_block("B"))
        sch.reorder(loops[1], loops[0])


def test_parallel_checks_the_statement_itself():
    sch = Schedule(IN_LOOP)
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match=r"^parallel: loop i \(around block 'B'\): the "
                       r"statements below it write s\[0\], which other iterations of loop i "
                       r"may access too; the iterations of loop i cannot run at the same time"):
        sch.parallel(i)


OPAQUE = from_source('''
from pyir.script import tensor as T

@T.prim_func
def rows(A: T.Buffer((4, 1000), "float32"), S: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:1000], S[vi])
            T.writes(S[vi])
            S[vi] = T.float32(0)
            for j in range(1000):
                S[vi] = S[vi] + A[vi, j]
''')


def test_an_opaque_block_s_own_loop_of_statements_is_the_block_s():
    """No primitive reaches the loop inside the block, and its declared regions cover the
    statements: the schedule and the default schedule take the function as before."""
    assert loose_statement(OPAQUE.body) is None
    lowered = transform.lower(IRModule.from_dict({"rows": OPAQUE}))["rows"]
    assert lowered.body.kind == "parallel"
    sch = Schedule(OPAQUE)
    sch.cache_read(sch.get_block("row"), 0, "global")
    a = np.random.default_rng(0).random((4, 1000), dtype=np.float32)
    s = np.zeros(4, np.float32)
    pyir.build(sch.mod)["rows"](a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)


def test_a_statement_beside_a_block_in_a_loop_inside_a_block_counts():
    func = from_source('''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"),
      s: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            for j in range(8):
                with T.block("inner"):
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = A[vi, vj]
                s[vi] = s[vi] * T.float32(2) + B[vi, j]
''')
    found = loose_statement(func.body)
    assert found.buffer.name == "s" and found.script().startswith("s[vi] = s[vi] * 2.0")
