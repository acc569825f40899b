"""Steps after ``parallel`` or ``vectorize`` leave the loop's iterations writing apart, and
the module they make parses back (the parser checks ``T.parallel`` and ``T.vectorized`` by
the rule `Schedule.parallel` does); the same loops made parallel after those steps are
accepted. Each was accepted in one order only, and the printed module of the other order
did not parse ("writes parts of B that iterations share")."""

import numpy as np
import pytest

import pyir
from pyir.ir import assert_structural_equal, verify
from pyir.schedule import Schedule
from pyir.script import from_source

from sched_kernels import matmul

SCALE = '''
from pyir.script import tensor as T


@T.prim_func
def f(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
'''

THROUGH = '''
from pyir.script import tensor as T


@T.prim_func
def f(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    D = T.alloc_buffer(({n}, {m}), "float32")
    for i, j in T.grid({n}, {m}):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = D[vi, vj]
'''

ROW = '''
from pyir.script import tensor as T


@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    D = T.alloc_buffer(({n},), "float32")
    for i in range({n}):
        with T.block("D"):
            vi = T.axis.spatial({n}, i)
            D[vi] = A[vi] * T.float32(2)
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = D[vi]
'''



def _split_twice(sch, concurrent):
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [None, 3])
    yield lambda: sch.parallel(j0)
    yield lambda: sch.split(j1, [2, None])     # j_1_0 * 2 + j_1_1 < 3: 3 columns, not 4


def _vectorized_outermost(sch, concurrent):
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [None, 8])
    yield lambda: sch.vectorize(j1)
    yield lambda: sch.reorder(j1, i, j0)        # B[i, j_0 * 8 + j_1]: lanes 8 columns apart


def _decomposed(sch, concurrent):
    block = sch.get_block("C")
    i, j, r = sch.get_loops(block)
    f0, _ = sch.split(sch.fuse(i, j), [None, 16])
    yield lambda: sch.parallel(f0)
    yield lambda: sch.decompose_reduction(block, r)   # C_init and C: one region of a fused loop


def _laid_out_transposed(sch, concurrent):
    block = sch.get_block("D")
    f0, _ = sch.split(sch.fuse(*sch.get_loops(block)), [None, 4])
    yield lambda: sch.parallel(f0)
    yield lambda: sch.transform_layout(block, "D", "i, j -> j, i")   # D[x % m, x // m], m >= 1


def _laid_out_twice(sch, concurrent):
    block = sch.get_block("D")
    (i,) = sch.get_loops(block)
    yield lambda: sch.vectorize(i)
    yield lambda: sch.transform_layout(block, "D", "i -> i // 4, i % 4")
    yield lambda: sch.transform_layout(block, "D", "i, j -> i // 3, j, i % 3")  # D[i // 12, ..]


CASES = {
    "split_twice": (SCALE, _split_twice, "parallel"),
    "split_twice_static": (SCALE, _split_twice, "parallel"),
    "vectorized_outermost": (SCALE, _vectorized_outermost, "vectorize"),
    "decomposed": (None, _decomposed, "parallel"),
    "laid_out_transposed": (THROUGH, _laid_out_transposed, "parallel"),
    "laid_out_transposed_static": (THROUGH, _laid_out_transposed, "parallel"),
    "laid_out_twice": (ROW, _laid_out_twice, "vectorize"),
}


def _func(case):
    text, _, _ = CASES[case]
    if text is None:
        return matmul
    shape = dict(n=13, m=7) if case.endswith("_static") else dict(n='"n"', m='"m"')
    if not case.endswith("_static"):
        text = text.replace("T.grid({n}, {m})", "T.grid(n, m)").replace("range({n})", "range(n)")
        text = text.replace("T.axis.spatial({n}, i)", "T.axis.spatial(n, i)")
    return from_source(text.format(**shape))


def _args(text, n, m, rng):
    shapes = {None: [(n, 4), (4, m), (n, m)], ROW: [(n * m,), (n * m,)]}.get(
        text, [(n, m), (n, m)])
    return [rng.random(shape, dtype=np.float32) for shape in shapes]


@pytest.mark.parametrize("concurrent_first", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_around_a_concurrent_loop_print_back_and_run(case, concurrent_first):
    func = _func(case)
    sch = Schedule(func)
    steps = list(_steps_in_order(CASES[case][1](sch, CASES[case][2]), concurrent_first))
    for step in steps:
        step()
    verify(sch.mod)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    lib, ref = pyir.build(sch.mod), pyir.build(func)
    rng = np.random.default_rng(0)
    for n, m in ((13, 7), ) if case.endswith("_static") else ((1, 1), (5, 13), (3, 8)):
        args = _args(CASES[case][0], n, m, rng)
        want = [a.copy() for a in args]
        lib[func.name](*args)
        ref[func.name](*want)
        np.testing.assert_allclose(args[-1], want[-1], rtol=1e-5)


def _steps_in_order(steps, concurrent_first):
    """The case's steps, its first (parallel or vectorize) first or last. The steps are
    made lazily, each once the ones before it ran (they take the loops those return)."""
    first = next(steps)
    if concurrent_first:
        yield first
        yield from steps
    else:
        yield from steps
        yield first

