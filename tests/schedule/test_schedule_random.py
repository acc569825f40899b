"""Random sequences of 1-8 primitives with random arguments on the kernel corpus: each step
either raises ScheduleError and leaves the state unchanged, or the final module prints,
parses, replays and computes the same results as the unscheduled kernel.

The default profile runs 60 sequences (deterministically); PYIR_FULL_TESTS=1 selects the
slow full profile of 1,000 sequences."""

from hypothesis import strategies as st

from pyir.ir import BlockRealize
from pyir.schedule import ScheduleError
from pyir.schedule.tree import iter_paths

import sched_kernels
from property_profiles import profiles
from sched_helpers import check_results, check_roundtrip, fresh

PRIMITIVES = ["split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate",
              "compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
              "cache_read", "cache_write", "decompose_reduction", "rfactor",
              "transform_layout", "blockize"]
MAPS = {1: ["i -> i // 4, i % 4", "i -> i"],
        2: ["i, j -> j, i", "i, j -> j // 8, i, j % 8", "i, j -> i // 2, j, i % 2",
            "i, j -> i + j"]}


def block_names(sch, kernel):
    return [p[-1].block.name for p in iter_paths(sch.mod[kernel].body)
            if isinstance(p[-1], BlockRealize)]


def random_step(sch, kernel, data):
    draw = data.draw
    prim = draw(st.sampled_from(PRIMITIVES), label="primitive")
    names = block_names(sch, kernel)
    block = sch.get_block(draw(st.sampled_from(names), label="block"))
    loops = sch.get_loops(block)
    other = sch.get_loops(sch.get_block(draw(st.sampled_from(names), label="other block")))
    loop = draw(st.sampled_from(loops), label="loop") if loops else None
    if prim in ("split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate",
                "rfactor", "blockize", "decompose_reduction") and loop is None:
        return None
    if prim in ("compute_at", "reverse_compute_at") and not other:
        return None
    if prim == "split":
        factors = draw(st.lists(st.sampled_from([None, 1, 2, 3, 4, 8, 16]), min_size=2,
                                max_size=3), label="factors")
        return lambda: sch.split(loop, factors=factors)
    if prim == "fuse":
        start = draw(st.integers(0, len(loops) - 1))
        count = draw(st.integers(1, len(loops) - start))
        return lambda: sch.fuse(*loops[start:start + count])
    if prim == "reorder":
        chosen = draw(st.permutations(loops))[:draw(st.integers(1, len(loops)))]
        return lambda: sch.reorder(*chosen)
    if prim in ("parallel", "vectorize", "unroll"):
        return lambda: getattr(sch, prim)(loop)
    if prim == "annotate":
        return lambda: sch.annotate(loop, "hint", draw(st.integers(0, 4)))
    if prim in ("compute_at", "reverse_compute_at"):
        target = draw(st.sampled_from(other), label="target loop")
        return lambda: getattr(sch, prim)(block, target)
    if prim in ("compute_inline", "reverse_compute_inline"):
        return lambda: getattr(sch, prim)(block)
    if prim in ("cache_read", "cache_write"):
        index = draw(st.integers(0, 2), label="buffer index")
        scope = draw(st.sampled_from(["local", "global"]), label="scope")
        return lambda: getattr(sch, prim)(block, index, scope)
    if prim == "decompose_reduction":
        return lambda: sch.decompose_reduction(block, loop)
    if prim == "rfactor":
        return lambda: sch.rfactor(loop, draw(st.integers(0, 2), label="factor axis"))
    if prim == "transform_layout":
        which = (draw(st.sampled_from(["read", "write"])), draw(st.integers(0, 2)))
        ndim = draw(st.sampled_from([1, 2]), label="rank")
        imap = draw(st.sampled_from(MAPS[ndim]), label="index map")
        return lambda: sch.transform_layout(block, which, imap)
    return lambda: sch.blockize(loop)


def run_sequence(data):
    kernel = data.draw(st.sampled_from(sorted(sched_kernels.KERNELS)), label="kernel")
    sch = fresh(kernel, seed=0)
    applied = 0
    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        step = random_step(sch, kernel, data)
        if step is None:
            continue
        mod, length = sch.mod, len(sch.trace)
        try:
            step()
            applied += 1
        except ScheduleError:
            assert sch.mod is mod and len(sch.trace) == length
    if applied:
        check_roundtrip(sch, kernel)
        check_results(sch, kernel, sizes=(1, 5))


test_random_schedules, test_random_schedules_full = profiles(run_sequence, 60, 1000)
