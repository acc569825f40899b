"""Handles, the trace (text, replay, JSON), undo, fork, diff and notebook display."""

import copy

import pytest

from pyir.ir import IRModule, assert_structural_equal, structural_equal
from pyir.schedule import BlockRV, LoopRV, Schedule, ScheduleError, Trace
from pyir.schedule.tree import find_block, find_loop
from pyir.script import from_source

import sched_kernels
from sched_helpers import check_results, check_roundtrip, fresh


def design_steps(sch):
    blk = sch.get_block("C", func_name="matmul")
    i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, factors=[None, 32])
    j0, j1 = sch.split(j, factors=[None, 64])
    sch.reorder(i0, j0, k, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    return blk


def test_trace_text_replays():
    sch = fresh("matmul")
    design_steps(sch)
    text = str(sch.trace)
    assert text.splitlines()[:3] == [
        "def apply(sch):",
        '    b0 = sch.get_block("C", func_name="matmul")',
        "    l1, l2, l3 = sch.get_loops(b0)"]
    assert "    l4, l5 = sch.split(l1, factors=[None, 32])" in text
    assert "    sch.reorder(l4, l6, l3, l5, l7)" in text
    namespace = {}
    exec(text, namespace)
    other = fresh("matmul")
    namespace["apply"](other)
    assert_structural_equal(other.mod, sch.mod)
    check_roundtrip(sch, "matmul")
    check_results(sch, "matmul", sizes=(1, 31, 67))


def test_a_trace_that_fails_to_replay_leaves_the_schedule_as_it_was():
    """The steps before the failing one stayed applied: here the split of B's loop, and
    the handles the replay had named."""
    sch = fresh("chain")
    sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 4])
    sch.get_loops(sch.get_block("C"))
    other = fresh("chain")
    c = other.get_block("C")
    other.fuse(*other.get_loops(c))
    mod, text = other.mod, str(other.trace)
    with pytest.raises(ScheduleError, match="trace replay: step 5, sch.get_loops: returned 1 "
                       r"handle\(s\) where the trace recorded 2"):
        sch.trace.apply_to(other)
    assert other.mod is mod and str(other.trace) == text
    other.parallel(other.get_loops(c)[0])
    assert str(other.trace).splitlines()[-2:] == ["    l4, = sch.get_loops(b0)",
                                                  "    sch.parallel(l4)"]


def test_trace_json_round_trip():
    sch = fresh("bias_relu")
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j // 16, i, j % 16))
    loop = sch.get_loops(sch.get_block("D"))[1]
    sch.split(loop, factors=sch.sample_perfect_tile(loop, n=2, max_innermost_factor=8))
    loaded = Trace.from_json(sch.trace.to_json())
    assert str(loaded) == str(sch.trace)
    assert "i, j -> j // 16, i, j % 16" in str(loaded)
    assert "decision=" in str(loaded)
    assert_structural_equal(loaded.apply_to(fresh("bias_relu")).mod, sch.mod)


def test_steps_pause_the_garbage_collector(monkeypatch):
    """A primitive runs with the collector off; it is on again after the step, also after
    a step that failed."""
    import gc
    from pyir.schedule import loops
    seen = []
    real = loops.split

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(loops, "split", spy)
    sch = fresh("matmul")
    i = sch.get_loops(sch.get_block("C", func_name="matmul"))[0]
    _, i1 = sch.split(i, factors=[None, 32])
    with pytest.raises(ScheduleError, match="multiply to 15"):
        sch.split(i1, factors=[3, 5])
    assert seen == [False, False] and gc.isenabled()


def test_prim_func_is_wrapped_and_marked():
    sch = Schedule(sched_kernels.chain)
    assert isinstance(sch.mod, IRModule) and sch.mod.names() == ["chain"]
    assert sch.mod["chain"].attr("scheduled") is None
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    assert sch.mod["chain"].attr("scheduled") is True


def test_handles_survive_later_steps():
    sch = fresh("chain")
    b, c = sch.get_block("B"), sch.get_block("C")
    i, j = sch.get_loops(c)
    sch.split(j, factors=[None, 4])
    sch.compute_at(b, i)
    sch.parallel(i)
    assert [lp.loop_var.name for lp in sch.get_loops(b)] == ["i", "ax0", "ax1"]
    assert isinstance(b, BlockRV) and isinstance(i, LoopRV)
    assert [h.name for h in sch.get_child_blocks(i)] == ["B", "C"]
    check_roundtrip(sch, "chain")
    check_results(sch, "chain")


def test_get_answers_with_the_ir_a_handle_points_at_now():
    """``sch.get`` (TVM's query): a loop's For, a block's Block, in the current state; not
    a step of the trace. A stale handle or something else is refused by name."""
    sch = fresh("chain")
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    steps = len(sch.trace)
    assert sch.get(b).name == "B" and sch.get(i).loop_var is i.loop_var
    assert sch.get(j).extent.script() == "m"
    assert len(sch.trace) == steps
    j0, _ = sch.split(j, factors=[None, 4])
    assert sch.get(j0).extent.script() == "(m + 3) // 4"
    with pytest.raises(ScheduleError, match=r"get: loop j: this handle is stale: step 3, "
                       r"`l3, l4 = sch.split"):
        sch.get(j)
    with pytest.raises(ScheduleError, match="get: 3: expected a block or loop handle"):
        sch.get(3)


def test_undo_restores_state_and_trace():
    sch = fresh("chain")
    start = sch.mod
    i, j = sch.get_loops(sch.get_block("B"))
    after_query = len(sch.trace)
    sch.fuse(i, j)
    sch.undo()
    assert sch.mod is start and len(sch.trace) == after_query
    sch.split(i, factors=[None, 2])
    assert len(sch.trace) == after_query + 1
    with pytest.raises(ScheduleError, match="no step to undo"):
        fresh("chain").undo()


def test_a_trace_taken_stays_as_it_was():
    """sch.trace was the schedule's own list of steps: a trace kept before trying a step
    gained that step, and lost steps on undo, so it replayed to another module."""
    sch = fresh("chain")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[None, 4])
    kept, text, mod = sch.trace, str(sch.trace), sch.mod
    sch.parallel(i)
    assert str(kept) == text
    sch.undo()
    sch.undo()
    assert str(kept) == text
    assert_structural_equal(kept.apply_to(fresh("chain")).mod, mod)


def test_a_stale_handle_names_the_step_that_removed_it_as_the_trace_numbers_it():
    """The step was numbered among the steps that changed the IR ("step 2" here), not as
    the line of print(sch.trace) it is."""
    sch = fresh("chain")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.annotate(i, "k", 1)
    sch.get_block("C")
    sch.fuse(i, j)
    assert str(sch.trace).splitlines()[5] == "    l4 = sch.fuse(l1, l2)"
    with pytest.raises(ScheduleError, match=r"unroll: loop j: this handle is stale: step 5, "
                       r"`l4 = sch.fuse\(l1, l2\)`, removed it"):
        sch.unroll(j)


def test_lookups_answer_for_the_body_asked_about():
    """find_block and find_loop remember their answers per body: asked again of an earlier
    body (as after undo), they give that body's paths, not the latest step's."""
    sch = fresh("chain")
    i, j = sch.get_loops(sch.get_block("B"))
    before = sch.mod["chain"].body
    assert find_loop(before, j.loop_var)[-1].loop_var is j.loop_var
    sch.split(j, factors=[None, 4])
    after = sch.mod["chain"].body
    assert find_loop(after, j.loop_var) is None
    assert find_loop(before, j.loop_var)[0] is before
    assert find_block(after, "B")[0] is after and find_block(before, "B")[0] is before
    sch.undo()
    assert [lp.loop_var for lp in sch.get_loops(sch.get_block("B"))] == [i.loop_var, j.loop_var]


def test_fork_is_independent():
    sch = fresh("matmul")
    i = sch.get_loops(sch.get_block("C"))[0]
    side = sch.fork()
    side.split(i, factors=[None, 8])
    assert not structural_equal(side.mod, sch.mod)
    sch.parallel(i)
    assert "parallel" not in str(side.trace) and "split" not in str(sch.trace)
    assert_structural_equal(side.trace.apply_to(fresh("matmul")).mod, side.mod)


def test_diff_show_and_html(capsys):
    sch = fresh("chain")
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    diff = sch.diff()
    changed = [line[0] + line[1:].strip() for line in diff.splitlines()]
    assert "-for i, j in T.grid(n, m):" in changed
    assert "+for i in T.parallel(n):" in changed
    assert "<pre" in diff._repr_html_()
    diff.show()
    sch.show()
    assert "T.parallel" in capsys.readouterr().out
    assert "parallel" in sch._repr_html_() and "<pre" in sch.trace._repr_html_()


def test_sampling_is_seeded():
    def tiles(seed):
        sch = fresh("static_mm", seed=seed)
        return [sch.sample_perfect_tile(lp, n=3) for lp in sch.get_loops(sch.get_block("C"))]

    assert tiles(3) == tiles(3)
    for factors in tiles(5):
        assert len(factors) == 3
    assert {str(t) for t in (tiles(s) for s in range(8))} != {str(tiles(0))}


def test_get_block_errors():
    sch = fresh("chain")
    with pytest.raises(ScheduleError, match="no such block.*blocks: B, C"):
        sch.get_block("X")
    with pytest.raises(ScheduleError, match="no prim function of that name; it has chain$"):
        sch.get_block("B", func_name="nope")


def test_module_with_two_functions_needs_func_name():
    mod = IRModule.from_dict({"chain": sched_kernels.chain, "matmul": sched_kernels.matmul})
    sch = Schedule(mod)
    with pytest.raises(ScheduleError, match="pass func_name"):
        sch.get_block("C")
    sch.parallel(sch.get_loops(sch.get_block("C", func_name="matmul"))[0])
    assert sch.mod["matmul"].attr("scheduled") and not sch.mod["chain"].attr("scheduled")
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_a_copied_schedule_is_a_fork(how):
    """copy.copy shared the trace: a step on the copy was recorded in the original's trace,
    whose module did not have it. copy.deepcopy copied the IR away from the handles: using
    one on the copy was a ValueError from max()."""
    sch = fresh("chain")
    i, j = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, factors=[None, 4])
    text = str(sch.trace)
    other = how(sch)
    other.parallel(j)
    assert str(sch.trace) == text
    assert "sch.parallel(l2)" in str(other.trace)
    check_roundtrip(sch, "chain")
    check_roundtrip(other, "chain")
    sch.fuse(i0, i1)
    with pytest.raises(ScheduleError, match="vectorize: loop i_1: this handle is stale: step 4, "
                       "`l5 = sch.fuse"):
        how(sch).vectorize(i1)


def test_a_pickled_schedule_goes_on_where_it_was():
    """Handles' names are kept by id, which unpickled handles do not share: undo on an
    unpickled schedule was a KeyError. It now steps, undoes and replays as the original."""
    import pickle
    sch = fresh("chain")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4])
    sch.parallel(j)
    again = pickle.loads(pickle.dumps(sch))
    assert str(again.trace) == str(sch.trace)
    again.undo()
    sch.undo()
    assert str(again.trace) == str(sch.trace)
    assert_structural_equal(again.mod, sch.mod)
    i0, _ = again.get_loops(again.get_block("B"))[:2]
    again.unroll(i0)
    check_roundtrip(again, "chain")
