"""Steps that would change results through a predicate, a partial producer, a hazard
between iterations or an input overwritten in between: each is refused with a ScheduleError
that says why, and the schedule is unchanged; a blockized reduction over a symbolic (maybe
empty) extent keeps its numbers."""

import numpy as np
import pytest
from pyir.schedule import Schedule, ScheduleError
from pyir.script import from_source

import pyir
from pyir.ir import structural_equal

from sched_helpers import check_results, fresh
from sched_kernels import rowsum_symbolic

PREDICATED_PRODUCER = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer((n,), "float32")
    for i in range(n):
        with T.block("B1"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
    for i in range(n):
        with T.block("B2"):
            vi = T.axis.spatial(n, i)
            T.where(i < 4)
            B[vi] = A[vi] * T.float32(3)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[vi] + T.float32(1)
'''

PREDICATED_CONSUMER = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer((n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            T.where(i < 4)
            C[vi] = B[vi] + T.float32(1)
'''

PARTIAL_PRODUCER = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n - 1):
        with T.block("S"):
            vi = T.axis.spatial(n - 1, i)
            A[vi] = A[vi] * T.float32(2)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
'''

CONSUMER_OVERWRITES_INPUT = '''
from pyir.script import tensor as T

@T.prim_func
def f(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer(("n",), "float32")
    for i in range(n):
        with T.block("P"):
            vi = T.axis.spatial(n, i)
            B[vi] = X[vi] + T.if_then_else(vi >= 1, X[vi - 1], T.float32(0))
    for i in range(n):
        with T.block("Q"):
            vi = T.axis.spatial(n, i)
            X[vi] = B[vi] * T.float32(10)
'''

INPUT_OVERWRITTEN_BETWEEN = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer((n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(n):
        with T.block("Z"):
            vi = T.axis.spatial(n, i)
            A[vi] = T.float32(0)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[vi] + T.float32(1)
'''

ROW_NORM_PER_COLUMN = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "m"), "float32"), O: T.Buffer(("n", "m"), "float32")):
    S = T.alloc_buffer((n,), "float32")
    for i, k in T.grid(n, m):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk] * A[vi, vk]
    for i, j in T.grid(n, m):
        with T.block("O"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = A[vi, vj] - S[vi]
'''

def _refused(src, step, words):
    """``step`` on a schedule of ``src`` (text, or the schedule) raises a ScheduleError
    matching ``words`` and leaves the schedule as it was."""
    sch = src if isinstance(src, Schedule) else Schedule(from_source(src))
    before = sch.mod
    with pytest.raises(ScheduleError, match=words):
        step(sch)
    assert structural_equal(sch.mod, before)


def _rows_match(sch, want):
    """The scheduled (n, m) -> (n, m) function computes ``want(a)``, empty rows included."""
    lib = pyir.build(sch.mod)
    for n, m in ((2, 3), (1, 1), (3, 0), (4, 5)):
        a, o = np.arange(n * m, dtype="float32").reshape(n, m), np.zeros((n, m), "float32")
        lib["f"](a, o)
        np.testing.assert_allclose(o, want(a))


def _first_loop(sch, block):
    return sch.get_loops(sch.get_block(block))[0]


def _vectors_match(sch, want):
    """The scheduled (n,) -> (n,) function computes ``want(a)``, for n empty up to past the
    predicates' cuts."""
    lib = pyir.build(sch.mod, opt_level="none")
    for n in (0, 1, 3, 4, 5, 9):
        a, c = np.arange(n, dtype="float32"), np.full(n, -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, want(a))


@pytest.mark.parametrize("where, moved, runs", [
    ("i < 4", "i + ax0 < 4", lambda i: i < 4),
    ("i >= 3", "i + ax0 >= 3", lambda i: i >= 3),
    ("i >= 2 and i < 5", "i + ax0 >= 2 and i + ax0 < 5", lambda i: (i >= 2) & (i < 5)),
])
def test_compute_at_of_a_block_whose_where_is_over_its_iterators(where, moved, runs):
    """B2 runs where vi < 4 (T.where(i < 4), vi = i): it was refused; it moves with its
    predicate, over the new bindings, and overwrites the same elements of B."""
    sch = Schedule(from_source(PREDICATED_PRODUCER.replace("i < 4", where)))
    sch.compute_at(sch.get_block("B2"), _first_loop(sch, "C"))
    assert f"T.where({moved})" in sch.mod.script()
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    _vectors_match(sch, lambda a: np.where(runs(np.arange(len(a))), 3 * a, a) + 1)


def test_compute_at_of_a_block_whose_where_is_not_affine_is_refused():
    _refused(PREDICATED_PRODUCER.replace("i < 4", "i % 2 == 0"),
             lambda s: s.compute_at(s.get_block("B2"), _first_loop(s, "C")),
             r"compute_at: block \"B2\" at loop i: the block runs only where i % 2 == 0 "
             r"\(T.where\); moving it would compute the other points too")


def test_cache_write_of_a_predicated_block_is_refused():
    _refused(PREDICATED_PRODUCER, lambda s: s.cache_write(s.get_block("B2"), "B", "global"),
             "cache_write: block \"B2\", buffer B: the block writes only part of B")


def test_reverse_compute_at_of_a_block_whose_where_is_over_its_iterators():
    sch = Schedule(from_source(PREDICATED_CONSUMER))
    sch.reverse_compute_at(sch.get_block("C"), _first_loop(sch, "B"))
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    _vectors_match(sch, lambda a: np.where(np.arange(len(a)) < 4, 2 * a + 1, -1))


def test_reverse_compute_at_of_a_block_whose_where_is_not_affine_is_refused():
    _refused(PREDICATED_CONSUMER.replace("i < 4", "i % 2 == 0"),
             lambda s: s.reverse_compute_at(s.get_block("C"), _first_loop(s, "B")),
             r"the block runs only where i % 2 == 0 \(T.where\)")


def test_reverse_compute_at_under_a_loop_producing_part_of_the_domain_is_refused():
    _refused(PARTIAL_PRODUCER,
             lambda s: s.reverse_compute_at(s.get_block("C"), _first_loop(s, "S")),
             r"reverse_compute_at: block \"C\" at loop i: the loop produces \[0, n - 1\) of what "
             r"iterator vi reads, \[0, n\): moved there, the block would skip the rest")


def test_reverse_compute_at_of_a_block_overwriting_what_the_loop_reads_is_refused():
    _refused(CONSUMER_OVERWRITES_INPUT,
             lambda s: s.reverse_compute_at(s.get_block("Q"), _first_loop(s, "P")),
             "blocks under loop i also access X, which the block writes: moved into the loop, "
             "they would see its writes of earlier iterations")


def test_compute_inline_across_a_block_overwriting_its_input_is_refused():
    _refused(INPUT_OVERWRITTEN_BETWEEN, lambda s: s.compute_inline(s.get_block("B")),
             "compute_inline: block \"B\": block \"Z\" writes A, which the block reads, before B "
             "is read: inlined, the readers would see the new values")


def test_compute_inline_beside_a_block_overwriting_its_input_is_refused():
    """With Z in B's own loop, writing A[i] after B read it, compute_inline(B) made C read
    the overwritten A (C came out 1 everywhere): only the nests after B's were checked."""
    beside = INPUT_OVERWRITTEN_BETWEEN.replace('    for i in range(n):\n        with T.block("Z")',
                                               '        with T.block("Z")')
    _refused(beside, lambda s: s.compute_inline(s.get_block("B")),
             "compute_inline: block \"B\": block \"Z\" writes A, which the block reads, before B "
             "is read: inlined, the readers would see the new values")
    a, c = np.arange(1, 5, dtype="float32"), np.zeros(4, "float32")
    pyir.build(from_source(beside))["f"](a, c)
    np.testing.assert_array_equal(c, np.arange(1, 5) * 2 + 1)


def test_decompose_reduction_above_a_loop_driving_none_of_its_iterators_is_refused():
    """S computed at O's column loop j runs its whole reduction (from its init) again for
    each j. Decomposed at j, the init ran once before j and the m reductions summed into
    it: S came out m times too large."""
    sch = Schedule(from_source(ROW_NORM_PER_COLUMN))
    sch.compute_at(sch.get_block("S"), sch.get_loops(sch.get_block("O"))[1])
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"decompose_reduction: block \"S\" at loop j: "
                       "loop j drives no iterator of the block: the reduction runs again in "
                       r"each of its iterations, and its init with it \(decompose at a loop "
                       r"inside j\)"):
        sch.decompose_reduction(sch.get_block("S"), sch.get_loops(sch.get_block("S"))[1])
    assert sch.mod is before


def test_decompose_reduction_inside_a_loop_driving_none_of_its_iterators_runs_right():
    """Decomposed at its own reduction loop, inside j, the init runs once per reduction."""
    sch = Schedule(from_source(ROW_NORM_PER_COLUMN))
    sch.compute_at(sch.get_block("S"), sch.get_loops(sch.get_block("O"))[1])
    sch.decompose_reduction(sch.get_block("S"), sch.get_loops(sch.get_block("S"))[-1])
    _rows_match(sch, lambda a: a - (a * a).sum(1, keepdims=True))


def test_reverse_compute_inline_across_a_block_overwriting_an_input_still_runs_right():
    sch = Schedule(from_source(INPUT_OVERWRITTEN_BETWEEN))
    sch.reverse_compute_inline(sch.get_block("C"))
    a, c = np.arange(1, 5, dtype="float32"), np.zeros(4, "float32")
    pyir.build(sch.mod)["f"](a, c)
    np.testing.assert_array_equal(c, np.arange(1, 5) * 2 + 1)


@pytest.mark.parametrize("reorder", [False, True])
def test_blockized_reduction_over_a_symbolic_extent(reorder):
    """The inner block's reduction runs through the outer block's iterator: its init goes
    before the outer reduction loop (once per row, also when m is 0), not before each chunk."""
    sch = Schedule(rowsum_symbolic)
    i, k = sch.get_loops(sch.get_block("S"))
    k0, k1 = sch.split(k, [None, 4])
    if reorder:
        sch.reorder(k0, i)
        sch.blockize(i)
    else:
        sch.blockize(k1)
    lib = pyir.build(sch.mod)
    rng = np.random.default_rng(0)
    for m in (8, 7, 1, 0):
        a = rng.standard_normal((3, m)).astype("float32")
        s = np.full(3, 5, "float32")
        lib["rowsum_symbolic"](a, s)
        np.testing.assert_allclose(s, a.sum(1), rtol=1e-5, atol=1e-5)


def test_a_decomposed_reduction_over_a_symbolic_extent_fuses_with_its_rows():
    """fuse refuses a row loop and a maybe-empty reduction loop of a block with an init (its
    init never ran at m = 0); with the init decomposed first, the update fuses and S is 0."""
    sch = Schedule(rowsum_symbolic)
    i, k = sch.get_loops(sch.get_block("S"))
    sch.decompose_reduction(sch.get_block("S"), i)
    sch.fuse(i, k)
    lib = pyir.build(sch.mod)
    for m in (0, 1, 7):
        a, s = np.arange(3 * m, dtype="float32").reshape(3, m), np.full(3, 5, "float32")
        lib["rowsum_symbolic"](a, s)
        np.testing.assert_allclose(s, a.sum(1))


@pytest.mark.parametrize("blockize", [False, True])
def test_guards_on_parts_of_an_index_bound_it_together(blockize):
    """P[(i_0 * 2 + i_1) * 2 + i_2 + r_0] under ``if (i_0 * 2 + i_1) * 2 + i_2 < n`` and
    ``if r_0 < 3`` (r_0 in a loop of 4): the first guard's bound plus the loop's range gave
    n + 2, and every call was refused ("requires False")."""
    sch = fresh("conv1d")
    i, r = sch.get_loops(sch.get_block("Y"))
    _, r1 = sch.split(r, factors=[4, None])
    if blockize:
        sch.blockize(r1)
    sch.split(i, factors=[None, 2, 2])
    check_results(sch, "conv1d", sizes=(1, 5, 7, 9))


def test_reverse_compute_inline_before_a_producer_in_its_own_nest_is_refused():
    """B reads two copies, A_local and bias_local, the second computed at B's row loop.
    Inlined into the copy of A, B ran before any of bias_local was computed and read
    garbage: only blocks between the two nests were checked, not those beside B in its own."""
    sch = fresh("bias_relu")
    b = sch.get_block("B")
    sch.cache_read(b, "A", "local")
    sch.compute_at(sch.cache_read(b, "bias", "local"), sch.get_loops(b)[0])
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"reverse_compute_inline: block \"B\": block\(s\) "
                       "'bias_local' in between also access bias_local; moving the block "
                       "across them would change results"):
        sch.reverse_compute_inline(b)
    assert sch.mod is before
    check_results(sch, "bias_relu", sizes=(0, 1, 5))


def test_reverse_compute_at_before_a_producer_beside_the_loop_is_refused():
    """With S computed after E's column loop j (in E's row loop), O moved under j read S[i]
    before S was computed in that iteration: nothing beside the loop in its nest was
    checked."""
    src = ROW_NORM_PER_COLUMN.replace("A[vi, vk] * A[vi, vk]", "E[vi, vk]").replace(
        "A[vi, vj] - S[vi]", "E[vi, vj] * S[vi]").replace("    for i, k", """\
    E = T.alloc_buffer((n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = A[vi, vj] - T.float32(1)
    for i, k""")
    sch = Schedule(from_source(src))
    sch.reverse_compute_at(sch.get_block("S"), _first_loop(sch, "E"))
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"reverse_compute_at: block \"O\" at loop j: "
                       r"block\(s\) 'S' in between also access S"):
        sch.reverse_compute_at(sch.get_block("O"), sch.get_loops(sch.get_block("E"))[1])
    assert sch.mod is before
    sch.reverse_compute_at(sch.get_block("O"), _first_loop(sch, "E"))
    _rows_match(sch, lambda a: (a - 1) * (a - 1).sum(1, keepdims=True))


def test_compute_at_of_a_decomposed_reduction_under_a_loop_repeating_its_rows_is_refused():
    """S decomposed at its row loop (init apart) and computed at O's column loop j ran its
    update m times per row: S came out m times too large."""
    sch = Schedule(from_source(ROW_NORM_PER_COLUMN))
    sch.decompose_reduction(sch.get_block("S"), _first_loop(sch, "S"))
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"compute_at: block \"S\" at loop j: the block "
                       r"updates S in place \(it reads it and has no init\), and consecutive "
                       "iterations of loop j need the same elements of S: they would be "
                       "updated again"):
        sch.compute_at(sch.get_block("S"), sch.get_loops(sch.get_block("O"))[1])
    assert sch.mod is before
    sch.compute_at(sch.get_block("S"), _first_loop(sch, "O"))
    _rows_match(sch, lambda a: a - (a * a).sum(1, keepdims=True))


def test_compute_at_into_a_loop_beside_a_block_overwriting_its_input_is_refused():
    """With C under a loop j beside Z (which zeroes A[i]) in one loop i, B computed at j read
    A after Z had zeroed it (C came out 1 everywhere): nothing beside the loop was checked."""
    beside = INPUT_OVERWRITTEN_BETWEEN.replace('''    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)''', '''        for j in range(1):
            with T.block("C"):
                vi = T.axis.spatial(n, i + j)''').replace("C[vi] = B", "    C[vi] = B")
    _refused(beside, lambda s: s.compute_at(s.get_block("B"), s.get_loops(s.get_block("C"))[1]),
             r"compute_at: block \"B\" at loop j: block\(s\) 'Z' in between also access A")
    a, c = np.arange(1, 5, dtype="float32"), np.zeros(4, "float32")
    pyir.build(from_source(beside))["f"](a, c)
    np.testing.assert_array_equal(c, np.arange(1, 5) * 2 + 1)


def test_compute_at_into_a_loop_holding_a_block_overwriting_its_input_is_refused():
    """With C beside Z (which zeroes A[i]) in one loop i, B computed at i was placed after Z,
    the last block under the loop writing its input, and read A zeroed ([3, 5, 7, 9] came out
    [1, 1, 1, 1]): Z ran after B before the move."""
    under = INPUT_OVERWRITTEN_BETWEEN.replace('''            A[vi] = T.float32(0)
    for i in range(n):
        with T.block("C"):''', '''            A[vi] = T.float32(0)
        with T.block("C"):''')
    _refused(under, lambda s: s.compute_at(s.get_block("B"), s.get_loops(s.get_block("C"))[0]),
             r"compute_at: block \"B\" at loop i: block\(s\) 'Z' in between also access A")
    a, c = np.arange(1, 5, dtype="float32"), np.zeros(4, "float32")
    pyir.build(from_source(under))["f"](a, c)
    np.testing.assert_array_equal(c, np.arange(1, 5) * 2 + 1)


ROWS_READ = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((ROWS,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(ROWS):
        with T.block("C"):
            vi = T.axis.spatial(ROWS, i)
            C[vi] = READ
'''


@pytest.mark.parametrize("rows, read, tile, want", [
    (4, "B[vi * 2] + B[vi * 2 + 1]", 2, lambda b: b[0::2] + b[1::2]),
    (4, "B[vi * 2] + B[vi * 2 + 1]", 4, lambda b: b[0::2] + b[1::2]),
    (4, "B[vi * 2 + 1]", 3, lambda b: b[1::2]),
    (8, "B[vi] * T.float32(3)", 3, lambda b: b * 3),
])
def test_reverse_compute_at_of_a_block_reading_neighbouring_rows_of_each_tile(rows, read, tile,
                                                                             want):
    """A consumer reading rows 2 * vi and 2 * vi + 1 (here elements of one dimension) of what
    tiles of rows produce was refused (its index is not an iterator): each tile consumes
    the rows whose reads lie in it."""
    sch = Schedule(from_source(ROWS_READ.replace("ROWS", str(rows)).replace("READ", read)))
    i0, _ = sch.split(_first_loop(sch, "B"), [None, tile])
    sch.reverse_compute_at(sch.get_block("C"), i0)
    a = np.arange(8, dtype="float32")
    c = np.zeros(rows, "float32")
    pyir.build(sch.mod)["f"](a, c)
    np.testing.assert_array_equal(c, want(2 * a))


@pytest.mark.parametrize("rows, read, tile, words", [
    (4, "B[vi * 2] + B[vi * 2 + 1]", None, r"the block reads 2 elements of B from "
     r"vi \* 2 in dimension 0, and loop i produces \[i, i \+ 1\) of it per iteration: the reads "
     "of some points would straddle two iterations"),
    (7, "B[vi] + B[vi + 1]", 4, r"the block reads 2 elements of B from vi in dimension "
     r"0, and loop i_0 produces \[i_0 \* 4, i_0 \* 4 \+ 4\) of it per iteration"),
    (3, "B[vi * 2 + 1] + B[vi * 2 + 2]", 4, r"the block reads 2 elements of B from "
     r"vi \* 2 \+ 1 in dimension 0"),
    (4, "B[vi * 2] + B[0]", 4, r"the consumed buffer B must be indexed by distinct "
     r"block iterators, one per dimension, each times a constant plus constants"),
])
def test_reverse_compute_at_of_a_block_reading_across_tiles_is_refused(rows, read, tile, words):
    """Rows i and i + 1 (or 2 * vi + 1 and 2 * vi + 2 of tiles of 4) lie in two tiles:
    no iteration could consume such a point."""
    src = ROWS_READ.replace("ROWS", str(rows)).replace("READ", read)
    sch = Schedule(from_source(src))
    i = _first_loop(sch, "B")
    if tile:
        sch.split(i, [None, tile])
    before = sch.mod
    with pytest.raises(ScheduleError, match="reverse_compute_at: block \"C\" at loop i.*: "
                       + words):
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0])
    assert structural_equal(sch.mod, before)


WRITES = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((SIZE,), "float32"), B: T.Buffer((SIZE,), "float32")):
    for i in range(LOOP):
        with T.block("B"):
            vi = T.axis.spatial(LOOP, i)
            T.where(WHERE)
            B[INDEX] = A[INDEX] * T.float32(2)
'''


def _writes(size, loop, where, index):
    return from_source(WRITES.replace("SIZE", str(size)).replace("LOOP", str(loop))
                       .replace("WHERE", where).replace("INDEX", index))


def test_cache_write_of_a_block_writing_every_other_element_is_refused():
    """B[vi * 2] for vi < 5 spans B's 9 elements but writes 5: the copy back wrote the
    cache's 4 unwritten elements into B (garbage at opt_level "none")."""
    sch = Schedule(_writes(9, 5, "True", "vi * 2"))
    before = sch.mod
    with pytest.raises(ScheduleError, match="cache_write: block \"B\", buffer B: the block "
                       "writes only part of B; copying the cache back would overwrite the rest"):
        sch.cache_write(sch.get_block("B"), 0, "global")
    assert structural_equal(sch.mod, before)


CONDITIONAL_WRITE = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            if vi % 2 == 0:
                B[vi] = A[vi]
'''


def test_cache_write_of_a_block_storing_under_an_if_is_refused():
    """B[vi] stored only where vi is even: its region is all of B, and the copy back wrote
    the cache's unwritten odd elements into B (zeros at opt_level "none")."""
    _refused(CONDITIONAL_WRITE, lambda s: s.cache_write(s.get_block("B"), 0, "global"),
             "cache_write: block \"B\", buffer B: the block writes only part of B; copying "
             "the cache back would overwrite the rest")


@pytest.mark.parametrize("loop, where, index, covers", [
    (12, "i < 10", "vi", True),
    (12, "i < 9", "vi", False),
    (10, "i % 2 == 0", "vi", False),
    # A lower bound: B[vi - 3] for i from 3 writes all of a 7-element B. It was refused.
    (10, "i >= 3", "vi - 3", True),
    (10, "3 <= i", "vi - 3", True),
    (12, "i > 2 and i < 10", "vi - 3", True),
    (10, "i >= 4", "vi - 3", False),
    (12, "i >= 3", "vi - 3", False),
])
def test_cache_write_of_a_block_whose_where_keeps_it_in_the_buffer(loop, where, index,
                                                                  covers):
    """T.where(i < 10) over i < 12 writes all of a 10-element B: refused, as any block with
    a T.where, though its predicate keeps it inside; one writing part of B still is."""
    size = 7 if "- 3" in index else 10
    sch = Schedule(_writes(size, loop, where, index))
    if not covers:
        with pytest.raises(ScheduleError, match="the block writes only part of B"):
            sch.cache_write(sch.get_block("B"), 0, "global")
        return
    sch.cache_write(sch.get_block("B"), 0, "global")
    a, b = np.arange(size, dtype="float32"), np.full(size, -1, "float32")
    pyir.build(sch.mod, opt_level="none")["f"](a, b)
    np.testing.assert_array_equal(b, 2 * a)


SHIFTED_WRITES = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n + 3):
        with T.block("B"):
            vi = T.axis.spatial(n + 3, i)
            T.where(i >= 3)
            B[vi - 3] = A[vi - 3] * T.float32(2)
'''


def test_cache_write_of_a_symbolic_block_whose_where_cuts_off_its_first_iterations():
    sch = Schedule(from_source(SHIFTED_WRITES))
    sch.cache_write(sch.get_block("B"), 0, "global")
    lib = pyir.build(sch.mod, opt_level="none")
    for n in (0, 1, 3, 7):
        a, b = np.arange(n, dtype="float32"), np.full(n, -1, "float32")
        lib["f"](a, b)
        np.testing.assert_array_equal(b, 2 * a)


def _fused_split(sch, block, factor=4):
    """The outer loop of ``block``'s loops fused and split by ``factor``."""
    return sch.split(sch.fuse(*sch.get_loops(sch.get_block(block))), [None, factor])[0]


def test_compute_at_into_a_split_of_a_fused_symbolic_loop():
    """C's rows and columns fused (i * m + j) and split by 4: B's region in one iteration,
    rows (f * 4) // m to (f * 4 + 3) // m, could not be bounded (m >= 1 was not known from
    the loop over n * m), so compute_at was refused. B now computes those rows whole."""
    sch = fresh("chain")
    sch.compute_at(sch.get_block("B"), _fused_split(sch, "C"))
    check_results(sch, "chain")


def test_reverse_compute_at_into_a_split_of_a_fused_symbolic_loop():
    """B's rows and columns fused and split by 4: an iteration writes 4 elements in
    row-major order, which the relaxed region (rows (f * 4) // m to (f * 4 + 3) // m, whole)
    only bounds, and reverse_compute_at was refused. C now computes those 4 points, as B
    wrote them."""
    sch = fresh("chain")
    sch.reverse_compute_at(sch.get_block("C"), _fused_split(sch, "B"))
    check_results(sch, "chain")
    lib = pyir.build(sch.mod, opt_level="none")
    for n, m in ((1, 1), (3, 5), (5, 3), (2, 1), (0, 3), (3, 0)):
        a = np.arange(n * m, dtype="float32").reshape(n, m)
        c = np.full((n, m), -1, "float32")
        lib["chain"](a, c)
        np.testing.assert_array_equal(c, 2 * a + 1)


SQUARE = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "n"), "float32"), C: T.Buffer(("n", "n"), "float32")):
    B = T.alloc_buffer((n, n), "float32")
    for i, j in T.grid(n, n):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(n, n):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = CONSUMED
'''


def test_reverse_compute_at_into_a_split_of_a_fused_loop_reading_a_transpose():
    """Each iteration's 4 points of B are read by 4 points of C, transposed."""
    sch = Schedule(from_source(SQUARE.replace("CONSUMED", "B[vj, vi]")))
    sch.reverse_compute_at(sch.get_block("C"), _fused_split(sch, "B"))
    lib = pyir.build(sch.mod, opt_level="none")
    for n in (0, 1, 3, 5):
        a = np.arange(n * n, dtype="float32").reshape(n, n)
        c = np.full((n, n), -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, a.T + 1)


def test_reverse_compute_at_into_a_split_of_a_fused_loop_reading_other_points_is_refused():
    """C reads column 0 of rows the iteration writes only in part."""
    sch = Schedule(from_source(SQUARE.replace("CONSUMED", "B[vi, vj] + B[vi, 0]")))
    f0 = _fused_split(sch, "B")
    _refused(sch, lambda s: s.reverse_compute_at(s.get_block("C"), f0),
             r"reverse_compute_at: block \"C\" at loop i_j_fused_0: the consumed buffer B must "
             "be indexed by distinct block iterators")


def test_compute_at_of_a_decomposed_reduction_into_a_split_of_a_fused_loop():
    """Four points of O in one iteration share their row of S with the next iteration's:
    the update would run again there, and compute_at was refused. Each iteration now
    updates only the rows no earlier one needed."""
    sch = Schedule(from_source(ROW_NORM_PER_COLUMN))
    sch.decompose_reduction(sch.get_block("S"), _first_loop(sch, "S"))
    sch.compute_at(sch.get_block("S"), _fused_split(sch, "O"))
    lib = pyir.build(sch.mod)
    for n, m in ((1, 1), (3, 5), (5, 3), (2, 4), (7, 2), (4, 1), (0, 3), (3, 0)):
        a = np.random.default_rng(n * 10 + m).random((n, m), dtype="float32")
        o = np.full((n, m), -1, "float32")
        lib["f"](a, o)
        np.testing.assert_allclose(o, a - (a * a).sum(1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("read, parallel", [("S[n - 1 - vi]", False), ("S[vi]", True)])
def test_compute_at_of_a_decomposed_reduction_read_in_reverse_or_in_parallel_is_refused(
        read, parallel):
    """The rows consecutive iterations need run down: which of them an earlier iteration
    computed is not the range up to where the previous one ended. Or the iterations run at
    once, and one would read rows another is computing."""
    sch = Schedule(from_source(ROW_NORM_PER_COLUMN.replace("A[vi, vj] - S[vi]",
                                                           f"A[vi, vj] - {read}")))
    sch.decompose_reduction(sch.get_block("S"), _first_loop(sch, "S"))
    f0 = _fused_split(sch, "O")
    if parallel:
        sch.parallel(f0)
    _refused(sch, lambda s: s.compute_at(s.get_block("S"), f0),
             r"compute_at: block \"S\" at loop i_j_fused_0: the block updates S in place \(it "
             r"reads it and has no init\), and consecutive iterations of loop i_j_fused_0 need "
             "the same elements")


def _blockized_init(sch):
    """mm_relu with Y's nest blockized and its reduction decomposed inside the block: Y_init
    and Y are the only users of Y in their scope."""
    sch.blockize(_first_loop(sch, "Y"))
    y = sch.get_block("Y")
    return sch.decompose_reduction(y, sch.get_loops(y)[0])


def test_compute_at_of_an_init_into_the_loop_its_reduction_runs_over_is_refused():
    """Y_init computed at r, the reduction loop of Y, ran in every iteration of r and reset
    Y[i, j] between Y's updates: Y was the last product alone."""
    sch = fresh("mm_relu")
    init = _blockized_init(sch)
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"compute_at: block \"Y_init\" at loop r: block "
                       r"\"Y\" under loop r updates Y in place, and consecutive iterations of "
                       "loop r need the same elements of Y: computed again, they would "
                       "overwrite its updates"):
        sch.compute_at(init, sch.get_loops(sch.get_block("Y"))[2])
    assert sch.mod is before
    sch.compute_at(init, sch.get_loops(sch.get_block("Y"))[1])
    check_results(sch, "mm_relu")


STRIDED_PRODUCER = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i0, i1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 + i1 * 4)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = C[vi] + B[vi]
'''


def test_reverse_compute_at_under_a_loop_producing_a_strided_region():
    """Iteration i0 writes B[i0], B[i0 + 4], ... B[i0 + 12]: C, moved under i0, consumed the
    13 elements those span in each iteration, reading B before it was written and adding
    B[vi] into C[vi] up to 4 times. It was then refused; C now computes the 4 points the
    iteration writes. Reading B[vi + 1] too, it still is refused."""
    sch = Schedule(from_source(STRIDED_PRODUCER))
    sch.reverse_compute_at(sch.get_block("C"), _first_loop(sch, "B"))
    a, c = np.arange(16, dtype="float32"), np.ones(16, "float32")
    pyir.build(sch.mod, opt_level="none")["f"](a, c)
    np.testing.assert_array_equal(c, 1 + 2 * a)
    _refused(STRIDED_PRODUCER.replace("B = T.alloc_buffer((16,)", "B = T.alloc_buffer((17,)")
             .replace("C[vi] + B[vi]", "C[vi] + B[vi] + B[vi + 1]"),
             lambda s: s.reverse_compute_at(s.get_block("C"), _first_loop(s, "B")),
             r"reverse_compute_at: block \"C\" at loop i0: the blocks under loop i0 write B "
             r"within \[i0:i0 \+ 13\] in one iteration, but not all of it \(a stride, or a "
             r"T.where\): moved there, the block would read what the iteration did not produce")
    sch = Schedule(from_source(STRIDED_PRODUCER))
    sch.reorder(*reversed(sch.get_loops(sch.get_block("B"))))
    sch.reverse_compute_at(sch.get_block("C"), _first_loop(sch, "B"))
    a, c = np.arange(16, dtype="float32"), np.ones(16, "float32")
    pyir.build(sch.mod, opt_level="none")["f"](a, c)
    np.testing.assert_array_equal(c, 1 + 2 * a)


SHIFTED_PRODUCER = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n", "m + 4"), "float32"), C: T.Buffer(("n", "m"), "float32")):
    B = T.alloc_buffer((n, m), "float32")
    for i, j in T.grid(n, m + 4):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            vj = T.axis.spatial(m, j - 4)
            T.where(j >= 4)
            B[vi, vj] = A[vi, vj + 4] * T.float32(2)
    for i, j in T.grid(n, m):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
'''


def test_reverse_compute_at_under_a_loop_whose_producer_runs_where_its_predicate_holds():
    """B runs for j from 4 and writes row i of B whole in iteration i; its region was
    relaxed over all of j ([-4, m)), not where T.where(j >= 4) lets it run, and the
    schedule was refused as writing only part of it."""
    sch = Schedule(from_source(SHIFTED_PRODUCER))
    sch.reverse_compute_at(sch.get_block("C"), _first_loop(sch, "B"))
    lib = pyir.build(sch.mod, opt_level="none")
    for n, m in ((1, 1), (3, 5), (2, 0)):
        a = np.arange(n * (m + 4), dtype="float32").reshape(n, m + 4)
        c = np.full((n, m), -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, 2 * a[:, 4:] + 1)


SHIFTED_BOTH = SHIFTED_PRODUCER.replace("""    for i, j in T.grid(n, m):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])""", """    for i, j in T.grid(n, m + 4):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            vj = T.axis.spatial(m, j - 4)
            T.where(j >= 4)""")


@pytest.mark.parametrize("src, block, other, depth", [
    (SHIFTED_PRODUCER, "B", "C", 0), (SHIFTED_PRODUCER, "B", "C", 1),
    (SHIFTED_BOTH, "B", "C", 0), (SHIFTED_BOTH, "B", "C", 1),
    (SHIFTED_BOTH, "C", "B", 0)])
def test_compute_at_of_a_block_whose_where_narrows_its_loops(src, block, other, depth):
    """T.where(j >= 4) with vj = j - 4 runs j from 4, binding vj over all its domain: the
    block was refused as running only where j >= 4 (compute_at) or as not bound one-to-one
    (the loop starting at 0); it moves, its new loops over vj alone."""
    sch = Schedule(from_source(src))
    loop = sch.get_loops(sch.get_block(other))[depth]
    if block == "B":
        sch.compute_at(sch.get_block(block), loop)
    else:
        sch.reverse_compute_at(sch.get_block(block), loop)
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    lib = pyir.build(sch.mod, opt_level="none")
    for n, m in ((1, 1), (3, 5), (2, 0), (2, 17), (0, 3)):
        a = np.arange(n * (m + 4), dtype="float32").reshape(n, m + 4)
        c = np.full((n, m), -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, 2 * a[:, 4:] + 1)


def test_reverse_compute_at_under_the_loop_a_producer_where_bounds():
    """B runs where T.where(j >= 4) holds, j being the loop C moves under: the iterations
    j < 4 write nothing, but would write B[vi, j - 4], outside B, so C has nothing to
    compute there. It was refused as writing only part of the region of an iteration; it
    still is where the iterations left out would write inside B (vj = j)."""
    sch = Schedule(from_source(SHIFTED_PRODUCER))
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[1])
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    lib = pyir.build(sch.mod, opt_level="none")
    for n, m in ((1, 1), (3, 5), (2, 0), (0, 3)):
        a = np.arange(n * (m + 4), dtype="float32").reshape(n, m + 4)
        c = np.full((n, m), -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, 2 * a[:, 4:] + 1)
    _refused(SHIFTED_PRODUCER.replace("T.axis.spatial(m, j - 4)", "T.axis.spatial(m, j)")
             .replace("T.where(j >= 4)", "T.where(j >= 4 and j < m)"),
             lambda s: s.reverse_compute_at(s.get_block("C"), s.get_loops(s.get_block("B"))[1]),
             r"the blocks under loop j write B within \[i:i \+ 1, j:j \+ 1\] in one "
             r"iteration, but not all of it")


def test_reverse_compute_at_point_by_point_of_a_block_whose_where_is_over_its_iterators():
    """C, under T.where(j <= i), computes the points of B a split of B's fused loop writes,
    where its predicate holds."""
    src = SQUARE.replace("C[vi, vj] = CONSUMED",
                         "T.where(j <= i)\n            C[vi, vj] = B[vi, vj]")
    sch = Schedule(from_source(src))
    sch.reverse_compute_at(sch.get_block("C"), _fused_split(sch, "B"))
    assert structural_equal(from_source(sch.mod.script()), sch.mod)
    lib = pyir.build(sch.mod, opt_level="none")
    for n in (0, 1, 3, 5):
        a = np.arange(n * n, dtype="float32").reshape(n, n)
        c = np.full((n, n), -1, "float32")
        lib["f"](a, c)
        np.testing.assert_array_equal(c, np.where(np.tri(n, dtype=bool), a + 1, -1))


SOFTMAX = ROW_NORM_PER_COLUMN.replace("A[vi, vk] * A[vi, vk]", "T.exp(A[vi, vk])").replace(
    "A[vi, vj] - S[vi]", "T.exp(A[vi, vj]) / S[vi]")


def test_compute_at_of_an_rfactor_of_a_reduction_split_with_a_tail():
    """A softmax's row sum S split by 16 over a symbolic m, then rfactor: S_rf runs where
    vk_0 * 16 + vk_1 < m, a predicate over two of its iterators, and compute_at into the
    consumer's rows was refused. It moves with that predicate, and S_rf_init after it (all
    of S_rf, the points the predicate skips included)."""
    sch = Schedule(from_source(SOFTMAX))
    steps = [
        lambda: sch.split(sch.get_loops(sch.get_block("S"))[1], factors=[None, 16]),
        lambda: sch.rfactor(sch.get_loops(sch.get_block("S"))[2], 0),
        *(lambda b=b: sch.compute_at(sch.get_block(b), _first_loop(sch, "O"))
          for b in ("S", "S_rf", "S_rf_init")),
    ]
    for step in steps:
        step()
        assert structural_equal(from_source(sch.mod.script()), sch.mod)
    assert "T.where(ax1 + ax2 * 16 < m)" in sch.mod.script()
    lib = pyir.build(sch.mod)
    rng = np.random.default_rng(0)
    for n, m in ((2, 0), (1, 1), (3, 15), (2, 16), (3, 17), (2, 1000), (0, 5)):
        a, o = rng.random((n, m), dtype="float32"), np.full((n, m), -1, "float32")
        lib["f"](a, o)
        np.testing.assert_allclose(o, np.exp(a) / np.exp(a).sum(1, keepdims=True), rtol=1e-5)


SPREAD_WRITES = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((11,), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(WHERE)
            B[vi + vj] = A[vi] * T.float32(2)
'''


def test_parallel_over_iterations_a_predicate_keeps_apart():
    """Under T.where(j < 1) iteration i writes B[i] alone: its region was relaxed over all
    of j (B[i:i + 4]), shared with the next iterations, and parallel was refused. Where
    j < 2 lets iterations share elements, it still is."""
    sch = Schedule(from_source(SPREAD_WRITES.replace("WHERE", "j < 1")))
    sch.parallel(_first_loop(sch, "B"))
    a, b = np.arange(8, dtype="float32"), np.full(11, -1, "float32")
    pyir.build(sch.mod, opt_level="none")["f"](a, b)
    np.testing.assert_array_equal(b, np.r_[2 * a, [-1] * 3])
    _refused(SPREAD_WRITES.replace("WHERE", "j < 2"),
             lambda s: s.parallel(_first_loop(s, "B")),
             r"parallel: loop i \(around block 'B'\): block \"B\" writes parts of B that "
             "iterations of loop i share")


def _split_fused_row(sch):
    """static_mm's j and r fused (j * 48 + r) and split by 5."""
    _, j, r = sch.get_loops(sch.get_block("C"))
    return sch.split(sch.fuse(j, r), [None, 5])


def test_reorder_of_a_split_fused_spatial_and_reduction_loop_is_refused():
    """The two parts of static_mm's fused j * 48 + r swapped: a row's first points ran at
    r = 2, 7, ... before r = 0, where the init reset C[i, j]: most of C was wrong.
    Decomposed first, the reduction reorders freely."""
    sch = fresh("static_mm")
    f0, f1 = _split_fused_row(sch)
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"reorder: loops j_r_fused_1, j_r_fused_0: loop "
                       r"j_r_fused_1 drives both spatial and reduction iterators of block "
                       r"\"C\", whose init runs where its reduction iterators are 0: in another "
                       r"order it would run after some of the updates \(decompose_reduction "
                       r"first\)"):
        sch.reorder(f1, f0)
    assert sch.mod is before
    sch = fresh("static_mm")
    sch.decompose_reduction(sch.get_block("C"), sch.get_loops(sch.get_block("C"))[0])
    f0, f1 = _split_fused_row(sch)
    sch.reorder(f1, f0)
    check_results(sch, "static_mm")


def test_reverse_compute_at_of_a_reduction_into_a_vectorized_loop_is_refused():
    """matmul's r factored out and C_rf's r vectorized: C, moved under it, reduced over the
    vectorized iterations, each lane updating C[i, j] at the same time (all of C wrong once
    C_rf's init was decomposed at j). An elementwise consumer still moves under a vectorized
    loop."""
    sch = fresh("matmul")
    rf = sch.rfactor(sch.get_loops(sch.get_block("C"))[2], 0)
    r = sch.get_loops(rf)[2]
    sch.vectorize(r)
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"^reverse_compute_at: loop r \(around blocks "
                       r"'C_rf', 'C'\): after this step, block \"C\" reduces into C over loop "
                       "r, so its iterations depend on each other; the iterations of loop r "
                       "cannot run at the same time, and it is vectorized"):
        sch.reverse_compute_at(sch.get_block("C"), r)
    assert sch.mod is before
    sch = fresh("chain")
    j = sch.get_loops(sch.get_block("B"))[1]
    sch.vectorize(j)
    sch.reverse_compute_at(sch.get_block("C"), j)
    check_results(sch, "chain")


def _blockized_reduction(sch, name):
    """The block's reduction loop split by 4 and its inner part blockized: the outer block
    has no init, the inner one has."""
    *_, r = sch.get_loops(sch.get_block(name))
    r0, r1 = sch.split(r, [None, 4])
    sch.blockize(r1)
    return r0


def test_fuse_of_a_blockized_reduction_that_may_be_empty_is_refused():
    """rowsum_symbolic's i fused with the outer part of its reduction, blockized: the fused
    loop ran nothing for m = 0, so the inner block's init never did and S kept what it held
    (numpy's sum is 0). Only the blocks directly under the loops were checked for an init."""
    sch = Schedule(rowsum_symbolic)
    r0 = _blockized_reduction(sch, "S")
    i = sch.get_loops(sch.get_block("S_o"))[0]
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"fuse: loops i, k_0: the fused loop would drive "
                       r"both spatial and reduction iterators of block \"S_o\", where block "
                       r"\"S\"'s reduction may be empty"):
        sch.fuse(i, r0)
    assert sch.mod is before


def test_reorder_around_a_blockized_reduction_with_an_init_is_refused():
    """static_mm's j fused with the outer part of its blockized reduction, split by 5 and
    the parts swapped: the inner block's init ran after updates of the same element, as
    for the block itself (test above), but only an init of the block under the loops was
    looked for: wrong results."""
    sch = fresh("static_mm")
    r0 = _blockized_reduction(sch, "C")
    j = sch.get_loops(sch.get_block("C_o"))[1]
    f0, f1 = sch.split(sch.fuse(j, r0), [None, 5])
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"reorder: loops j_r_0_fused_1, j_r_0_fused_0: "
                       r"loop j_r_0_fused_1 drives both spatial and reduction iterators of "
                       r"block \"C_o\""):
        sch.reorder(f1, f0)
    assert sch.mod is before


EMPTY_LOOPS = '''
from pyir.script import tensor as T

@T.prim_func
def count(A: T.Buffer(("n", "m"), "float32"), S: T.Buffer((1,), "float32")):
    for i in range(1, n):
        for j in range(2, m):
            with T.block("C"):
                vi = T.axis.reduce(n, i)
                vj = T.axis.reduce(m, j)
                S[0] = S[0] + T.float32(1)
'''


def test_fusing_loops_that_may_both_be_empty_runs_none_of_them():
    """(n - 1) * (m - 2) is positive at n = 0, m = 0: the fused loop ran 2 iterations
    where the nest runs none. Extents that may be negative count as 0."""
    mod = from_source(EMPTY_LOOPS)
    sch = Schedule(mod)
    sch.fuse(*sch.get_loops(sch.get_block("C")))
    assert "range(T.max(m - 2, 0) * T.max(n - 1, 0))" in sch.mod.script()
    fused = pyir.build(sch.mod)["count"]
    for n, m, expected in ((4, 5, 9), (0, 0, 0), (0, 1, 0), (1, 7, 0)):
        s = np.zeros(1, "float32")
        fused(np.zeros((n, m), "float32"), s)
        assert s[0] == expected, (n, m)
