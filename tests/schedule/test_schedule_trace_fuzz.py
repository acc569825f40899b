"""Random walks through a schedule's state: steps whose arguments are handles made by earlier
steps (split results, cache blocks, rfactor and init blocks, blockize blocks, sampled tile
factors), handles of the wrong kind, of another schedule, of a fork or of an undone step,
undo (several in a row, then different steps), and side trips on forks. After every action
the schedule is what a model of it says:

- a step that raises ScheduleError names its primitive and leaves the module, the trace
  and the random generator exactly as before; any other exception is a failure;
- a handle the schedule did not make, or made by an undone step, is refused as such;
- undo gives back the very module and trace of before the step;
- steps on a fork leave the original alone, and the other way round;

and at the end the printed trace, exec'd as a user would paste it, and its JSON form replay
on a fresh schedule to a structurally equal module, which also prints and parses back;
replayed on a schedule that took a step of its own, the trace works or changes nothing.

The default profile runs 100 walks (deterministically); PYIR_FULL_TESTS=1 selects the full
profile of 1,000."""

import pytest
from hypothesis import strategies as st

from pyir.ir import BlockRealize, IRModule, assert_structural_equal, verify
from pyir.schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, Trace
from pyir.schedule.tree import iter_paths
from pyir.script import from_source

import sched_kernels
from property_profiles import profiles

KERNELS = ["matmul", "chain", "rowsum", "conv1d", "bias_relu", "mm_relu", "static_mm", "pair"]
STEPS = ["split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate",
         "compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
         "cache_read", "cache_write", "decompose_reduction", "rfactor", "transform_layout",
         "blockize", "sample_perfect_tile", "get_block", "get_child_blocks", "get_loops"]
MAPS = ["i, j -> j, i", "i, j -> j // 8, i, j % 8", "i -> i // 4, i % 4",
        lambda i, j: (i // 2, j, i % 2)]
QUERIES = ("get_block", "get_loops", "get_child_blocks", "sample_perfect_tile")
ODD_VALUES = [0, -1, 2 ** 62, True, False, 1.5, -0.0, 1e300, 5e-324, "", "a'b\"c\n\\",
              "\u00e9\U0001f600", "\udcff", "T.grid(n)"]


class Walk:
    """A schedule and what it must look like: for each step that changed the IR, the module,
    trace text and live handles of before it."""

    def __init__(self, sch, kernel, alive=(), undo=(), undone=False):
        self.sch, self.kernel = sch, kernel
        self.alive = dict(alive)      # id(handle) -> handle, for the handles sch may use
        self.undo_stack = list(undo)  # (mod, trace text, alive) before each IR step
        self.undone = undone          # whether a step was undone (the trace skips its names)

    def fork(self):
        return Walk(self.sch.fork(), self.kernel, self.alive, self.undo_stack, self.undone)

    def state(self):
        return self.sch.mod, str(self.sch.trace), self.sch.trace.to_json(), \
            self.sch._rng.getstate()


def module(kernel):
    """A kernel of the corpus, or "pair": two functions that both have a block "C"."""
    if kernel == "pair":
        return IRModule.from_dict({"chain": sched_kernels.chain,
                                   "matmul": sched_kernels.matmul})
    return sched_kernels.KERNELS[kernel]


def all_blocks(sch):
    """A handle to every block of every function of ``sch``, with its loops."""
    handles = []
    for fname, func in sch.mod.functions:
        for path in iter_paths(func.body):
            if isinstance(path[-1], BlockRealize):
                block = sch.get_block(path[-1].block.name, func_name=fname)
                handles += [block] + sch.get_loops(block)
    return handles


def pick_handle(data, walk, others, kind):
    """A handle of ``kind`` that ``walk`` made and still holds, most of the time; now and
    then one of another kind, of another schedule or of an undone step."""
    mine = [h for h in walk.alive.values() if isinstance(h, kind)]
    source = data.draw(st.sampled_from(["recent"] * 4 + ["mine"] * 3 + ["any", "foreign"]),
                       label="source")
    if source == "recent" and mine:
        mine = mine[-3:]
    if source == "foreign" and others:
        return data.draw(st.sampled_from(others), label="foreign handle")
    if source == "any" or not mine:
        pool = list(walk.alive.values()) + others
        return data.draw(st.sampled_from(pool), label="any handle") if pool else None
    return data.draw(st.sampled_from(mine), label="handle")


def make_step(data, walk, others, prim):
    """A call of step ``prim`` with random arguments."""
    sch, draw = walk.sch, data.draw
    loop = lambda: pick_handle(data, walk, others, LoopRV)    # noqa: E731
    block = lambda: pick_handle(data, walk, others, BlockRV)  # noqa: E731
    if prim == "split":
        lp = loop()
        exprs = [h for h in walk.alive.values() if isinstance(h, ExprRV)]
        if exprs and draw(st.booleans(), label="sampled factors"):
            factors = draw(st.lists(st.sampled_from(exprs + [None]), min_size=1, max_size=3))
        else:
            factors = draw(st.lists(st.sampled_from([None, 1, 2, 4, 8, 16]), min_size=2,
                                    max_size=3), label="factors")
        return lambda: sch.split(lp, factors=factors)
    if prim == "get_block":
        names = [(fname, p[-1].block.name) for fname, func in sch.mod.functions
                 for p in iter_paths(func.body) if isinstance(p[-1], BlockRealize)]
        fname, name = draw(st.sampled_from(names + [("chain", "nope")]), label="block name")
        if draw(st.booleans(), label="without func_name"):
            fname = None
        return lambda: sch.get_block(name, func_name=fname)
    if prim in ("fuse", "reorder"):
        loops = draw(st.lists(st.builds(loop), min_size=1, max_size=3), label="loops")
        return lambda: getattr(sch, prim)(*loops)
    if prim in ("parallel", "vectorize", "unroll", "blockize", "get_child_blocks"):
        lp = loop() if prim != "get_child_blocks" or draw(st.booleans()) else block()
        return lambda: getattr(sch, prim)(lp)
    if prim == "annotate":
        target = loop() if draw(st.booleans(), label="on a loop") else block()
        key = draw(st.sampled_from(["hint", "k'\"\n", "pragma_unroll"]), label="key")
        value = draw(st.sampled_from(ODD_VALUES), label="value")
        return lambda: sch.annotate(target, key, value)
    if prim in ("compute_at", "reverse_compute_at", "decompose_reduction"):
        blk, lp = block(), loop()
        return lambda: getattr(sch, prim)(blk, lp)
    if prim in ("compute_inline", "reverse_compute_inline", "get_loops"):
        blk = block()
        return lambda: getattr(sch, prim)(blk)
    if prim in ("cache_read", "cache_write"):
        blk = block()
        index = draw(st.sampled_from([0, 1, 2, "A", "B", "C"]), label="buffer")
        scope = draw(st.sampled_from(["local", "global"]), label="scope")
        return lambda: getattr(sch, prim)(blk, index, scope)
    if prim == "rfactor":
        lp = loop()
        return lambda: sch.rfactor(lp, draw(st.integers(0, 2), label="factor axis"))
    if prim == "transform_layout":
        blk = block()
        buffer = draw(st.sampled_from([("read", 0), ("write", 0), ("read", 1), "B", "C"]),
                      label="buffer")
        imap = draw(st.sampled_from(MAPS), label="index map")
        return lambda: sch.transform_layout(blk, buffer, imap)
    lp = loop()
    n = draw(st.integers(1, 3), label="tiles")
    cap = draw(st.sampled_from([None, 4, 16]), label="max innermost factor")
    return lambda: sch.sample_perfect_tile(lp, n=n, max_innermost_factor=cap)


def outputs(result):
    """The handles a step returned, as a list."""
    if result is None:
        return []
    return list(result) if isinstance(result, list) else [result]


def do_step(data, walk, others):
    """A random step; if it fails, it names itself, what it was given and why, and changed
    nothing."""
    prim = data.draw(st.sampled_from(STEPS), label="step")
    step = make_step(data, walk, others, prim)
    before, length = walk.state(), len(walk.sch.trace)
    alive = dict(walk.alive)
    try:
        result = step()
    except ScheduleError as e:
        assert walk.state() == before, f"a failing step changed the schedule: {e}"
        assert e.primitive == prim and e.subject and e.rule, e
        return
    assert len(walk.sch.trace) == length + 1
    if walk.sch.trace[-1].kind not in QUERIES:
        walk.undo_stack.append((before[0], before[1], alive))
    else:
        assert walk.sch.mod is before[0]
    for h in outputs(result):
        walk.alive[id(h)] = h


def foreign_refused(data, walk, others):
    """A handle ``walk`` does not hold is refused as another schedule's or as stale."""
    stray = [h for h in others if id(h) not in walk.alive and not isinstance(h, ExprRV)]
    if not stray:
        return
    h = data.draw(st.sampled_from(stray), label="stray handle")
    before = walk.state()
    with pytest.raises(ScheduleError) as info:
        if isinstance(h, LoopRV):
            walk.sch.parallel(h)
        else:
            walk.sch.get_loops(h)
    assert ("another schedule" in str(info.value) or "stale" in str(info.value)), info.value
    assert walk.state() == before


def undo(walk):
    """Undo, which gives back the module and trace of before the last step that changed
    the IR."""
    if not walk.undo_stack:
        with pytest.raises(ScheduleError, match="undo: schedule: there is no step to undo"):
            walk.sch.undo()
        return
    mod, text, alive = walk.undo_stack.pop()
    walk.sch.undo()
    assert walk.sch.mod is mod
    assert str(walk.sch.trace) == text
    walk.alive, walk.undone = alive, True


def check_replays(walk):
    """The module verifies and prints back; the trace text, exec'd, and its JSON replay."""
    sch, kernel = walk.sch, walk.kernel
    verify(sch.mod)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    scope = {}
    exec(str(sch.trace), scope)
    pasted = Schedule(module(kernel))
    scope["apply"](pasted)
    assert_structural_equal(pasted.mod, sch.mod)
    if not walk.undone:   # the failed steps left no mark: the replay names handles alike
        assert str(pasted.trace) == str(sch.trace)
    loaded = Trace.from_json(sch.trace.to_json()).apply_to(Schedule(module(kernel)))
    assert_structural_equal(loaded.mod, sch.mod)


def check_replay_elsewhere(walk, other):
    """The trace replayed on ``other``, a schedule that went its own way, either works or
    leaves ``other`` as it was."""
    before = other.state()
    try:
        walk.sch.trace.apply_to(other.sch)
    except ScheduleError as e:
        assert other.state() == before, f"a failing replay changed the schedule: {e}"


def act(data, walk, others):
    """One step, a few undos in a row, or a handle ``walk`` must refuse."""
    action = data.draw(st.sampled_from(["step"] * 6 + ["undo", "stray"]), label="action")
    if action == "step":
        do_step(data, walk, others)
    elif action == "undo":
        for _ in range(data.draw(st.integers(1, 3), label="undos")):
            undo(walk)
    else:
        foreign_refused(data, walk, others)


def side_trip(data, walk, others):
    """Actions on a fork, then on the original: neither sees the other's. Return the one to
    go on with."""
    side = walk.fork()
    before = walk.state()
    for _ in range(data.draw(st.integers(1, 3), label="fork actions")):
        act(data, side, others)
    assert walk.state() == before
    after = side.state()
    made_on_side = [h for k, h in side.alive.items() if k not in walk.alive]
    for _ in range(data.draw(st.integers(0, 3), label="original actions")):
        act(data, walk, others + made_on_side)
    assert side.state() == after
    made_on_walk = [h for k, h in walk.alive.items() if k not in side.alive]
    if data.draw(st.booleans(), label="go on with the fork"):
        others += made_on_walk
        return side
    others += made_on_side
    return walk


def run_walk(data):
    kernel = data.draw(st.sampled_from(KERNELS), label="kernel")
    sch = Schedule(module(kernel), seed=data.draw(st.integers(0, 3)))
    walk = Walk(sch, kernel)
    others = all_blocks(Schedule(module(kernel)))   # handles of other schedules and forks
    walk.alive = {id(h): h for h in all_blocks(sch)}
    for _ in range(data.draw(st.integers(1, 8), label="rounds")):
        if data.draw(st.integers(0, 5), label="fork") == 0:
            walk = side_trip(data, walk, others)
        else:
            act(data, walk, others)
    check_replays(walk)
    other = Walk(Schedule(module(kernel)), kernel)
    other.alive = {id(h): h for h in all_blocks(other.sch)}
    act(data, other, [])
    check_replay_elsewhere(walk, other)


test_random_walks, test_random_walks_full = profiles(run_walk, 100, 1000)
