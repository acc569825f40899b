"""Illegal steps: each raises ScheduleError naming the primitive, the block or loop and the
rule, and leaves the schedule exactly as it was."""

import pytest

from pyir.ir import Var, structural_equal
from pyir.schedule import ScheduleError

from sched_helpers import fresh


def loops(s, block):
    return s.get_loops(s.get_block(block))


def split_two_none(s):
    s.split(loops(s, "C")[0], factors=[None, None])


def split_too_small(s):
    s.split(loops(s, "C")[0], factors=[4, 4])


def split_past_int64(s):
    s.split(loops(s, "C")[0], factors=[None, 2 ** 63 - 1])


def decompose_below_a_blockized_reduction(s):
    _, k = loops(s, "S")
    _, k1 = s.split(k, factors=[None, 32])
    s.blockize(k1)
    s.decompose_reduction(s.get_block("S"), k1)


def rinline_into_blockized(s):
    s.blockize(loops(s, "Y")[1])
    s.reverse_compute_inline(s.get_block("D"))


def split_parallel(s):
    i = loops(s, "C")[0]
    s.parallel(i)
    s.split(i, factors=[None, 4])


def fuse_not_nested(s):
    i, j, k = loops(s, "C")
    s.fuse(i, k)


def fuse_spatial_and_maybe_empty_reduction(s):
    """j and r of a matmul over a symbolic k: the fused loop (m * k iterations) runs no
    iteration when k is 0, and C kept what it held instead of zeros."""
    _, j, r = loops(s, "C")
    s.fuse(j, r)


def reorder_two_nests(s):
    s.reorder(loops(s, "C")[1], loops(s, "B")[0])


def parallel_reduction(s):
    s.parallel(loops(s, "C")[2])


def vectorize_reduction(s):
    s.vectorize(loops(s, "S")[1])


def compute_at_after(s):
    s.compute_at(s.get_block("C"), loops(s, "B")[0])


def compute_at_no_reader(s):
    s.compute_at(s.get_block("B"), loops(s, "D")[0])


def compute_at_inside(s):
    s.compute_at(s.get_block("B"), loops(s, "B")[1])


def rca_before(s):
    s.reverse_compute_at(s.get_block("B"), loops(s, "C")[0])


def rca_reduction_loop(s):
    s.reverse_compute_at(s.get_block("D"), loops(s, "Y")[2])


def inline_reduction(s):
    s.compute_inline(s.get_block("Y"))


def inline_output(s):
    s.compute_inline(s.get_block("C"))


def rinline_reduction_producer(s):
    s.reverse_compute_inline(s.get_block("D"))


def cache_unknown_buffer(s):
    s.cache_read(s.get_block("C"), "Z", "local")


def cache_bad_scope(s):
    s.cache_read(s.get_block("C"), "A", "shared")


def decompose_no_init(s):
    b = s.get_block("B")
    s.decompose_reduction(b, s.get_loops(b)[0])


def decompose_not_around(s):
    s.decompose_reduction(s.get_block("Y"), loops(s, "D")[0])


def rfactor_spatial(s):
    s.rfactor(loops(s, "S")[0], 0)


def layout_param(s):
    s.transform_layout(s.get_block("C"), "A", "i, j -> j, i")


def layout_not_one_to_one(s):
    s.transform_layout(s.get_block("B"), "B", "i, j -> i + j")


def layout_bad_text(s):
    s.transform_layout(s.get_block("B"), "B", "i, j => j, i")


def layout_unbounded(s):
    s.transform_layout(s.get_block("B"), "B", "i, j -> i, j, j % 0")


def layout_arity(s):
    s.transform_layout(s.get_block("B"), "B", "i -> i")


def layout_extent_past_int64(s):
    s.transform_layout(s.get_block("B"), "B", "i, j -> i, j, 9223372036854775807")


def blockize_two_blocks(s):
    s.compute_at(s.get_block("B"), loops(s, "C")[0])
    s.blockize(loops(s, "C")[0])


def sample_symbolic(s):
    s.sample_perfect_tile(loops(s, "C")[0], n=2)


def stale_after_fuse(s):
    i, j = loops(s, "B")
    s.fuse(i, j)
    s.split(i, factors=[None, 2])


def stale_after_undo(s):
    i, j = loops(s, "B")
    i0, i1 = s.split(i, factors=[None, 2])
    s.undo()
    s.parallel(i0)


def cache_write_without_init(s):
    c = s.get_block("C")
    s.decompose_reduction(c, loops(s, "C")[0])
    s.cache_write(c, 0, "local")


def inline_blockized(s):
    s.blockize(loops(s, "B")[1])
    s.compute_inline(s.get_block("B"))


def stale_after_inline(s):
    b = s.get_block("B")
    s.compute_inline(b)
    s.get_loops(b)


def annotate_infinite(s):
    s.annotate(loops(s, "C")[0], "weight", float("inf"))


CASES = [
    ("mm_relu", rinline_into_blockized, ["reverse_compute_inline", "block \"D\"", "Y is "
                                         "produced by block \"Y_o\", which nests block(s) 'Y'"]),
    ("rowsum", decompose_below_a_blockized_reduction,
     ["decompose_reduction", "block \"S\" at loop k_1", "follows vk_o, from outside its "
      "enclosing block; the init would run again"]),
    ("matmul", split_past_int64, ["split", "loop i", "the factors multiply to "
                                  "9223372036854775807; they may multiply to at most 2**62"]),
    ("matmul", split_two_none, ["split", "loop i", "at most one factor"]),
    ("static_mm", split_too_small, ["split", "loop i", "not provably at least"]),
    ("matmul", split_parallel, ["split", "loop i", "is parallel"]),
    ("matmul", fuse_not_nested, ["fuse", "loops i, r", "not the whole body"]),
    ("matmul", fuse_spatial_and_maybe_empty_reduction,
     ["fuse", "loops j, r", "would drive both spatial and reduction iterators of block \"C\", "
      "whose reduction may be empty", "decompose_reduction first"]),
    ("chain", reorder_two_nests, ["reorder", "not nested"]),
    ("matmul", parallel_reduction, ["parallel", "loop r", "reduces into C over loop r"]),
    ("rowsum", vectorize_reduction, ["vectorize", "loop k", "reduces into S"]),
    ("chain", compute_at_after, ["compute_at", "block \"C\" at loop i", "runs after"]),
    ("bias_relu", compute_at_no_reader, ["compute_at", "no block under loop i reads B"]),
    ("chain", compute_at_inside, ["compute_at", "already inside"]),
    ("chain", rca_before, ["reverse_compute_at", "runs before this loop"]),
    ("mm_relu", rca_reduction_loop, ["reverse_compute_at", "reduces over it"]),
    ("mm_relu", inline_reduction, ["compute_inline", "block \"Y\"", "reduction"]),
    ("chain", inline_output, ["compute_inline", "block \"C\"", "parameter"]),
    ("bias_relu", inline_blockized, ["compute_inline", "block \"B\"", "nested in block \"B_o\""]),
    ("mm_relu", rinline_reduction_producer, ["reverse_compute_inline", "producer block \"Y\"",
                                             "reduction"]),
    ("matmul", cache_unknown_buffer, ["cache_read", "no buffer 'Z'"]),
    ("matmul", cache_write_without_init, ["cache_write", "block \"C\"", "reads C and has no init"]),
    ("matmul", cache_bad_scope, ["cache_read", "buffer A", "unknown storage scope 'shared'"]),
    ("chain", decompose_no_init, ["decompose_reduction", "block \"B\"", "no init"]),
    ("mm_relu", decompose_not_around, ["decompose_reduction", "not around the block"]),
    ("rowsum", rfactor_spatial, ["rfactor", "loop i", "reduction iterators only"]),
    ("matmul", layout_param, ["transform_layout", "parameter", "cache_read"]),
    ("chain", layout_not_one_to_one, ["transform_layout", "one-to-one"]),
    ("chain", layout_bad_text, ["transform_layout", "cannot read it"]),
    ("chain", layout_unbounded, ["transform_layout", "buffer B", "cannot bound output 'j % 0' of "
                                 "the index map 'i, j -> i, j, j % 0' below by 0 and above"]),
    ("chain", layout_arity, ["transform_layout", "buffer B", "the index map takes 1 index(es) "
                             "but B has 2 dimension(s)"]),
    ("chain", layout_extent_past_int64, ["transform_layout", "buffer B", "output "
                                         "'9223372036854775807' of the index map 'i, j -> i, j, "
                                         "9223372036854775807' reaches 9223372036854775807: the "
                                         "buffer's extent would not fit in int64"]),
    ("chain", blockize_two_blocks, ["blockize", "loop i", "exactly one block"]),
    ("matmul", sample_symbolic, ["sample_perfect_tile", "not a constant"]),
    ("chain", stale_after_fuse, ["split", "loop i", "stale", "l3 = sch.fuse(l1, l2)"]),
    ("chain", stale_after_undo, ["parallel", "stale", "undone"]),
    ("chain", stale_after_inline, ["get_loops", "block \"B\"", "stale", "compute_inline"]),
    ("matmul", annotate_infinite, ["annotate", "loop i", "'weight' is inf", "must be finite"]),
]


class _Recorder:
    """Forwards to a Schedule, remembering its state before each call."""

    def __init__(self, sch):
        self.sch, self.before = sch, None

    def __getattr__(self, name):
        attr = getattr(self.sch, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self.before = (self.sch.mod, len(self.sch.trace), str(self.sch.trace))
            return attr(*args, **kwargs)
        return call


@pytest.mark.parametrize("kernel,steps,words", CASES, ids=[c[1].__name__ for c in CASES])
def test_illegal_step(kernel, steps, words):
    rec = _Recorder(fresh(kernel))
    with pytest.raises(ScheduleError) as info:
        steps(rec)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in:\n{message}"
    mod, length, text = rec.before
    assert rec.sch.mod is mod and structural_equal(rec.sch.mod, mod)
    assert len(rec.sch.trace) == length and str(rec.sch.trace) == text


@pytest.mark.parametrize("text,why", [
    ("i, j => j, i", "unexpected '=' at column 6"),
    ("i, j -> j // 16,, i", "unexpected ',' at column 17"),
    ("i j -> j, i", "unexpected 'j' at column 3"),
    ("i, j -> ", "the text ends where more is expected"),
    ("i, j -> j, k", "k is not one of the index variables"),
    ("i, i -> i", "index variable i is listed twice"),
    ("i, j -> j, 9223372036854775808", "9223372036854775808 does not fit in int64"),
])
def test_index_map_text_errors_say_what_is_wrong_and_where(text, why):
    sch = fresh("chain")
    with pytest.raises(ScheduleError) as info:
        sch.transform_layout(sch.get_block("B"), "B", text)
    assert str(info.value) == (f"transform_layout: index map {text!r}: cannot read it: {why}; "
                               "write it like \"i, j -> j // 16, i, j % 16\"")
    # Nothing from inside lark is chained on: the traceback ends at the user's call.
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_error_shows_the_ir_concerned():
    sch = fresh("matmul")
    with pytest.raises(ScheduleError) as info:
        sch.parallel(sch.get_loops(sch.get_block("C"))[2])
    text = str(info.value)
    assert "for r in range(k):" in text and "with T.block(\"C\"):" in text
    assert len(text.splitlines()) <= 16


def test_error_is_a_pyir_error():
    import pyir
    assert issubclass(ScheduleError, pyir.Error)


def test_reverse_compute_inline_of_a_consumer_over_fewer_points_than_its_producer():
    """Inlined, C's store would run over B's n + 4 points and write C out of bounds."""
    from pyir.script import tensor as T
    from pyir.schedule import Schedule

    @T.prim_func
    def f(A: T.Buffer(("n",), "float32"), D: T.Buffer(("n",), "float32")):
        B = T.alloc_buffer((n + 4,), "float32")
        C = T.alloc_buffer((n,), "float32")
        for i in range(n + 4):
            with T.block("B"):
                vi = T.axis.spatial(n + 4, i)
                B[vi] = T.float32(2)
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = B[vi] + A[vi]
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = C[vi] * T.float32(3)

    rec = _Recorder(Schedule(f))
    with pytest.raises(ScheduleError, match=r'reverse_compute_inline: block "C": the producer '
                       r'block "B" writes B over \[0, n \+ 4\) in dimension 0, but the block '
                       r"reads it over \[0, n\)"):
        rec.reverse_compute_inline(rec.get_block("C"))
    assert rec.sch.mod is rec.before[0]


RCI_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            {where}B[{index}] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
'''


@pytest.mark.parametrize("where, index, words", [
    ("T.where(i < 6)\n            ", "vi", 'the producer block "B" has a predicate'),
    ("", "7 - vi", 'the producer block "B" does not store B at its iterators'),
])
def test_reverse_compute_inline_needs_a_producer_over_its_own_iterators(where, index, words):
    from pyir.schedule import Schedule
    from pyir.script import from_source
    rec = _Recorder(Schedule(from_source(RCI_SRC.format(where=where, index=index))))
    with pytest.raises(ScheduleError, match=words):
        rec.reverse_compute_inline(rec.get_block("C"))
    assert rec.sch.mod is rec.before[0]


PART_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer(("n",), "float32"), C: T.Buffer(("n",), "float32")):
    B = T.alloc_buffer((n,), "float32")
    for i in range({producer}):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range({consumer}):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[vi] + T.float32(1)
'''


@pytest.mark.parametrize("producer, consumer, whose", [
    ("n", "1, n", "block"), ("1, n", "n", 'producer block "B"'),
])
def test_reverse_compute_inline_of_blocks_whose_loops_run_part_of_their_domain(
        producer, consumer, whose):
    """Inlined, C's store ran over B's loop, range(n): C[0], which the function never
    writes, was overwritten."""
    from pyir.schedule import Schedule
    from pyir.script import from_source
    rec = _Recorder(Schedule(from_source(PART_SRC.format(producer=producer, consumer=consumer))))
    with pytest.raises(ScheduleError, match=f'reverse_compute_inline: block "C": the {whose}\'s '
                       "loops do not run its iterators over their whole domains"):
        rec.reverse_compute_inline(rec.get_block("C"))
    assert rec.sch.mod is rec.before[0]


OVERWRITE_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def last_row(A: T.Buffer(("n", 64), "float32"), B: T.Buffer((64,), "float32")):
    for i, j in T.grid(n, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj] = A[vi, vj]
'''

HALO_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def pairs(A: T.Buffer(("n", 64), "float32"), C: T.Buffer(("n", 64), "float32")):
    B = T.alloc_buffer((n, 64), "float32")
    for i, j in T.grid(n, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.if_then_else(vi >= 1, B[vi - 1, vj], T.float32(0)) + B[vi, vj]
'''


@pytest.mark.parametrize("prim", ["parallel", "vectorize"])
def test_iterations_that_write_the_same_elements_cannot_run_at_the_same_time(prim):
    """Every i writes all of B (serially, the last row wins): run at once, they race."""
    from pyir.schedule import Schedule
    from pyir.script import from_source
    rec = _Recorder(Schedule(from_source(OVERWRITE_SRC)))
    i, _ = rec.get_loops(rec.get_block("B"))
    with pytest.raises(ScheduleError, match=f'{prim}: loop i .*block "B" writes parts of B that '
                       "iterations of loop i share, so they would write them at the same time"):
        getattr(rec, prim)(i)
    assert rec.sch.mod is rec.before[0]


def test_a_producer_computed_with_a_halo_cannot_run_in_parallel():
    """Iteration i computes rows i - 1 and i of B: neighbours write row i both."""
    from pyir.schedule import Schedule
    from pyir.script import from_source
    sch = Schedule(from_source(HALO_SRC))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    rec = _Recorder(sch)
    with pytest.raises(ScheduleError, match='block "B" writes parts of B that iterations of '
                       "loop i share"):
        rec.parallel(i)
    assert rec.sch.mod is rec.before[0]


_Z = Var("z")


@pytest.mark.parametrize("index_map, start, why", [
    (lambda i, *, j: (i, j), "transform_layout: index map '<lambda>'",
     "a callable index map takes the indices as plain parameters"),
    (max, "transform_layout: index map 'max'",
     "a callable index map takes the indices as plain parameters"),
    (lambda i, j: (j, abs(i)), "transform_layout: block \"B\": the index map must give index",
     "calling it on index variables failed: TypeError: bad operand type for abs(): 'Var'"),
    (lambda i, j: (i, j, True), "transform_layout: block \"B\": the index map must give index",
     "output 2 is True, not an index"),
    (lambda i, j: (j, i, _Z - _Z), "transform_layout: block \"B\": the index map must give index",
     "output 2 uses z, which is not one of the index variables"),
    ("i, j -> " + " + ".join(["i"] * 500) + ", j", "transform_layout: index map 'i, j -> i + ",
     "it is nested too deeply to read"),
])
def test_an_index_map_that_cannot_be_made_says_why(index_map, start, why):
    """Each escaped as Python's own TypeError or ValueError, an IRError naming neither the
    primitive nor the block, or a RecursionError from inside lark. A lambda using a variable
    of its own (z - z, bound as 0) was taken and traced as text the replay refused."""
    rec = _Recorder(fresh("chain"))
    with pytest.raises(ScheduleError) as info:
        rec.transform_layout(rec.get_block("B"), "B", index_map)
    assert str(info.value).startswith(start)
    assert why in str(info.value)
    assert info.value.__context__ is None or info.value.__suppress_context__
    mod, length, _ = rec.before
    assert rec.sch.mod is mod and len(rec.sch.trace) == length


def test_blocks_nested_in_the_block_moved_are_not_others_in_its_loops():
    """After blockize, compute_at of B_o said its loops "also hold block(s) 'B'" -- the block
    nested in B_o itself; the real reason is the region B_o writes."""
    sch = fresh("chain")
    b_o = sch.blockize(loops(sch, "B")[1])
    with pytest.raises(ScheduleError) as info:
        sch.compute_at(b_o, loops(sch, "C")[0])
    assert "also hold block" not in str(info.value)
    assert "the written buffer B must be indexed by distinct block iterators" in str(info.value)


def test_reverse_compute_at_refuses_a_column_the_loop_does_not_produce():
    """The consumer reads M[vi, 1]; the block under the row loop writes only M[vi, 0]."""
    from pyir.schedule import Schedule
    from pyir.script import from_source

    from test_schedule_primitives import ROW_STATISTIC

    sch = Schedule(from_source(ROW_STATISTIC.replace("X[vi, vj] - M[vi, 0]",
                                                     "X[vi, vj] - M[vi, 1]")))
    before = sch.mod
    with pytest.raises(ScheduleError) as info:
        sch.reverse_compute_at(sch.get_block("Y"), sch.get_loops(sch.get_block("M"))[0])
    assert str(info.value).startswith('reverse_compute_at: block "Y" at loop i: the block reads '
                                      "[1, 2) of M in dimension 1, and loop i produces [0, 1) of "
                                      "it per iteration")
    assert sch.mod is before
