"""An audit of the error messages of pyir.schedule: each message no other test matched, made
by a user's step through the public API and checked word for word, with the schedule
left exactly as it was."""

import json
import re

import pytest

from pyir.ir import IRModule, max_
from pyir.schedule import (IndexMap, Schedule, ScheduleError, Trace, register_tensor_intrin)
from pyir.script import from_source
from pyir.script import tensor as T

import sched_kernels
from sched_helpers import check_results, fresh


def loops(sch, block):
    return sch.get_loops(sch.get_block(block))


def refused(sch, step, words):
    """``step()`` raises a ScheduleError containing ``words`` and leaves the IR as it was."""
    mod = sch.mod
    with pytest.raises(ScheduleError, match=re.escape(words)):
        step()
    assert sch.mod is mod


# ------------------------------------------------------------------ kernels
@T.prim_func
def two_writes(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    D = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
            D[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + D[vi]


@T.prim_func
def two_readers(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
                D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] + T.float32(3)


@T.prim_func
def two_producers(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B1"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B2"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def read_before_write(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
                      D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi]
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def guarded(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i < 6)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.where(i < 6)
            C[vi] = B[vi]


@T.prim_func
def branchy(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            if vi > 2:
                B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]


@T.prim_func
def allocating(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            X = T.alloc_buffer((1,), "float32")
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]


@T.prim_func
def in_place(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]


@T.prim_func
def reads_its_output(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + C[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)


@T.prim_func
def row_broadcast(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = A[vi, vj]
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi] + T.float32(1)


@T.prim_func
def row_of_columns(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = A[vi, vj]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def param_producer(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
                   C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def half_steps(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(8, i // 2)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)


@T.prim_func
def mixed_layout(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((2, 8), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi // 4, vi % 8] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi // 4, vi % 8]


@T.prim_func
def strided_read(A: T.Buffer((8, 8), "float32"), k: T.int64, C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj * k] + T.float32(1)


@T.prim_func
def strided_write(A: T.Buffer((8, 8), "float32"), k: T.int64, C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj * k] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def shifted_pair(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    D = T.alloc_buffer((9,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi + 1] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + D[vi]


@T.prim_func
def triangle(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i + 1):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                A[vi, vj] = T.float32(1)


@T.prim_func
def recurrence(A: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(7, 7):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi + 1, vj] = A[vi, vj + 1] + T.float32(1)


@T.prim_func
def interleaved(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(2, 8):
        with T.block("B"):
            vi = T.axis.spatial(16, j * 2 + i)
            B[vi] = A[vi]


@T.prim_func
def scattered(A: T.Buffer((8, 8), "float32"), k: T.int64, C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj * k] = A[vi, vj]


@T.prim_func
def rowdiff(A: T.Buffer((8, 16), "float32"), S: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] - A[vi, vk]


@T.prim_func
def overlapping_sum(A: T.Buffer((8, 64), "float32"), S: T.Buffer((8,), "float32")):
    for i, k0, k1 in T.grid(8, 4, 32):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(64, k0 * 16 + k1)
            T.where(k0 * 16 + k1 < 64)
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]


@T.prim_func
def dependent_sum(A: T.Buffer((8, 4), "float32"), S: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(T.min(i, 0) + 4):
            with T.block("S"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(4, k)
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]


@T.prim_func
def banded_sum(A: T.Buffer((8, 8), "float32"), S: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.where(i + k < 10)
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]


# ------------------------------------------------------------------ Schedule and handles
def test_a_schedule_of_something_else_than_a_module_is_refused():
    """Schedule(5) names what it works on."""
    with pytest.raises(ScheduleError, match="Schedule: int: a schedule works on an IRModule "
                       "or a PrimFunc"):
        Schedule(5)


@pytest.mark.parametrize("prim", ["fuse", "reorder"])
def test_fuse_and_reorder_of_no_loops_ask_for_one(prim):
    """fuse() and reorder() with no handle ask for one."""
    sch = fresh("chain")
    refused(sch, getattr(sch, prim), f"{prim}: no loops: pass at least one loop handle")


def _two_function_schedule():
    return Schedule(IRModule.from_dict({"chain": sched_kernels.chain,
                                        "matmul": sched_kernels.matmul}))


def test_loops_of_two_functions_are_refused():
    """Fusing a loop of one function with one of another names the mistake."""
    sch = _two_function_schedule()
    a = loops(sch, "B")[0]
    b = sch.get_loops(sch.get_block("C", func_name="matmul"))[0]
    refused(sch, lambda: sch.fuse(a, b), "fuse: loops: the loops belong to different functions")


def test_compute_at_a_loop_of_another_function_is_refused():
    """A block of one function cannot move under a loop of another."""
    sch = _two_function_schedule()
    b = sch.get_loops(sch.get_block("C", func_name="matmul"))[0]
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), b),
            'compute_at: block "B": loop i is in another function')


def test_a_block_name_where_a_block_handle_is_expected_is_refused():
    """get_loops("B") asks for a handle from get_block."""
    sch = fresh("chain")
    refused(sch, lambda: sch.get_loops("B"),
            "get_loops: 'B': expected a block handle (from get_block)")


def test_a_loop_name_where_a_loop_handle_is_expected_is_refused():
    """split("i", ...) asks for a handle from get_loops."""
    sch = fresh("chain")
    refused(sch, lambda: sch.split("i", factors=[None, 4]),
            "split: 'i': expected a loop handle (from get_loops, split, fuse, ...)")


def test_a_replay_refuses_a_list_where_the_trace_recorded_one_handle():
    """get_loops recorded as returning one handle: its list is refused on replay."""
    trace = Trace.from_json(json.dumps([
        {"kind": "get_block", "args": ["B"], "kwargs": {}, "outputs": ["b0"], "single": True},
        {"kind": "get_loops", "args": [{"rv": "b0"}], "kwargs": {}, "outputs": ["l1"],
         "single": True}]))
    with pytest.raises(ScheduleError, match=re.escape(
            "trace replay: step 2, sch.get_loops: returned a list of handles where the trace "
            "recorded one")):
        trace.apply_to(fresh("chain"))


# ------------------------------------------------------------------ loops
@pytest.mark.parametrize("factors", [[4], []])
def test_split_needs_at_least_two_factors(factors):
    """A split into fewer than two loops is refused."""
    sch = fresh("chain")
    i = loops(sch, "B")[0]
    refused(sch, lambda: sch.split(i, factors=factors),
            "split: loop i (around block 'B'): give at least two factors")


@pytest.mark.parametrize("prim", ["fuse", "reorder"])
def test_a_loop_listed_twice_is_refused(prim):
    """fuse(i, i) and reorder(i, i) say the loop is listed twice."""
    sch = fresh("chain")
    i = loops(sch, "B")[0]
    refused(sch, lambda: getattr(sch, prim)(i, i), f"{prim}: loops i, i: a loop is listed twice")


def test_fuse_refuses_a_parallel_loop():
    """Only serial loops are fused."""
    sch = fresh("chain")
    i, j = loops(sch, "B")
    sch.parallel(i)
    refused(sch, lambda: sch.fuse(i, j),
            "fuse: loops i, j: loop i is parallel; only serial loops can be fused")


def test_fuse_refuses_a_loop_whose_range_depends_on_the_other():
    """A triangular nest cannot be fused."""
    sch = Schedule(triangle)
    refused(sch, lambda: sch.fuse(*loops(sch, "B")),
            "fuse: loops i, j: the range of loop j depends on another loop being fused")


def test_reorder_refuses_a_loop_whose_range_depends_on_the_other():
    """A triangular nest cannot be reordered."""
    sch = Schedule(triangle)
    i, j = loops(sch, "B")
    refused(sch, lambda: sch.reorder(j, i),
            "reorder: loops j, i: the range of loop j depends on another loop of the nest")


def test_reorder_refuses_loops_that_are_not_perfectly_nested():
    """A block computed between the loops keeps them from being reordered."""
    sch = fresh("chain")
    i, j = loops(sch, "C")
    sch.compute_at(sch.get_block("B"), i)
    refused(sch, lambda: sch.reorder(j, i), "reorder: loops j, i: loop i does not contain "
            "loop j alone: the loops in between must be perfectly nested")


def test_reorder_refuses_an_order_that_changes_results():
    """A recurrence over both loops must run in its order."""
    sch = Schedule(recurrence)
    i, j = loops(sch, "B")
    refused(sch, lambda: sch.reorder(j, i), "block \"B\" accesses A at regions that differ "
            "between iterations, so the order of its iterations matters; reordering could change "
            "the results")


@pytest.mark.parametrize("key, value, shown", [(5, 1, "5: 1"), ("k", [1], "'k': [1]"),
                                               ("k", None, "'k': None")])
def test_annotate_refuses_a_key_or_value_it_cannot_keep(key, value, shown):
    """A key that is no str or a value that is no plain value is refused."""
    sch = fresh("chain")
    i = loops(sch, "B")[0]
    refused(sch, lambda: sch.annotate(i, key, value), "annotate: loop i: the key must be a "
            f"str and the value a plain int, float, str or bool, got {shown}")


def test_sample_perfect_tile_refuses_a_decision_that_is_no_tiling():
    """[3, 5] is no tiling of 64."""
    sch = fresh("static_mm")
    i = loops(sch, "C")[0]
    refused(sch, lambda: sch.sample_perfect_tile(i, n=2, decision=[3, 5]),
            "sample_perfect_tile: loop i: decision [3, 5] is not 2 factors of 64")


# ------------------------------------------------------------------ caches
def test_cache_read_refuses_a_bool_for_the_buffer():
    """True is neither a buffer name nor an index."""
    sch = fresh("chain")
    refused(sch, lambda: sch.cache_read(sch.get_block("C"), True, "local"),
            'cache_read: block "C": name the buffer by its name or its index, not True')


@pytest.mark.parametrize("prim, index, words", [
    ("cache_read", 5, "the block reads 1 buffer(s); index 5 is out of range"),
    ("cache_write", 1, "the block writes 1 buffer(s); index 1 is out of range")])
def test_cache_refuses_an_index_past_the_buffers(prim, index, words):
    """A buffer index past the block's reads or writes is refused."""
    sch = fresh("chain")
    refused(sch, lambda: getattr(sch, prim)(sch.get_block("C"), index, "local"),
            f'{prim}: block "C": {words}')


def test_cache_read_of_a_block_nested_in_another_is_refused():
    """After blockize, the inner block gets no cache."""
    sch = fresh("chain")
    sch.blockize(loops(sch, "B")[1])
    refused(sch, lambda: sch.cache_read(sch.get_block("B"), "A", "local"),
            'cache_read: block "B", buffer A: the block is nested in another block; caches are '
            "made for blocks at the function level")


def test_cache_write_with_another_writer_in_the_nest_is_refused():
    """The init decomposed into the nest also writes C."""
    sch = fresh("matmul")
    c = sch.get_block("C")
    sch.decompose_reduction(c, loops(sch, "C")[2])
    refused(sch, lambda: sch.cache_write(c, 0, "local"),
            'cache_write: block "C", buffer C: block "C_init" in the same loop nest also '
            "writes C")


def test_cache_read_of_a_buffer_the_block_writes_points_to_cache_write():
    """C is read and written by the matmul: cache_write is the step."""
    sch = fresh("matmul")
    refused(sch, lambda: sch.cache_read(sch.get_block("C"), "C", "local"),
            'cache_read: block "C", buffer C: the block also writes C; use cache_write')


def test_cache_write_with_another_reader_in_the_nest_is_refused():
    """C, computed in B's nest, reads B."""
    sch = fresh("chain")
    sch.compute_at(sch.get_block("B"), loops(sch, "C")[0])
    refused(sch, lambda: sch.cache_write(sch.get_block("B"), 0, "local"),
            'cache_write: block "B", buffer B: another block in the same loop nest reads B')


# ------------------------------------------------------------------ blockize
def test_blockize_refuses_bindings_that_are_not_affine():
    """A fused loop binds f // m and f % m."""
    sch = fresh("chain")
    fused = sch.fuse(*loops(sch, "B"))
    refused(sch, lambda: sch.blockize(fused), 'blockize: loop i_j_fused of block "B": the '
            "block's bindings are not affine in its loops")


def test_blockize_refuses_a_binding_that_does_not_split_at_the_loop():
    """j * 2 + i has no inner part over j alone."""
    sch = Schedule(interleaved)
    refused(sch, lambda: sch.blockize(loops(sch, "B")[1]), 'blockize: loop j of block "B": '
            "the binding of vi does not split into an outer part and an inner part over the "
            "loops below")


def test_blockize_refuses_a_region_it_cannot_bound():
    """C[vi, vj * k] over a scalar k has no bounds."""
    sch = Schedule(scattered)
    refused(sch, lambda: sch.blockize(loops(sch, "C")[0]), 'blockize: loop i of block "C": '
            "cannot bound the region of C over the loops below")


# ------------------------------------------------------------------ compute_at, reverse_compute_at
def _blockized_b(sch):
    sch.blockize(loops(sch, "B")[1])
    return sch.get_block("B"), loops(sch, "C")[0]


def _b_at_c(sch):
    i, j = loops(sch, "C")
    sch.compute_at(sch.get_block("B"), i)
    return sch.get_block("B"), j


def _c_at_b(sch):
    sch.reverse_compute_at(sch.get_block("C"), loops(sch, "B")[0])
    return sch.get_block("B"), loops(sch, "D")[0]


AT = [
    ("chain", _blockized_b, "compute_at", "the block and the loop are in different enclosing "
     "blocks"),
    ("chain", _b_at_c, "compute_at", "the block and the loop share an outer loop; move the "
     "block to a loop of another loop nest"),
    ("bias_relu", _c_at_b, "compute_at", "the loops around this block also hold block(s) 'C'; "
     "it must have loops of its own"),
    (half_steps, ("B", "C", 0), "compute_at", "the block's loops do not bind its iterators "
     "one-to-one over their domains (affine splits of loops starting at 0)"),
    (two_writes, ("B", "C", 0), "compute_at", "the block must write exactly one buffer"),
    (param_producer, ("B", "C", 0), "compute_at", "the block writes B, a parameter of "
     "param_producer; only blocks producing an intermediate buffer can be computed at a loop"),
    (row_of_columns, ("B", "C", 0), "compute_at", "a spatial iterator of the block does not "
     "index B"),
    (two_readers, ("B", "C", 0), "compute_at", "block(s) 'D' outside loop i also read B"),
    (strided_read, ("B", "C", 0), "compute_at", "cannot bound the region of B read in one "
     "iteration of loop i"),
    (mixed_layout, ("B", "C", 0), "compute_at", "iterator vi must index B once, alone or as "
     "vi // c with vi % c"),
    (strided_write, ("C", "B", 0), "reverse_compute_at", "cannot bound the region of B "
     "written in one iteration of loop i"),
    (two_producers, ("C", "B1", 0), "reverse_compute_at", "B is also written outside loop i"),
    (shifted_pair, ("C", "B", 0), "reverse_compute_at", "the buffers the block reads are "
     "produced over different regions per iteration"),
]


@pytest.mark.parametrize("kernel, how, prim, words", AT,
                         ids=[f"{c[2]}-{c[3][:44]}" for c in AT])
def test_compute_at_and_reverse_compute_at_refusals(kernel, how, prim, words):
    """Each illegal move names the block, the loop and the rule."""
    sch = fresh(kernel) if isinstance(kernel, str) else Schedule(kernel)
    if callable(how):
        block, loop = how(sch)
    else:
        name, at, k = how
        block, loop = sch.get_block(name), loops(sch, at)[k]
    refused(sch, lambda: getattr(sch, prim)(block, loop), f"{prim}: block \"{block.name}\" "
            f"at loop {loop.loop_var.name}: {words}")


# ------------------------------------------------------------------ compute_inline, reverse
def _nested_reader(sch):
    sch.compute_at(sch.get_block("B"), loops(sch, "C")[0])


INLINE = [
    (branchy, "B", "the block's body must be a single buffer store"),
    (two_writes, "B", "the block's body must be a single buffer store"),
    (allocating, "B", "the block allocates buffers of its own"),
    (guarded, "B", "the block has a predicate, so it does not compute every element it could "
     "be asked for"),
    (row_broadcast, "B", "every iterator must index B"),
    (in_place, "B", "the block reads B, the buffer it writes"),
    (two_producers, "B1", 'block "B2" also writes B'),
    (read_before_write, "B", 'block "D" reads B before this block writes it'),
    ("chain", "B", "a block in the same loop nest reads B"),
]


@pytest.mark.parametrize("kernel, block, words", INLINE, ids=[c[2][:40] for c in INLINE])
def test_compute_inline_refusals(kernel, block, words):
    """Each block that cannot be inlined says why."""
    sch = fresh(kernel) if isinstance(kernel, str) else Schedule(kernel)
    if isinstance(kernel, str):
        _nested_reader(sch)
    refused(sch, lambda: sch.compute_inline(sch.get_block(block)),
            f'compute_inline: block "{block}": {words}')


RINLINE = [
    (guarded, "the block has a predicate"),
    (two_writes, "the block reads more than one intermediate buffer produced before it; it "
     "must read exactly one"),
    (param_producer, "the block reads no intermediate buffer produced before it; it must read "
     "exactly one"),
    (row_broadcast, "every iterator must index B"),
    (two_producers, "B must have exactly one producer block"),
    (two_readers, "other blocks read B too"),
    (reads_its_output, "the producer's loops also read C"),
]


@pytest.mark.parametrize("kernel, words", RINLINE, ids=[c[1][:40] for c in RINLINE])
def test_reverse_compute_inline_refusals(kernel, words):
    """Each consumer that cannot be inlined into its producer says why."""
    sch = Schedule(kernel)
    refused(sch, lambda: sch.reverse_compute_inline(sch.get_block("C")),
            f'reverse_compute_inline: block "C": {words}')


# ------------------------------------------------------------------ transform_layout, index maps
@pytest.mark.parametrize("index_map", [5, None])
def test_transform_layout_refuses_what_is_no_index_map(index_map):
    """An int or None is neither text nor a lambda."""
    sch = fresh("chain")
    refused(sch, lambda: sch.transform_layout(sch.get_block("B"), "B", index_map),
            f'transform_layout: {index_map!r}: an index map is a text like "i, j -> j, i" or '
            "a lambda")


def test_an_index_map_outside_the_text_notation_cannot_be_written():
    """A max() output has no text form."""
    imap = IndexMap.parse(lambda i, j: (i, max_(i, j)))
    with pytest.raises(ScheduleError, match=re.escape(
            "index maps may use only + - * // % on the index variables and integers")):
        imap.text()


@pytest.mark.parametrize("buffer, words", [
    ("Z", "the block accesses no buffer named 'Z'"),
    (("write", 3), "the block has 1 write buffer(s); index 3 is out of range")])
def test_transform_layout_refuses_a_buffer_the_block_does_not_access(buffer, words):
    """A name or an index the block has no buffer for is refused."""
    sch = fresh("chain")
    refused(sch, lambda: sch.transform_layout(sch.get_block("B"), buffer, "i, j -> j, i"),
            f'transform_layout: block "B": {words}')


@pytest.mark.parametrize("index_map", ["i, j -> i * 1, j", "i, j -> j + 0, i"])
def test_transform_layout_reads_an_index_map_simplified(index_map):
    """``i * 1`` is ``i``: such maps were refused as not provably one-to-one."""
    sch = fresh("chain")
    sch.transform_layout(sch.get_block("B"), "B", index_map)
    check_results(sch, "chain")


def test_transform_layout_refuses_a_region_it_cannot_map():
    """The blockized region of B through i * j has no bounds."""
    sch = fresh("chain")
    sch.blockize(loops(sch, "B")[1])
    refused(sch, lambda: sch.transform_layout(sch.get_block("B"), "B", "i, j -> i, j, i * j"),
            'transform_layout: block "B", buffer B: cannot map a region of the buffer through '
            "the index map")


# ------------------------------------------------------------------ reductions
def _decomposed_rowsum():
    sch = fresh("rowsum")
    b = sch.get_block("S")
    sch.decompose_reduction(b, loops(sch, "S")[1])
    return sch, loops(sch, "S")[1]


def _rca_mm_relu(level):
    def make():
        sch = fresh("mm_relu")
        at = loops(sch, "Y")
        sch.reverse_compute_at(sch.get_block("D"), at[level])
        return sch, loops(sch, "Y")[0 if level == 0 else 2]
    return make


def _kernel_loop(kernel, k):
    def make():
        sch = Schedule(kernel)
        return sch, loops(sch, "S")[k]
    return make


RFACTOR = [
    (_decomposed_rowsum, 'loop k of block "S": the block must be one reduction update with an '
     "init (C[...] = C[...] + value)"),
    (_kernel_loop(rowdiff, 1), 'loop k of block "S": the update must combine the old value '
     "with +, *, max or min, like C[vi] = C[vi] + A[vi, vk]"),
    (_rca_mm_relu(0), "loop i: the loop must hold exactly one block"),
    (_kernel_loop(overlapping_sum, 2), 'loop k1 of block "S": the block\'s loops do not bind '
     "its iterators one-to-one over their domains"),
    (_kernel_loop(dependent_sum, 1), 'loop k of block "S": a reduction loop\'s extent depends '
     "on another loop"),
    (_rca_mm_relu(1), 'loop r of block "Y": another block in the same loop nest accesses Y'),
]


@pytest.mark.parametrize("make, words", RFACTOR, ids=[c[1][:50] for c in RFACTOR])
def test_rfactor_refusals(make, words):
    """Each reduction rfactor cannot factor says why."""
    sch, loop = make()
    refused(sch, lambda: sch.rfactor(loop, 0), f"rfactor: {words}")


def test_decompose_reduction_refuses_a_predicate_over_both_kinds_of_loop():
    """T.where(i + k < 10) cannot guard an init placed above i."""
    sch = Schedule(banded_sum)
    refused(sch, lambda: sch.decompose_reduction(sch.get_block("S"), loops(sch, "S")[0]),
            'decompose_reduction: block "S" at loop i: the block\'s predicate mixes reduction '
            "and spatial loops")


# ------------------------------------------------------------------ tensorize
ADD4_IR = """
define void @audit_add4_alpha(ptr %c, ptr %a, i64 %alpha) {
  ret void
}
"""


@T.prim_func
def add4_desc(C: T.Buffer((4,), "float32"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("update"):
            vi = T.axis.spatial(4, i)
            C[vi] = C[vi] + A[vi]


@T.prim_func
def inc4_desc(C: T.Buffer((4,), "float32"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("update"):
            vi = T.axis.spatial(4, i)
            C[vi] = C[vi] + T.float32(1)


@T.prim_func
def double4_desc(C: T.Buffer((4,), "float32"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("update"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi] + A[vi]


@T.prim_func
def rows_desc(C: T.Buffer((2, 4), "float32"), A: T.Buffer((2, "ld"), "float32"),
              B: T.Buffer((2, "ld"), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func
def two_block_desc(C: T.Buffer((4,), "float32"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("u1"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi]
    for i in range(4):
        with T.block("u2"):
            vi = T.axis.spatial(4, i)
            A[vi] = C[vi]


@T.prim_func
def symbolic_desc(C: T.Buffer(("n",), "float32"), A: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("u"):
            vi = T.axis.spatial(n, i)
            C[vi] = C[vi] + A[vi]


@T.prim_func
def init_desc(C: T.Buffer((1,), "float32"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("u"):
            vi = T.axis.reduce(4, i)
            with T.init():
                C[0] = T.float32(0)
            C[0] = C[0] + A[vi]


def over8(store, dtype="float32"):
    """``C[vi] = store`` for vi over 8 elements of buffers A, B and C of ``dtype``: the
    computations tensorize is asked to match."""
    return from_source(f'''
from pyir.script import tensor as T

@T.prim_func
def over8(A: T.Buffer((8,), "{dtype}"), B: T.Buffer((8,), "{dtype}"),
          C: T.Buffer((8,), "{dtype}")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = {store}
''')


add8 = over8("C[vi] + A[vi]")
sum8 = over8("A[vi] + B[vi]")
self_add8 = over8("C[vi] + C[vi]")
const_add8 = over8("C[vi] + T.float32(1)")
inc2_add8 = over8("C[vi] + T.float32(2)")
add8_f64 = over8("C[vi] + A[vi]", "float64")


@T.prim_func
def branchy_add8(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
                 C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            if vi < 6:
                C[vi] = C[vi] + A[vi]


@T.prim_func
def offset_add(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(2, 6):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = C[vi] + A[vi]


@T.prim_func
def rows_add(A: T.Buffer((2, 8), "float32"), B: T.Buffer((2, 16), "float32"),
             C: T.Buffer((2, 4), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@pytest.fixture(scope="module")
def intrins():
    """Tensor intrinsics of this audit (their kernels do nothing: no test runs one)."""
    from pyir.ffi import extern

    @extern("audit.add4_alpha.impl", llvm_ir=ADD4_IR, override=True, writes="C")
    def kernel(C: T.Buffer((4,), "float32"), A: T.Buffer((4,), "float32"), alpha: T.int64): ...

    register_tensor_intrin("audit.add4", add4_desc, "audit.add4.impl", override=True)
    register_tensor_intrin("audit.add4_alpha", add4_desc, "audit.add4_alpha.impl",
                           override=True)
    register_tensor_intrin("audit.inc4", inc4_desc, "audit.inc4.impl", override=True)
    register_tensor_intrin("audit.double4", double4_desc, "audit.double4.impl", override=True)
    register_tensor_intrin("audit.rows", rows_desc, "audit.rows.impl", override=True)


@pytest.mark.parametrize("desc, words", [
    (5, "the description must be a prim function, not int"),
    (two_block_desc, "the description must hold exactly one block"),
    (symbolic_desc, "loop i of the description needs constant bounds"),
    (init_desc, "the description's block must be a single store without init")])
def test_register_tensor_intrin_refuses_a_description_it_cannot_use(desc, words):
    """Each description a kernel cannot stand for is refused when registered."""
    with pytest.raises(ScheduleError, match=re.escape(
            f"register_tensor_intrin: audit.bad: {words}")):
        register_tensor_intrin("audit.bad", desc, "audit.bad.impl", override=True)


def test_register_tensor_intrin_refuses_a_name_taken(intrins):
    """A second registration needs override=True."""
    with pytest.raises(ScheduleError, match=re.escape(
            "register_tensor_intrin: audit.add4: a tensor intrinsic of this name is "
            "registered; pass override=True")):
        register_tensor_intrin("audit.add4", add4_desc, "audit.add4.impl")


def _tile_of_4(kernel):
    sch = Schedule(kernel)
    _, inner = sch.split(loops(sch, "C")[0], factors=[None, 4])
    return sch, inner


TENSORIZE = [
    (branchy_add8, "audit.add4", "the block's body is not a single store"),
    (const_add8, "audit.add4", "the computation differs: the description has an access of "
     "A, the block has FloatImm"),
    (add8, "audit.inc4", "the computation differs: the description has FloatImm where the "
     "block has BufferLoad A"),
    (add8_f64, "audit.add4", "the computation differs: C is float32 in the description but "
     "C is float64"),
    (sum8, "audit.double4", "description buffer A maps to both A and B"),
    (self_add8, "audit.add4", "two description buffers map to one buffer"),
]


@pytest.mark.parametrize("kernel, intrin, words", TENSORIZE, ids=[c[2][:40] for c in TENSORIZE])
def test_tensorize_refuses_a_computation_that_does_not_match(intrins, kernel, intrin, words):
    """Each mismatch with the description says what differs."""
    sch, inner = _tile_of_4(kernel)
    refused(sch, lambda: sch.tensorize(inner, intrin),
            f'tensorize: loop i_1 (block "C") against "{intrin}": {words}')


def test_tensorize_refuses_a_loop_over_two_blocks(intrins):
    """B computed in C's loop j: the loop holds two blocks."""
    sch = fresh("chain")
    sch.compute_at(sch.get_block("B"), loops(sch, "C")[1])
    j = loops(sch, "C")[1]
    refused(sch, lambda: sch.tensorize(j, "audit.add4"),
            "tensorize: loop j: the loop must hold exactly one block")


def test_tensorize_refuses_a_loop_that_does_not_start_at_0(intrins):
    """range(2, 6) has the extent but not the start."""
    sch = Schedule(offset_add)
    refused(sch, lambda: sch.tensorize(loops(sch, "C")[0], "audit.add4"),
            'tensorize: loop i (block "C") against "audit.add4": loop i must start at 0')


def test_tensorize_refuses_a_block_with_an_init(intrins):
    """A reduction with its init is decomposed first."""
    sch = fresh("rowsum")
    _, k1 = sch.split(loops(sch, "S")[1], factors=[None, 4])
    refused(sch, lambda: sch.tensorize(k1, "audit.add4"),
            'tensorize: loop k_1 (block "S") against "audit.add4": the block has an init (the '
            "description has none); use decompose_reduction first")


def test_tensorize_refuses_a_stride_with_two_values(intrins):
    """A and B share the stride ld in the description but not in the block."""
    sch = Schedule(rows_add)
    refused(sch, lambda: sch.tensorize(loops(sch, "C")[0], "audit.rows"),
            'tensorize: loop i (block "C") against "audit.rows": stride ld would be both 8 '
            "and 16")


@T.prim_func
def rows_backward(A: T.Buffer((2, 8), "float32"), B: T.Buffer((2, 8), "float32"),
                  C: T.Buffer((2, 4), "float32")):
    for i, j in T.grid(2, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[1 - vi, vj] + B[vi, vj]


@T.prim_func
def rows_backward_symbolic(A: T.Buffer(("n", "m"), "float32"),
                           B: T.Buffer(("n", "m"), "float32"), C: T.Buffer(("n", 4), "float32")):
    for i, j in T.grid(n, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[n - 1 - vi, vj] + B[vi, vj]


@pytest.mark.parametrize("kernel, loop, stride", [
    (rows_backward, "i", "-8"), (rows_backward_symbolic, "i_1", "m * -1")])
def test_tensorize_refuses_rows_that_run_backwards(intrins, kernel, loop, stride):
    """A's rows run backwards (A[n - 1 - vi, vj]): its row stride, which the kernel takes as
    ld, an extent of its buffer, is negative. tensorize accepted it and the build refused
    the call it made (an extent is at least 0)."""
    sch = Schedule(kernel)
    if kernel is rows_backward_symbolic:
        sch.split(loops(sch, "C")[0], factors=[None, 2])
    refused(sch, lambda: sch.tensorize(loops(sch, "C")[-2], "audit.rows"),
            f'tensorize: loop {loop} (block "C") against "audit.rows": A moves by {stride} '
            f"elements per step of loop {loop}: a negative stride of A in dimension 0, which "
            "the intrinsic's buffer A cannot take as its row stride ld (an extent of the "
            "kernel's buffer, at least 0)")


def test_tensorize_refuses_an_implementation_that_is_no_kernel(intrins):
    """audit.add4.impl is declared nowhere."""
    sch, inner = _tile_of_4(add8)
    refused(sch, lambda: sch.tensorize(inner, "audit.add4"),
            "tensorize: intrinsic \"audit.add4\": its implementation 'audit.add4.impl' is not a "
            "kernel declared with pyir.ffi.extern")


def test_tensorize_refuses_a_kernel_argument_the_description_cannot_give(intrins):
    """The kernel's alpha is neither a buffer nor a stride."""
    sch, inner = _tile_of_4(add8)
    refused(sch, lambda: sch.tensorize(inner, "audit.add4_alpha"),
            'tensorize: intrinsic "audit.add4_alpha": kernel argument alpha is neither a buffer '
            "nor a stride of the description")



def test_tensorize_names_the_constants_that_differ(intrins):
    """A constant that differs is shown by value (it read "constant FloatImm where the block
    has FloatImm")."""
    sch, inner = _tile_of_4(inc2_add8)
    refused(sch, lambda: sch.tensorize(inner, "audit.inc4"),
            'tensorize: loop i_1 (block "C") against "audit.inc4": the computation differs: '
            "the description has the constant T.float32(1.0) where the block has "
            "T.float32(2.0)")


@pytest.mark.parametrize("impl", [None, 5, add4_desc])
def test_register_tensor_intrin_refuses_an_implementation_that_is_no_name(impl):
    """The kernel is named by a string: anything else was accepted, and tensorize failed
    later in get_global_func, naming neither the intrinsic nor tensorize."""
    with pytest.raises(ScheduleError, match=re.escape(
            "register_tensor_intrin: audit.no_name: the implementation is named by the name of "
            "a kernel declared with pyir.ffi.extern (a non-empty string), not "
            f"{type(impl).__name__}")):
        register_tensor_intrin("audit.no_name", add4_desc, impl, override=True)


def test_tensorize_given_the_intrinsic_object_asks_for_its_name(intrins):
    """The object register_tensor_intrin returns is not its name: the message said no
    intrinsic of that name was registered, listing that very name."""
    intrin = register_tensor_intrin("audit.add4", add4_desc, "audit.add4.impl", override=True)
    sch, inner = _tile_of_4(add8)
    refused(sch, lambda: sch.tensorize(inner, intrin),
            "tensorize: intrinsic \"audit.add4\": a tensor intrinsic is named by its name, the "
            "string 'audit.add4', not by the object register_tensor_intrin returned")


def test_get_block_in_a_module_without_blocks_says_so():
    """The list of blocks ended in nothing ("...; blocks: ")."""
    sch = Schedule(IRModule.from_dict({}))
    with pytest.raises(ScheduleError, match=r"^get_block: block \"B\": there is no such block in "
                                            r"the module; the module has no blocks$"):
        sch.get_block("B")


@T.prim_func
def reads_twice_written_two_ways(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + B[vi * 1]


def test_reverse_compute_inline_reads_one_index_written_two_ways():
    """B[vi] and B[vi * 1] are one index: it was refused as "more than one index"."""
    import numpy as np

    import pyir
    sch = Schedule(reads_twice_written_two_ways)
    sch.reverse_compute_inline(sch.get_block("C"))
    a, c = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    pyir.build(sch.mod)["reads_twice_written_two_ways"](a, c)
    np.testing.assert_array_equal(c, 4 * a)


def _scattered(index, count=8):
    """B[index] written for vi in [0, count), C[vi] = B[vi] + 1 read over all 16 of B."""
    return from_source(f'''
from pyir.script import tensor as T

@T.prim_func
def scattered(A: T.Buffer(({count},), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range({count}):
        with T.block("B"):
            vi = T.axis.spatial({count}, i)
            B[{index}] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)
''')


@pytest.mark.parametrize("index, count, shown", [
    ("vi * vi % 16", 16, "[i * i % 16, i * i % 16 + 1)"),
    ("vi * 3", 6, "[i * 3, i * 3 + 1)"),
])
def test_reverse_compute_at_refuses_a_producer_that_leaves_gaps(index, count, shown):
    """The produced points span the consumer's domain but skip some of it: i * i % 16 hits 4
    of 16 points, i * 3 every third. Moved there, the consumer ran at those points only and
    left the rest of C unwritten."""
    sch = Schedule(_scattered(index, count))
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), loops(sch, "B")[0]),
            'reverse_compute_at: block "C" at loop i: the loop produces parts of what iterator '
            f"vi reads, [0, 16), that may leave gaps ({shown} per iteration): moved there, the "
            "block would skip them")


def test_reverse_compute_at_counts_the_points_of_a_start_not_linear():
    """i * 3 % 16 reaches every point of 16 (3 and 16 have no common factor): counted, it is
    accepted, and the moved consumer computes all of C."""
    import numpy as np

    import pyir
    sch = Schedule(_scattered("vi * 3 % 16", 16))
    sch.reverse_compute_at(sch.get_block("C"), loops(sch, "B")[0])
    a, c = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    pyir.build(sch.mod)["scattered"](a, c)
    expected = np.empty(16, np.float32)
    expected[(np.arange(16) * 3) % 16] = a
    np.testing.assert_array_equal(c, expected + 1)


def test_reverse_compute_at_refuses_a_start_read_from_memory():
    """B[P[vi]]: a start read from memory is neither linear nor countable (counting its
    points had evaluated it, and failed as "cannot evaluate BufferLoad at the function
    entry"); the producer's region is refused before that as unbounded."""
    sch = Schedule(from_source('''
from pyir.script import tensor as T

@T.prim_func
def gather(A: T.Buffer((16,), "float32"), P: T.Buffer((16,), "int64"),
           C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[P[vi]] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)
'''))
    with pytest.raises(ScheduleError) as info:
        sch.reverse_compute_at(sch.get_block("C"), loops(sch, "B")[0])
    assert str(info.value).startswith('reverse_compute_at: block "C" at loop i: ')
    assert "cannot evaluate" not in str(info.value)
