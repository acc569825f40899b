"""The default schedule makes a loop parallel or vectorized (and fuses row nests) only where
`Schedule.parallel` / `Schedule.vectorize` would accept it: iterations that write what
another iteration reads or writes (an in-place scan) stay serial and keep their results;
loops whose iterations touch their own elements only keep their kinds."""

import numpy as np
import pytest
from pyir.schedule import Schedule, ScheduleError
from pyir.script import from_source

import pyir
from pyir import transform
from pyir.ir import IRModule
from pyir.ir import stmt as S
from pyir.ir.node import walk

HEADER = "from pyir.script import tensor as T\n\n@T.prim_func\n"

SCAN = HEADER + '''def scan(A: T.Buffer(({shape},), "float32"), B: T.Buffer(({shape},), "float32")):
    for i in range({n} - 1):
        with T.block("S"):
            vi = T.axis.spatial({n} - 1, i)
            A[vi + 1] = A[vi + 1] + A[vi]
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi]
'''

SYMBOLIC_SCAN = SCAN.format(shape='"n"', n="n")

STENCIL = HEADER + '''def stencil(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n - 2):
        with T.block("B"):
            vi = T.axis.spatial(n - 2, i)
            B[vi + 1] = A[vi] + A[vi + 2]
'''

IN_PLACE = HEADER + '''def twice(A: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = A[vi] * T.float32(2)
'''

# Every row adds into the same B[j]: a column sum whose row iterator is declared spatial.
# The row loop carries the sum, the column loop does not.
COLUMN_SUM = HEADER + '''def column_sum(A: T.Buffer(("n", "m"), "float32"),
               B: T.Buffer(("m",), "float32")):
    for i, j in T.grid(n, m):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj] = B[vj] + A[vi, vj]
'''

# The same along rows: the column loop carries the sum, the row loop does not.
ROW_SUM = HEADER + '''def row_sum(A: T.Buffer(("n", "m"), "float32"),
            B: T.Buffer(("n",), "float32")):
    for i, j in T.grid(n, m):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = B[vi] + A[vi, vj]
'''

# In-place scans of a matrix: the loop along the scan carries the sum. (The schedule's rule
# refuses the other loop too for now: it asks every access to a written buffer to be at one
# region in each iteration, and A[i, j] and A[i + 1, j] are two.)
ROW_SCAN = HEADER + '''def row_scan(A: T.Buffer(("n", "m"), "float32")):
    for i, j in T.grid(n - 1, m):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi + 1, vj] = A[vi + 1, vj] + A[vi, vj]
'''

COLUMN_SCAN = HEADER + '''def column_scan(A: T.Buffer(("n", "m"), "float32")):
    for i, j in T.grid(n, m - 1):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj + 1] = A[vi, vj + 1] + A[vi, vj]
'''

# Row nests whose accesses all index the row, yet row i of "out" reads only Tmp[i, 0] of
# what row i of "t" writes, Tmp[i, 0:m]: the schedule's rule refuses the fused row loop in
# parallel (two regions of Tmp in one iteration), so the nests stay apart, each parallel.
ROWS_UNEVEN = HEADER + '''def rows(A: T.Buffer(("n", "m"), "float32"),
         C: T.Buffer(("n", "m"), "float32")):
    Tmp = T.alloc_buffer(("n", "m"), "float32")
    for i, j in T.grid(n, m):
        with T.block("t"):
            vi, vj = T.axis.remap("SS", [i, j])
            Tmp[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, m):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + Tmp[vi, 0]
'''


def lowered_loops(func):
    out = transform.lower(IRModule.from_dict({func.name: func}))[func.name]
    return [n for n in walk(out.body) if isinstance(n, S.For)]


def kinds(func):
    """(kind, runs vectorized chunks) of each lowered loop, outermost first."""
    return [(lp.kind, dict(lp.annotations).get("vectorize") == 1) for lp in lowered_loops(func)]


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.mark.parametrize("n", [1, 2, 9, 1000])
def test_an_in_place_scan_of_symbolic_length_gives_the_cumulative_sum(n):
    a = data(n)
    b = np.zeros(n, "float32")
    pyir.build(from_source(SYMBOLIC_SCAN))["scan"](a.copy(), b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [1, 9, 1000])
def test_an_in_place_scan_of_constant_length_gives_the_cumulative_sum(n):
    a = data(n)
    b = np.zeros(n, "float32")
    pyir.build(from_source(SCAN.format(shape=n, n=n)))["scan"](a.copy(), b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-5, atol=1e-4)


def test_the_scan_loop_stays_serial_and_the_copy_after_it_runs_in_parallel():
    assert kinds(from_source(SYMBOLIC_SCAN)) == [("serial", False), ("parallel", True)]


def test_the_schedule_refuses_the_scan_loop_too():
    sch = Schedule(IRModule.from_dict({"scan": from_source(SYMBOLIC_SCAN)}))
    (loop,) = sch.get_loops(sch.get_block("S", func_name="scan"))
    for step in (sch.parallel, sch.vectorize):
        with pytest.raises(ScheduleError):
            step(loop)


def test_a_stencil_reading_its_neighbours_stays_parallel_and_vectorized():
    func = from_source(STENCIL)
    assert kinds(func) == [("parallel", True)]
    a, b = data(1000), np.zeros(1000, "float32")
    pyir.build(func)["stencil"](a, b)
    np.testing.assert_allclose(b[1:-1], a[:-2] + a[2:], rtol=1e-6)


def test_an_in_place_update_of_each_element_stays_parallel():
    func = from_source(IN_PLACE)
    assert kinds(func) == [("parallel", True)]
    a = data(1000)
    got = a.copy()
    pyir.build(func)["twice"](got)
    np.testing.assert_allclose(got, a * 2, rtol=1e-6)


def test_a_sum_over_the_rows_keeps_the_row_loop_serial_and_vectorizes_the_columns():
    func = from_source(COLUMN_SUM)
    assert kinds(func) == [("serial", False), ("vectorized", False)]
    a, b = data(37, 50), data(50, seed=1)
    got = b.copy()
    pyir.build(func)["column_sum"](a, got)
    np.testing.assert_allclose(got, b + a.sum(axis=0), rtol=1e-5, atol=1e-4)


def test_a_sum_along_each_row_runs_the_rows_in_parallel_and_the_columns_in_order():
    func = from_source(ROW_SUM)
    assert kinds(func) == [("parallel", False), ("serial", False)]
    a, b = data(37, 50), data(37, seed=1)
    got = b.copy()
    pyir.build(func)["row_sum"](a, got)
    np.testing.assert_allclose(got, b + a.sum(axis=1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("text, name, axis", [(ROW_SCAN, "row_scan", 0),
                                              (COLUMN_SCAN, "column_scan", 1)])
def test_in_place_scans_of_a_matrix_keep_the_scan_loop_serial(text, name, axis):
    func = from_source(text)
    assert kinds(func)[axis] == ("serial", False)
    a = data(37, 50)
    got = a.copy()
    pyir.build(func)[name](got)
    np.testing.assert_allclose(got, np.cumsum(a, axis=axis), rtol=1e-5, atol=1e-4)


def test_row_nests_whose_fused_loop_the_rule_refuses_stay_apart():
    func = from_source(ROWS_UNEVEN)
    assert kinds(func) == [("parallel", False), ("vectorized", False),
                           ("parallel", False), ("vectorized", False)]
    a, c = data(33, 20), np.zeros((33, 20), "float32")
    pyir.build(func)["rows"](a, c)
    np.testing.assert_allclose(c, a + 2 * a[:, :1], rtol=1e-6)


KERNELS = [(SYMBOLIC_SCAN, "scan", ["S", "C"]), (STENCIL, "stencil", ["B"]),
           (IN_PLACE, "twice", ["A"]), (COLUMN_SUM, "column_sum", ["S"]),
           (ROW_SUM, "row_sum", ["S"]), (ROW_SCAN, "row_scan", ["S"]),
           (COLUMN_SCAN, "column_scan", ["S"]), (ROWS_UNEVEN, "rows", ["t", "out"])]


@pytest.mark.parametrize("text, name, blocks", KERNELS, ids=[k[1] for k in KERNELS])
def test_the_schedule_accepts_every_kind_the_default_schedule_gives(text, name, blocks):
    mod = IRModule.from_dict({name: from_source(text)})
    done = [n for n in walk(transform.default_schedule(mod)[name].body) if isinstance(n, S.For)]
    sch = Schedule(mod)
    handles = [lp for b in blocks for lp in sch.get_loops(sch.get_block(b, func_name=name))]
    assert len(handles) == len(done)   # no nests fused: the loops pair up in order
    for loop, handle in zip(done, handles):
        steps = {"parallel": [sch.parallel], "vectorized": [sch.vectorize], "serial": []}
        if dict(loop.annotations).get("vectorize") == 1:
            steps["parallel"].append(sch.vectorize)
        for step in steps[loop.kind]:
            step(handle)      # a ScheduleError here: the two disagree
            sch.undo()
