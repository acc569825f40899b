"""`Schedule`: the current IRModule, the steps taken so far (trace and undo history), and
the primitives as methods.

Each method resolves its handles against the current state, calls a pure function
``IR -> IR`` from one of the primitive modules (which checks legality before building
anything), and only then commits: it pushes the previous module on the undo history,
records the step in the trace and marks the function ``scheduled``. A failing step raises
`ScheduleError` before anything is committed, so the state is exactly as before.
"""

import difflib
import random
from dataclasses import dataclass

from pyir.errors import TOO_DEEP, kind_of
from pyir.gcpause import gc_paused
from pyir.ir import IRModule, PrimFunc, Var
from pyir.transform.block_checks import block_fault, loose_statement
from pyir.transform.dependence import realizes_under

from . import (blockize as _blockize, cache as _cache, compute_location as _loc,
               layout as _layout, loops as _loops, reduction as _red, sampling as _sampling)
from .errors import ScheduleError
from .handles import HANDLE_TYPES, BlockRV, ExprRV, LoopRV
from .trace import Instruction, Trace, highlighted_html
from .tree import find_block, find_loop, iter_paths, loops_of

#: Callables ``check(func, primitive)`` run on the function every step produces; the test
#: suite registers `pyir.ir.verify` here (each primitive checks legality itself, so builds
#: outside the tests skip the extra walk).
AFTER_EACH_STEP = []


#: The primitives that keep every statement where and when it runs (or, parallel and
#: vectorize, check the statements outside blocks: `pyir.transform.concurrency`); the others
#: refuse a function with a store or kernel call outside blocks.
_ORDER_KEEPING = frozenset({"split", "fuse", "unroll", "annotate", "parallel", "vectorize"})


@dataclass(frozen=True)
class _Snapshot:
    mod: IRModule
    trace_len: int
    rng_state: tuple


class Schedule:
    """An interactive schedule of the prim functions of a module (see DESIGN.md)."""

    def __init__(self, mod, seed=None):
        if isinstance(mod, PrimFunc):
            mod = IRModule.from_dict({mod.name: mod})
        if not isinstance(mod, IRModule):
            raise ScheduleError("Schedule", type(mod).__name__,
                                "a schedule works on an IRModule or a PrimFunc")
        self._mod = mod
        # Functions whose blocks no step has checked yet (the first step on each does:
        # `_step`).
        self._unchecked = {name for name, f in mod.functions if isinstance(f, PrimFunc)}
        self._loose = {}   # function name -> its first statement outside blocks, or None
        self._trace = Trace()
        self._history = []
        self._names = {}   # id(handle) -> its name in the trace; None once that step is undone
        self._kept = []    # every named handle, kept alive so that no other object takes its id
        if seed is not None and not (_loops.is_int(seed) and seed >= 0):
            # (random.Random takes -1 as 1: two seeds, one sequence of samples)
            raise ScheduleError("Schedule", repr(seed), "seed must be an int of at least 0, or "
                                "None")
        self._rng = random.Random(None if seed is None else int(seed))
        self._rng_state = None   # the generator's state, taken at the first step after a draw

    # ------------------------------------------------------------------ state
    @property
    def mod(self):
        """The current IRModule."""
        return self._mod

    @property
    def trace(self):
        """The steps taken so far, as a `Trace` of their own: later steps and undo leave it
        as it is."""
        return self._trace.copy()

    def undo(self):
        """Go back one step that changed the IR (and drop the steps recorded after it; the
        handles they made are stale from then on)."""
        if not self._history:
            raise ScheduleError("undo", "schedule", "there is no step to undo")
        snap = self._history.pop()
        self._mod = snap.mod
        dropped = {out for inst in self._trace.instructions[snap.trace_len:]
                   for out in inst.outputs}
        for handle in self._kept:
            if self._names[id(handle)] in dropped:
                self._names[id(handle)] = None
        del self._trace.instructions[snap.trace_len:]
        self._rng.setstate(snap.rng_state)
        self._rng_state = snap.rng_state

    def fork(self):
        """An independent copy of this schedule (state, trace, history, handles): the handles
        made so far work on both, those made later only on the schedule that made them."""
        other = Schedule.__new__(Schedule)
        other._mod = self._mod
        other._unchecked = set(self._unchecked)
        other._loose = dict(self._loose)
        other._trace = self._trace.copy()
        other._history = list(self._history)
        other._names = dict(self._names)
        other._kept = list(self._kept)
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other._rng_state = self._rng_state
        return other

    def _take_state(self, fork):
        """Make the state of ``fork`` (a fork of this schedule) this schedule's."""
        self.__dict__.update(fork.__dict__)

    def __copy__(self):
        """`copy.copy` and `copy.deepcopy` fork: a plain copy would share the trace with this
        schedule, and a deep one would copy the IR away from the handles made so far."""
        return self.fork()

    def __deepcopy__(self, memo):
        return self.fork()

    def __getstate__(self):
        """Pickled with its handles' names in the order of the handles: names are kept by
        the handles' ids, which unpickled handles do not have."""
        state = dict(self.__dict__)
        state["_names"] = [self._names[id(h)] for h in self._kept]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._names = {id(h): name for h, name in zip(self._kept, state["_names"])}

    def show(self):
        """Print the current IR, highlighted."""
        from pyir.script import show
        show(self._mod)

    def diff(self):
        """What the last IR-changing step did, as a unified diff of the printed IR."""
        before = self._history[-1].mod.script() if self._history else self._mod.script()
        lines = difflib.unified_diff(before.splitlines(), self._mod.script().splitlines(),
                                     "before", "after", lineterm="")
        return Diff("\n".join(lines) + "\n")

    def _repr_html_(self):
        return (highlighted_html(self._mod.script(), "python") + "<p>trace:</p>"
                + self._trace._repr_html_())

    # ------------------------------------------------------------------ queries
    def get_block(self, name, func_name=None):
        """The block called ``name`` (in prim function ``func_name``, needed only when
        several functions have such a block)."""
        if not isinstance(name, str):
            raise ScheduleError("get_block", repr(name), "a block is named by a string, "
                                f"not {kind_of(name)}")
        found = [fname for fname, f in self._prim_funcs(func_name, "get_block")
                 if find_block(f.body, name) is not None]
        if not found:
            where = f"prim function {func_name}" if func_name else "the module"
            names = ", ".join(self._block_names(func_name))
            raise ScheduleError("get_block", f"block \"{name}\"", f"there is no such block "
                                f"in {where}; " + (f"blocks: {names}" if names else
                                                   f"{where} has no blocks"))
        if len(found) > 1:
            raise ScheduleError("get_block", f"block \"{name}\"", "several prim functions "
                                f"have this block ({', '.join(found)}); pass func_name")
        rv = BlockRV(found[0], name)
        self._record("get_block", [name], {"func_name": found[0]}, [rv], single=True)
        return rv

    def get_loops(self, block):
        """The loops around ``block`` within its enclosing block, outermost first."""
        func, path = self._resolve_block(block, "get_loops")
        loops = [LoopRV(block.func_name, lp.loop_var) for lp in loops_of(path)]
        self._record("get_loops", [block], {}, loops)
        return loops

    def get_child_blocks(self, block_or_loop):
        """The blocks directly inside a block or loop (not those nested in them)."""
        _block_or_loop(block_or_loop, "get_child_blocks")
        if isinstance(block_or_loop, BlockRV):
            func, path = self._resolve_block(block_or_loop, "get_child_blocks")
        else:
            func, path = self._resolve_loop(block_or_loop, "get_child_blocks")
        node = path[-1]
        root = (node.block if hasattr(node, "block") else node).body
        children = [BlockRV(block_or_loop.func_name, p[-1].block.name)
                    for p in realizes_under(root)]
        self._record("get_child_blocks", [block_or_loop], {}, children)
        return children

    def get(self, block_or_loop):
        """The IR a handle points at in the current state: a loop's ``For``, a block's
        ``Block`` (a query, as in TVM: not a step of the trace)."""
        _block_or_loop(block_or_loop, "get")
        if isinstance(block_or_loop, BlockRV):
            return self._resolve_block(block_or_loop, "get")[1][-1].block
        return self._resolve_loop(block_or_loop, "get")[1][-1]

    # ------------------------------------------------------------------ loops
    def split(self, loop, factors):
        """Split ``loop`` into ``len(factors)`` nested loops (see `loops.split`)."""
        func, var = self._loop_var(loop, "split")
        return self._step("split", [loop], {"factors": factors}, func,
                          lambda f: _loops.split(f, var, factors))

    def fuse(self, *loops):
        """Fuse perfectly nested loops into one (see `loops.fuse`)."""
        func, vars_ = self._loop_vars(loops, "fuse")
        return self._step("fuse", list(loops), {}, func, lambda f: _loops.fuse(f, vars_),
                          single=True)

    def reorder(self, *loops):
        """Reorder loops of one nest (see `loops.reorder`)."""
        func, vars_ = self._loop_vars(loops, "reorder")
        self._step("reorder", list(loops), {}, func, lambda f: _loops.reorder(f, vars_))

    def parallel(self, loop):
        """Run ``loop`` on the thread pool (see `loops.set_kind`)."""
        self._kind(loop, "parallel")

    def vectorize(self, loop):
        """Make ``loop`` a vector loop (see `loops.set_kind`)."""
        self._kind(loop, "vectorize")

    def unroll(self, loop):
        """Unroll ``loop`` (see `loops.set_kind`)."""
        self._kind(loop, "unroll")

    def _kind(self, loop, kind):
        func, var = self._loop_var(loop, kind)
        self._step(kind, [loop], {}, func, lambda f: _loops.set_kind(f, var, kind))

    def annotate(self, block_or_loop, key, value):
        """Attach ``key: value`` (a plain value) to a block or loop."""
        _block_or_loop(block_or_loop, "annotate")
        value = _loops.plain_value(value)
        if isinstance(block_or_loop, BlockRV):
            func, path = self._resolve_block(block_or_loop, "annotate")
            target = ("block", block_or_loop.name)
        else:
            func, var = self._loop_var(block_or_loop, "annotate")
            target = ("loop", var)
        self._step("annotate", [block_or_loop, key, value], {}, func,
                   lambda f: _loops.annotate(f, target, key, value))

    # ------------------------------------------------------------------ compute location
    def compute_at(self, block, loop):
        """Move a producer block under a loop of its consumers (see
        `compute_location.compute_at`)."""
        func, name, var = self._block_and_loop(block, loop, "compute_at")
        self._step("compute_at", [block, loop], {}, func,
                   lambda f: _loc.compute_at(f, name, var))

    def reverse_compute_at(self, block, loop):
        """Move a consumer block under a loop of its producers."""
        func, name, var = self._block_and_loop(block, loop, "reverse_compute_at")
        self._step("reverse_compute_at", [block, loop], {}, func,
                   lambda f: _loc.reverse_compute_at(f, name, var))

    def compute_inline(self, block):
        """Inline an elementwise producer into its consumers."""
        func, name = self._block_name(block, "compute_inline")
        self._step("compute_inline", [block], {}, func, lambda f: _loc.compute_inline(f, name))

    def reverse_compute_inline(self, block):
        """Inline an elementwise consumer into its producer."""
        func, name = self._block_name(block, "reverse_compute_inline")
        self._step("reverse_compute_inline", [block], {}, func,
                   lambda f: _loc.reverse_compute_inline(f, name))

    # ------------------------------------------------------------------ caches
    def cache_read(self, block, read, scope):
        """Read buffer ``read`` (index into the block's reads, or the buffer's name) through
        a copy in ``scope``; return the copy block."""
        func, name = self._block_name(block, "cache_read")
        read = _plain_index(read)
        return self._step("cache_read", [block, read, scope], {}, func,
                          lambda f: _cache.cache_read(f, name, read, scope), single=True)

    def cache_write(self, block, write, scope):
        """Write buffer ``write`` through a copy in ``scope``; return the copy-back block."""
        func, name = self._block_name(block, "cache_write")
        write = _plain_index(write)
        return self._step("cache_write", [block, write, scope], {}, func,
                          lambda f: _cache.cache_write(f, name, write, scope), single=True)

    # ------------------------------------------------------------------ reductions
    def decompose_reduction(self, block, loop):
        """Split a reduction's init into its own block before ``loop``; return it."""
        func, name, var = self._block_and_loop(block, loop, "decompose_reduction")
        return self._step("decompose_reduction", [block, loop], {}, func,
                          lambda f: _red.decompose_reduction(f, name, var), single=True)

    def rfactor(self, loop, factor_axis):
        """Factor a reduction over ``loop`` into a partial-result block; return it."""
        func, var = self._loop_var(loop, "rfactor")
        factor_axis = _plain_index(factor_axis)
        return self._step("rfactor", [loop, factor_axis], {}, func,
                          lambda f: _red.rfactor(f, var, factor_axis), single=True)

    # ------------------------------------------------------------------ layout, blockize
    def transform_layout(self, block, buffer, index_map):
        """Store ``buffer`` (a name or ("read" | "write", index) of ``block``) in the layout
        ``index_map`` (text ``"i, j -> j, i"`` or a lambda)."""
        func, name = self._block_name(block, "transform_layout")
        imap, text = _layout.read_index_map(index_map, name)
        if isinstance(buffer, (tuple, list)) and len(buffer) == 2:
            buffer = (buffer[0], _plain_index(buffer[1]))
        buf = list(buffer) if isinstance(buffer, tuple) else buffer
        self._step("transform_layout", [block, buf, text], {}, func,
                   lambda f: _layout.transform_layout(f, name, buffer, imap))

    def blockize(self, loop):
        """Wrap the subtree of ``loop`` into an outer block; return it."""
        func, var = self._loop_var(loop, "blockize")
        return self._step("blockize", [loop], {}, func, lambda f: _blockize.blockize(f, var),
                          single=True)

    def tensorize(self, loop_or_block, intrin):
        """Replace the computation under a loop (or a block's innermost loops) by a call
        of the registered tensor intrinsic ``intrin`` after checking that it matches (see
        `pyir.schedule.tensorize`); return the block holding the call."""
        from . import tensorize as _tensorize
        _block_or_loop(loop_or_block, "tensorize")
        if isinstance(loop_or_block, BlockRV):
            func, path = self._resolve_block(loop_or_block, "tensorize")
            desc_loops = _tensorize.get_tensor_intrin(intrin).description.loops
            loops = loops_of(path)
            if len(loops) < len(desc_loops):
                raise ScheduleError("tensorize", f"block \"{loop_or_block.name}\"",
                                    f"the block has {len(loops)} loop(s), the description "
                                    f"{len(desc_loops)}")
            var = loops[len(loops) - len(desc_loops)].loop_var
        else:
            func, var = self._loop_var(loop_or_block, "tensorize")
        return self._step("tensorize", [loop_or_block], {"intrin": intrin}, func,
                          lambda f: _tensorize.tensorize(f, var, intrin), single=True)

    # ------------------------------------------------------------------ sampling
    def sample_perfect_tile(self, loop, n, max_innermost_factor=None, decision=None):
        """``n`` factors whose product is the loop's constant extent, drawn with the
        schedule's seeded generator (or ``decision``, as a replayed trace passes it)."""
        func, var = self._loop_var(loop, "sample_perfect_tile")
        path = find_loop(func.body, var)
        factors = _sampling.sample_perfect_tile(path[-1], n, max_innermost_factor, decision,
                                                self._rng)
        self._rng_state = None
        outs = [ExprRV(f) for f in factors]
        self._record("sample_perfect_tile", [loop],
                     {"n": n, "max_innermost_factor": max_innermost_factor,
                      "decision": list(factors)}, outs)
        return outs

    # ------------------------------------------------------------------ machinery
    def _step(self, kind, args, kwargs, func, fn, single=False):
        key = next(n for n, f in self._mod.functions if f is func)
        with gc_paused():
            try:
                if key in self._unchecked:   # (no step makes a statement outside blocks)
                    self._check_blocks(kind, func)
                    self._loose[key] = loose_statement(func.body)
                    self._unchecked.discard(key)
                loose = self._loose.get(key)
                if loose is not None and kind not in _ORDER_KEEPING:
                    raise ScheduleError(kind, f"prim function {func.name}",
                                        f"it stores or calls a kernel outside blocks (below), "
                                        f"which the legality checks of {kind} do not see: they "
                                        "read blocks; put the statement in a block of its own "
                                        "(split, fuse, unroll, annotate, parallel and vectorize "
                                        "take it as it is)", loose)
                new_func, outs = fn(func)
                _loops.check_concurrent_loops(kind, func, new_func)
            except RecursionError:
                raise ScheduleError(kind, f"prim function {func.name}", TOO_DEEP) from None
        new_func = new_func.with_attr("scheduled", True)
        for check in AFTER_EACH_STEP:
            check(new_func, kind)
        if self._rng_state is None:   # (copying it at every step was 5 % of a schedule)
            self._rng_state = self._rng.getstate()
        self._history.append(_Snapshot(self._mod, len(self._trace), self._rng_state))
        self._mod = self._mod.with_function(key, new_func)
        handles = [_handle(key, o) for o in (outs or ())]
        self._record(kind, args, kwargs, handles, single)
        if single:
            return handles[0]
        return handles if outs is not None else None

    @staticmethod
    def _check_blocks(kind, func):
        """A ScheduleError if a block of ``func`` (not yet stepped on: IR built by hand)
        declares less than its body reads and writes, or binds an iterator outside its
        domain (`pyir.transform.block_checks`): every legality check trusts what blocks
        state."""
        wrong = block_fault(func)
        if wrong:
            raise ScheduleError(kind, f"prim function {func.name}",
                                f"{wrong}; the schedule's legality checks trust what a block "
                                "states")

    def _record(self, kind, args, kwargs, outputs, single=False):
        enc_args = tuple(self._encode(a) for a in args)
        enc_kwargs = tuple((k, self._encode(v)) for k, v in kwargs.items())
        names = tuple(self._name(h) for h in outputs)
        self._trace.instructions.append(Instruction(kind, enc_args, enc_kwargs, names, single))

    def _name(self, handle):
        prefix = {BlockRV: "b", LoopRV: "l", ExprRV: "v"}[type(handle)]
        name = f"{prefix}{len(self._names)}"
        self._names[id(handle)] = name
        self._kept.append(handle)
        return name

    def _encode(self, value):
        if isinstance(value, HANDLE_TYPES) and self._names.get(id(value)):
            return {"rv": self._names[id(value)]}
        if isinstance(value, (list, tuple)):
            return [self._encode(v) for v in value]
        if _loops.is_int(value):   # an ExprRV of no step in the trace, a numpy integer
            return int(value)
        return value

    def _prim_funcs(self, func_name, kind):
        if func_name is not None:
            if func_name not in self._mod or not isinstance(self._mod[func_name], PrimFunc):
                names = [n for n, f in self._mod.functions if isinstance(f, PrimFunc)]
                raise ScheduleError(kind, f"function {func_name}",
                                    "the module has no prim function of that name; it has "
                                    + (", ".join(names) or "none"))
            return [(func_name, self._mod[func_name])]
        return [(n, f) for n, f in self._mod.functions if isinstance(f, PrimFunc)]

    def _block_names(self, func_name):
        names = []
        for _, f in self._prim_funcs(func_name, "get_block"):
            names += [p[-1].block.name for p in iter_paths(f.body)
                      if hasattr(p[-1], "block")]
        return names

    def _resolve_block(self, rv, kind):
        if not isinstance(rv, BlockRV):
            raise ScheduleError(kind, repr(rv), "expected a block handle (from get_block)")
        what = f"block \"{rv.name}\""
        self._check_own(rv, kind, what)
        func = self._func_of(rv, kind)
        path = find_block(func.body, rv.name)
        if path is None:
            raise self._stale(rv, kind, what)
        return func, path

    def _resolve_loop(self, rv, kind):
        if not isinstance(rv, LoopRV):
            raise ScheduleError(kind, repr(rv), "expected a loop handle (from get_loops, "
                                "split, fuse, ...)")
        what = f"loop {rv.loop_var.name}"
        self._check_own(rv, kind, what)
        func = self._func_of(rv, kind)
        path = find_loop(func.body, rv.loop_var)
        if path is None:
            raise self._stale(rv, kind, what)
        return func, path

    def _check_own(self, rv, kind, what):
        """Refuse a handle that no step of this schedule's trace made: the trace could not
        name it, so it could not be replayed."""
        if id(rv) not in self._names:
            raise ScheduleError(kind, what, "this handle comes from another schedule (handles "
                                "made before sch.fork() work on both copies, later ones only on "
                                "the schedule that made them); get one from this schedule with "
                                "sch.get_block / sch.get_loops")
        if self._names[id(rv)] is None:
            raise ScheduleError(kind, what, "this handle is stale: it was made by a step that "
                                "has since been undone")

    def _func_of(self, rv, kind):
        if rv.func_name not in self._mod or not isinstance(self._mod[rv.func_name], PrimFunc):
            raise ScheduleError(kind, repr(rv), f"prim function {rv.func_name} is not in the "
                                "module")
        return self._mod[rv.func_name]

    def _stale(self, rv, kind, what):
        # The handle's step is in the trace (`_check_own`), so the state right after it, kept
        # in the history, still has the block or loop.
        k = max(k for k, snap in enumerate(self._history) if _resolves(snap.mod, rv))
        step = self._history[k].trace_len   # numbered as the lines of print(sch.trace)
        return ScheduleError(kind, what, f"this handle is stale: step {step + 1}, "
                             f"`{self._trace[step].text()}`, removed it")

    def _block_name(self, rv, kind):
        func, _ = self._resolve_block(rv, kind)
        return func, rv.name

    def _loop_var(self, rv, kind):
        func, _ = self._resolve_loop(rv, kind)
        return func, rv.loop_var

    def _loop_vars(self, rvs, kind):
        if not rvs:
            raise ScheduleError(kind, "no loops", "pass at least one loop handle")
        funcs = [self._resolve_loop(rv, kind)[0] for rv in rvs]
        if any(f.name != funcs[0].name for f in funcs):
            raise ScheduleError(kind, "loops", "the loops belong to different functions")
        return funcs[0], [rv.loop_var for rv in rvs]

    def _block_and_loop(self, block, loop, kind):
        func, name = self._block_name(block, kind)
        func2, var = self._loop_var(loop, kind)
        if func2.name != func.name:
            raise ScheduleError(kind, f"block \"{name}\"", f"loop {var.name} is in another "
                                "function")
        return func, name, var


class Diff(str):
    """A unified diff of printed IR; highlighted in notebooks and by ``show()``."""

    def show(self):
        from rich.console import Console
        from rich.syntax import Syntax
        Console().print(Syntax(str(self), "diff", theme="monokai"))

    def _repr_html_(self):
        return highlighted_html(str(self), "diff")

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self).rstrip("\n") or "(no change)")


def _resolves(mod, rv):
    if rv.func_name not in mod:
        return False
    body = mod[rv.func_name].body
    if isinstance(rv, BlockRV):
        return find_block(body, rv.name) is not None
    return find_loop(body, rv.loop_var) is not None


def _block_or_loop(rv, kind):
    """Refuse ``rv`` unless it is a block or a loop handle (for the steps that take either)."""
    if not isinstance(rv, (BlockRV, LoopRV)):
        raise ScheduleError(kind, repr(rv), "expected a block or loop handle (from get_block, "
                            "get_loops, split, ...)")


def _handle(func_name, out):
    return LoopRV(func_name, out) if isinstance(out, Var) else BlockRV(func_name, out)


def _plain_index(value):
    """A numpy integer index as an int (the trace records it as text Python reads back); a
    bool stays a bool, which the primitives refuse as an index."""
    return int(value) if _loops.is_int(value) else value
