"""Blocks of IR built or edited by hand whose ``reads`` / ``writes`` do not cover what their
bodies access, or whose bindings leave their iterators' domains: the schedule's legality
checks and the default schedule trust what blocks state, so the first schedule step on such
a function, and the build, refuse it (`pyir.transform.block_checks.block_fault`). An
in-place scan declared as elementwise would otherwise be parallelized (its sums came out
8193 instead of 65536) or vectorized (4097)."""

import re

import numpy as np
import pytest

import pyir
from pyir.ir import Block, BufferRegion, IntImm, Range
from pyir.ir.node import rewrite, with_fields
from pyir.schedule import Schedule, ScheduleError
from pyir.script import from_source
from pyir.transform import LowerError
from pyir.transform.block_checks import block_fault
from pyir.transform.regions import infer_regions

SCAN = from_source('''
from pyir.script import tensor as T

@T.prim_func
def scan(A: T.Buffer((65536,), "float32")):
    for i in range(65535):
        with T.block("S"):
            vi = T.axis.spatial(65535, i)
            A[vi + 1] = A[vi + 1] + A[vi]
''')

NESTED = from_source('''
from pyir.script import tensor as T

@T.prim_func
def rows(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            for j in range(16):
                with T.block("B"):
                    vj = T.axis.spatial(16, j)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
''')


def _declared(func, name, **regions):
    """``func`` with block ``name``'s reads and/or writes replaced."""
    return rewrite(func, lambda n: with_fields(n, **regions)
                   if isinstance(n, Block) and n.name == name else None)


def _scan_declared_elementwise():
    buf = SCAN.params[0]
    block = next(n for n in pyir.ir.walk(SCAN) if isinstance(n, Block))
    point = (BufferRegion(buf, (Range(block.iter_vars[0].var + 1, IntImm(1)),)),)
    return _declared(SCAN, "S", reads=point, writes=point)


SCAN_MESSAGE = re.escape("block 'S' reads A[vi] but Block.reads declares only A[vi + 1]")


def test_the_scan_as_parsed_is_accepted_and_runs_in_order():
    assert block_fault(SCAN) is None
    a = np.ones(65536, "float32")
    pyir.build(SCAN)["scan"](a)
    np.testing.assert_array_equal(a, np.arange(1, 65537, dtype="float32"))


def test_a_build_refuses_a_block_that_declares_too_little():
    with pytest.raises(LowerError, match=r"prim function scan: " + SCAN_MESSAGE
                       + "; the default schedule trusts what a block states"):
        pyir.build(_scan_declared_elementwise())


@pytest.mark.parametrize("step", [
    lambda sch: sch.parallel(sch.get_loops(sch.get_block("S"))[0]),
    lambda sch: sch.vectorize(sch.get_loops(sch.get_block("S"))[0]),
], ids=["parallel", "vectorize"])
def test_the_first_schedule_step_refuses_it_and_changes_nothing(step):
    sch = Schedule(_scan_declared_elementwise())
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"^(parallel|vectorize): prim function scan: "
                       + SCAN_MESSAGE + "; the schedule's legality checks trust what a "
                       "block states"):
        step(sch)
    assert sch.mod is before
    assert [s.kind for s in sch.trace.instructions] == ["get_block", "get_loops"]


def test_a_fork_made_before_the_first_step_checks_too():
    sch = Schedule(_scan_declared_elementwise())
    other = sch.fork()
    with pytest.raises(ScheduleError, match=SCAN_MESSAGE):
        other.parallel(other.get_loops(other.get_block("S"))[0])


def test_a_buffer_missing_from_the_reads_is_named():
    bad = _declared(NESTED, "B", reads=())   # its body reads only A
    assert block_fault(bad) == "block 'B' reads A[vi, vj] but Block.reads does not list A"
    with pytest.raises(LowerError, match=r"block 'B' reads A\[vi, vj\] but Block.reads does "
                                         "not list A"):
        pyir.build(bad)


def test_an_outer_block_that_declares_one_row_too_few_is_refused():
    outer = next(n for n in pyir.ir.walk(NESTED) if isinstance(n, Block) and n.name == "row")
    a, b = NESTED.params
    vi = outer.iter_vars[0].var
    half = (BufferRegion(b, (Range(vi, IntImm(1)), Range(IntImm(0), IntImm(8)))),)
    bad = _declared(NESTED, "row", writes=half)
    assert block_fault(bad) == ("block 'row' writes B[vi, 0:16] but Block.writes "
                                      "declares only B[vi, 0:8]")
    sch = Schedule(bad)
    with pytest.raises(ScheduleError, match=r"split: prim function rows: block 'row' writes"):
        sch.split(sch.get_loops(sch.get_block("B"))[-1], factors=[None, 4])


def test_declaring_more_than_the_body_accesses_is_accepted():
    a, b = NESTED.params
    whole = lambda buf: (BufferRegion(buf, (Range(IntImm(0), IntImm(8)),
                                            Range(IntImm(0), IntImm(16)))),)
    wide = _declared(NESTED, "B", reads=whole(a) + whole(b), writes=whole(b))
    assert block_fault(wide) is None
    x = np.random.default_rng(0).random((8, 16), dtype=np.float32)
    y = np.zeros_like(x)
    pyir.build(wide)["rows"](x, y)
    np.testing.assert_array_equal(y, x * 2)


def test_hand_built_blocks_with_inferred_regions_are_accepted():
    block = next(n for n in pyir.ir.walk(SCAN) if isinstance(n, Block))
    reads, writes = infer_regions(block.body, block.init, block.alloc_buffers)
    again = _declared(SCAN, "S", reads=reads, writes=writes)
    assert block_fault(again) is None
    sch = Schedule(again)
    with pytest.raises(ScheduleError, match="cannot run at the same time"):
        sch.parallel(sch.get_loops(sch.get_block("S"))[0])


SUM = from_source('''
from pyir.script import tensor as T

@T.prim_func
def total(A: T.Buffer(("n",), "float32"), S: T.Buffer((1,), "float32")):
    for k in range(n):
        with T.block("S"):
            vk = T.axis.reduce(n, k)
            with T.init():
                S[0] = T.float32(0)
            S[0] = S[0] + A[vk]
''')


def _sum_over(extent):
    """SUM with its iterator's domain replaced by ``extent`` (what the parser refuses)."""
    def narrowed(n):
        if isinstance(n, Block):
            return with_fields(n, iter_vars=(with_fields(n.iter_vars[0], extent=extent),))
        return None
    return rewrite(SUM, narrowed)


def test_a_binding_outside_its_domain_is_refused_by_the_build_and_the_schedule():
    """``vk = T.axis.reduce(4, k)`` over ``range(n)``: the block ran n times (a sum of all n
    elements), and at n = 0 its init did not run."""
    bad = _sum_over(IntImm(4))
    why = ("block 'S': block iterator vk is bound to values from 0 to n - 1 over the loops "
           "around the block, outside its domain [0, 4)")
    assert block_fault(bad) == why
    with pytest.raises(LowerError, match=re.escape(f"prim function total: {why}; the default "
                                                   "schedule trusts what a block states")):
        pyir.build(bad)
    sch = Schedule(bad)
    with pytest.raises(ScheduleError, match=re.escape(f"split: prim function total: {why}")):
        sch.split(sch.get_loops(sch.get_block("S"))[0], factors=[None, 4])


def test_a_binding_within_its_domain_is_accepted_and_sums():
    assert block_fault(SUM) is None
    assert block_fault(_sum_over(SUM.params[0].shape[0] + 3)) is None   # a wider domain
    a = np.arange(10, dtype=np.float32)
    s = np.full(1, 7, np.float32)
    pyir.build(SUM)["total"](a, s)
    assert s[0] == 45
