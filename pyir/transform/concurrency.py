"""Whether the iterations of a loop may run at the same time, as a parallel or vectorized
loop's do: `concurrency_conflict`, the rule of `Schedule.parallel` / `Schedule.vectorize`
and of a script's ``T.parallel`` / ``T.vectorized``.

The blocks below the loop answer by the regions they declare
(`pyir.transform.dependence.iteration_conflict`). Statements outside blocks (a script
written without them) answer by their indices (`statement_conflict`): each buffer they
write below the loop, unless it is allocated inside the loop (each iteration has its own),
must be accessed so that the iterations stay apart:
- at one index in every access, which in some dimension (or as a row-major offset) takes a
  different value at every point of the loops it uses, the loop among them
  (`pyir.transform.dependence.one_to_one`: ``P[j0 * n * 32 + i * 32 + j1]`` packs panels
  across a parallel ``i``);
- or at elements that, in one iteration (relaxed over the loops inside it), end before
  those of the next iteration begin (``A[i * m + j + 1] = A[i * m + j]`` over ``j`` in
  ``range(m - 1)``).
The ``if`` conditions around an access narrow the loops they bound alone (`_Statements`):
under ``if j < 1`` an inner loop ``j`` runs over ``[0, 1)`` for the accesses there, and under
``if i_0 < 2`` / ``else`` the loop checked runs its iterations ``[0, 2)`` / ``[2, ...)``,
whose accesses must then be apart within each range and between the two (a split tail
written by hand: ``B[i_0 * 4 + i_1]`` in the first, ``B[8 + i_1]`` in the last). Other
conditions are not read: an access they guard counts as made. A buffer passed by address to
a kernel (``T.call_extern``) that may write it (`pyir.ffi.extern`'s ``writes=``; any buffer,
for a kernel not registered) or that the statements write is refused too, since how far the
kernel reaches is not known here; so is a buffer that blocks and statements below the loop
both access, one of them writing it.
"""

from ..arith import negated_comparison, vars_of
from ..ffi.extern import ExternKernel
from ..ffi.registry import get_global_func
from ..ir import (Allocate, Binary, BlockRealize, Buffer, BufferLoad, BufferStore, Call,
                  Evaluate, For, IfThenElse, IntImm, LetStmt, Range, SeqStmt, Var, le,
                  substitute, walk)
from ..runtime.exprtext import expr_text
from .dependence import (analyzer_for, disjoint_steps, iteration_conflict, narrowed_by_predicate,
                         one_to_one, relax_range)
from .regions import hull


def concurrency_conflict(loop, outer_loops, what=None, statements=True):
    """Why the iterations of For ``loop`` (inside ``outer_loops``) cannot run at the same
    time, as a parallel or vectorized loop's do (`iteration_conflict` without reordering
    reductions, and `statement_conflict` unless not ``statements``), or None; ``what`` names
    the loop (default: "loop i")."""
    why = iteration_conflict(loop, outer_loops, [loop.loop_var], allow_reduce_reorder=False)
    if why is None and statements:
        why = statement_conflict(loop, outer_loops)
    if why is None:
        return None
    return (f"{why}; the iterations of {what or f'loop {loop.loop_var.name}'} cannot run at "
            "the same time")


def statement_conflict(loop, outer_loops):
    """Why the statements outside blocks below For ``loop`` (inside ``outer_loops``) keep
    its iterations from running at the same time (see the module docstring), or None."""
    body = _Statements(list(outer_loops), loop)
    body.visit(loop.body)
    var = loop.loop_var
    loops = {var: (loop.start, loop.extent), **body.loops}
    for buf in body.buffers:
        if buf in body.private:
            continue
        accs = body.accesses.get(buf, [])
        written = any(is_write for _, is_write, _ in accs)
        if buf in body.kernel_args and (written or body.kernel_args[buf]):
            return (f"a kernel called below it is passed {buf.name}, which "
                    + ("statements there write" if written else "the kernel may write")
                    + ", and how far the kernel reaches into it is not known")
        if accs and buf in body.in_blocks and (written or buf in body.block_writes):
            return (f"blocks and statements outside blocks below it both access {buf.name}, "
                    "and one of them writes it")
        if written and not _apart_in_ranges(buf, accs, var, loops, body):
            write = next(indices for indices, is_write, _ in accs if is_write)
            other = next((indices for indices, _, _ in accs if indices != write), None)
            also = "" if other is None else f" and access {_text(buf, other)}"
            return (f"the statements below it write {_text(buf, write)}{also}, which other "
                    f"iterations of loop {var.name} may access too")
    return None


def _apart_in_ranges(buf, accs, var, loops, body):
    """Whether the iterations of ``var`` access disjoint elements of ``buf``, accessed at
    ``accs`` (each ``(indices, is_write, iterations)``: the range of ``var`` the conditions
    around the access leave, None for all of them). The accesses of each range must be
    apart (trivially, for one iteration), and those of two ranges that are apart, too (the
    elements of one range, all its iterations together, before or after those of the
    other in some dimension); ranges that may share iterations are taken as one."""
    groups = []   # [(range, [(indices, is_write)])], ranges pairwise apart
    for indices, is_write, rng in accs:
        joined = [g for g in groups if not _ranges_apart(g[0], rng, body.ana)]
        if joined:
            groups = [g for g in groups if g not in joined]
            rng = None if rng is None or any(g[0] != rng for g in joined) else rng
            members = [a for g in joined for a in g[1]]
        else:
            members = []
        groups.append((rng, members + [(indices, is_write)]))
    for rng, members in groups:
        if not (rng is not None and _one_iteration(rng, body.ana)
                or _apart(buf, members, var, loops, body)):
            return False
    return all(_elements_apart(a, b, var, loops, body)
               for k, a in enumerate(groups) for b in groups[k + 1:])


def _ranges_apart(a, b, ana):
    """Whether the Ranges ``a`` and ``b`` (of iterations, None for all of them; or of
    elements in one dimension) share no value."""
    if a is None or b is None:
        return False
    return ana.can_prove(le(a.start + a.extent, b.start)) or \
        ana.can_prove(le(b.start + b.extent, a.start))


def _one_iteration(rng, ana):
    return ana.can_prove(le(rng.extent, IntImm(1)))


def _elements_apart(a, b, var, loops, body):
    """Whether the elements the accesses of group ``a`` reach over all of its iterations
    lie, in some dimension, before or after all those of group ``b`` (`_apart_in_ranges`)."""
    inner = [v for v in loops if v is not var]
    hulls = []
    for rng, members in (a, b):
        with body.ana.scope():
            body.ana.bind(var, rng)
            regions = []
            for indices, _ in members:
                region = tuple(relax_range(Range(i, IntImm(1)), body.ana, inner + [var])
                               for i in indices)
                if any(r is None for r in region):
                    return False
                regions.append(region)
            hulls.append(hull(regions))
    return any(_ranges_apart(x, y, body.ana) for x, y in zip(*hulls))


def _apart(buf, accs, var, loops, body):
    """Whether the iterations of ``var`` access disjoint elements of ``buf`` (accessed at
    ``accs``, each ``(indices, is_write)``)."""
    ana = body.ana
    same, merged = _merged_copies([indices for indices, _ in accs], var, loops, ana)
    if same is not None:
        if any(one_to_one(index, var, merged, ana) for index in same):
            return True
        if len(same) > 1:
            offset = IntImm(0)
            for index, extent in zip(same, buf.shape):
                offset = offset * extent + index
            if one_to_one(ana.simplify(offset), var, merged, ana):
                return True
    inner = [v for v in loops if v is not var]
    regions = []
    for indices, _ in accs:
        region = tuple(relax_range(Range(i, IntImm(1)), ana, inner) for i in indices)
        if any(r is None for r in region):
            return False
        regions.append(region)
    return disjoint_steps(hull(regions), buf.shape, var, ana)


def _merged_copies(all_indices, var, loops, ana):
    """``(indices, loops)``: the one index tuple of every access in ``all_indices``, once
    the loops inside are renamed by name, and the loops (var -> (start, extent)) with each
    name's loops merged into one over all of their values; ``(None, None)`` when the
    accesses differ even so. A split's main loop and its tail (two loops ``j_1``, from 0 to
    32 and to ``T.min(32, n - j_0 * 32)``) so become one loop to ``T.max`` of the two
    extents: the elements each access reaches are among those of the one index over the
    merged loops (a name used by two loops in one access is left as it is). Only the loops
    the accesses reach (`_reached`) count: one a condition narrowed for the accesses under
    it (`_Statements`) leaves out its namesake those accesses no longer use."""
    used = _reached({v for indices in all_indices for i in indices for v in vars_of(i)}, loops)
    by_name = {}
    for v, rng in loops.items():
        if v is not var and v in used:
            by_name.setdefault(v.name, []).append((v, rng))
    renamed, merged = {}, {var: loops[var]}
    for name, group in by_name.items():
        starts = {id(rng[0]) for _, rng in group}
        if len(group) == 1 or len(starts) > 1 and not all(
                ana.can_prove_equal(rng[0], group[0][1][0]) for _, rng in group):
            merged.update((v, rng) for v, rng in group)
            continue
        one = Var(name, var.dtype)
        extent = group[0][1][1]
        for _, rng in group[1:]:
            extent = Binary("max", extent, rng[1])
        merged[one] = (group[0][1][0], ana.simplify(extent))
        renamed.update((v, one) for v, _ in group)
    first = None
    for indices in all_indices:
        used = [v for i in indices for v in vars_of(i) if v in renamed]
        if len({v.name for v in used}) != len(set(used)):
            return None, None
        mapped = tuple(ana.simplify(substitute(i, renamed)) for i in indices)
        if first is None:
            first = mapped
        elif mapped != first:
            return None, None
    return first, merged


def _reached(variables, loops):
    """``variables`` and, in turn, the loop variables the ranges of those among ``loops``
    (var -> (start, extent)) mention."""
    todo, seen = list(variables), set()
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo.extend(w for e in loops.get(v, ()) for w in vars_of(e) if w in loops)
    return seen


def _text(buf, indices):
    return f"{buf.name}[{', '.join(expr_text(i) for i in indices)}]"


class _Statements:
    """The accesses of the statements outside blocks in the body of ``loop`` (the one
    checked), walked without recursion (loops may nest thousands deep): ``accesses``
    {buffer: [(indices, is_write, iterations)]}, the indices simplified with the lets in
    force and ``iterations`` the range of ``loop``'s variable where the access runs (None:
    all of it); ``loops`` {var: (start, extent)} of the loops inside; ``private`` the
    buffers allocated there; ``kernel_args`` {buffer: whether a kernel it is passed to may
    write it}; the buffers that blocks there access (``in_blocks``) and write
    (``block_writes``); ``buffers`` every one of these, in order of first access. ``ana``
    bounds ``outer``, ``loop``, the loops inside and the lets: made at the first access, as
    a body of blocks alone needs none (binding its loops was 3 % of the bench matmul's
    schedule).

    Under an ``if`` (and under the ``else`` of one comparison), a loop inside that the
    condition bounds alone (`pyir.transform.dependence.narrowed_by_predicate`) is renamed,
    for the accesses there, to a variable of the narrowed range (in ``loops`` too), and the
    range of ``loop``'s variable it bounds is narrowed so (``iterations``)."""

    def __init__(self, outer, loop):
        self._outer, self._ana, self._bindings = outer + [loop], None, []
        self._loop = loop
        self.loops, self.accesses, self.kernel_args, self.buffers = {}, {}, {}, {}
        self.private, self.in_blocks, self.block_writes = set(), set(), set()
        self._renamed, self._iterations, self._scopes = {}, None, []

    @property
    def ana(self):
        if self._ana is None:
            self._ana = analyzer_for(self._outer)
            for var, value in self._bindings:
                self._ana.bind(var, value)
        return self._ana

    def _bind(self, var, value):
        if self._ana is None:
            self._bindings.append((var, value))
        else:
            self._ana.bind(var, value)

    def _rename(self, e):
        return substitute(e, self._renamed) if self._renamed else e

    def visit(self, stmt):
        stack = [stmt]
        while stack:
            s = stack.pop()
            if isinstance(s, tuple):   # the scope of a condition: entered, or left
                if s:
                    self._scopes.append((self._renamed, self._iterations))
                    renamed = {v: s[0].get(w, w) for v, w in self._renamed.items()}
                    self._renamed = {**renamed, **s[0]}   # (a renamed loop renamed again)
                    self._iterations = s[1]
                else:
                    self._renamed, self._iterations = self._scopes.pop()
            elif isinstance(s, SeqStmt):
                stack.extend(reversed(s.stmts))
            elif isinstance(s, For):
                self.exprs(s.start, s.extent)
                rng = (self._rename(s.start), self._rename(s.extent))
                self._bind(s.loop_var, Range(*rng))
                self.loops[s.loop_var] = rng
                stack.append(s.body)
            elif isinstance(s, LetStmt):
                self.exprs(s.value)
                self._bind(s.var, self._rename(s.value))
                stack.append(s.body)
            elif isinstance(s, Allocate):
                self.private.add(s.buffer)
                stack.append(s.body)
            elif isinstance(s, IfThenElse):
                self.exprs(s.condition)
                cond = self._rename(s.condition)
                for case, holds in ((s.else_case, negated_comparison(cond)),
                                    (s.then_case, cond)):
                    if case is not None:
                        stack += [(), case, self._narrowed(holds)]
            elif isinstance(s, BufferStore):
                self.exprs(s.value, *s.indices)
                self.access(s.buffer, s.indices, True)
            elif isinstance(s, Evaluate):
                self.exprs(s.value)
            elif isinstance(s, BlockRealize):
                for r in s.block.reads + s.block.writes:
                    self.buffers[r.buffer] = None
                self.in_blocks.update(r.buffer for r in s.block.reads + s.block.writes)
                self.block_writes.update(r.buffer for r in s.block.writes)

    def exprs(self, *values):
        for value in values:
            addresses = set()
            for n in walk(value):
                if isinstance(n, Call) and n.op == "call_extern":
                    kernel = get_global_func(n.args[0].value, allow_missing=True)
                    for k, a in enumerate(n.args[1:]):
                        buf = a if isinstance(a, Buffer) else \
                            a.buffer if isinstance(a, BufferLoad) else None
                        if buf is None:
                            continue
                        addresses.add(id(a))
                        writes = not isinstance(kernel, ExternKernel) \
                            or kernel.written_param(k) is not None
                        self.kernel_args[buf] = self.kernel_args.get(buf, False) or writes
                        self.buffers[buf] = None
                elif isinstance(n, BufferLoad) and id(n) not in addresses:
                    self.access(n.buffer, n.indices, False)

    def _narrowed(self, cond):
        """``(renamed, iterations)`` where ``cond`` (None: nothing known) holds: the loops
        inside it narrows, renamed (see the class docstring), and the iterations of the loop
        checked it leaves."""
        if cond is None:
            return {}, self._iterations
        mentioned = vars_of(cond)
        inner = [For(v, *rng, "serial", Evaluate(IntImm(0))) for v, rng in self.loops.items()]
        bounded = [lp for lp in inner if lp.loop_var in mentioned]
        renamed = {}
        for lp, cut in zip(bounded, narrowed_by_predicate(bounded, cond, self.ana)[0]):
            if cut is not lp:
                fresh = Var(lp.loop_var.name, lp.loop_var.dtype)
                self.loops[fresh] = (cut.start, cut.extent)
                self._bind(fresh, Range(cut.start, cut.extent))
                renamed[lp.loop_var] = fresh
        iterations, var = self._iterations, self._loop.loop_var
        if var in mentioned:
            start, extent = ((iterations.start, iterations.extent) if iterations is not None
                             else (self._loop.start, self._loop.extent))
            checked = For(var, start, extent, "serial", Evaluate(IntImm(0)))
            (cut,), _ = narrowed_by_predicate([checked], cond, self.ana, inner)
            if cut is not checked:
                iterations = Range(cut.start, cut.extent)
        return renamed, iterations

    def access(self, buf, indices, is_write):
        self.buffers[buf] = None
        indices = tuple(self.ana.simplify(self._rename(i)) for i in indices)
        self.accesses.setdefault(buf, []).append((indices, is_write, self._iterations))
