"""Entry conditions: what the shapes must satisfy for every access to stay in bounds.

For each access to a parameter buffer or a buffer the function allocates, each index is
relaxed over all enclosing loops (`pyir.arith.relax_region` through `_arith.Scope.relax`;
inside a loop its extent is at least 1), tightened by the ``if`` guards around it
(``if i * 32 + j < n: X[i * 32 + j]`` reads up to ``n - 1``; a guard on part of the index,
as nested splits make, bounds that part: ``if j * 2 + k < 1: X[i + j * 2 + k]`` reads up
to the largest ``i``; so does a guard on a part that the index holds a whole number of
times, ``if j < 48: X[j * 2 + k]``, or on the ``x`` of a term ``x // d``, as splitting a
fused loop makes), and, when that does not keep the access in
bounds, by the loop ranges the guards narrow (``if a * 2 + b < 1`` keeps ``b`` at 0 when
``a`` and ``b`` count from 0). An access that never runs (`_Collector.never_runs`) needs
nothing. Every resulting requirement ``0 <= min`` and
``max < extent`` that mentions only shape variables and integer scalar parameters and is
not provably true is recorded in the function attribute "entry_conditions" as (condition,
message) pairs; codegen checks them at entry, in order. Each is needed only where the loops
around the access run: ``n < 1 or ...`` for a loop over ``n`` (or over ``n // 4``).

An int64 cast of an index computed in a narrower integer (``T.int64(T.int32(i) + off)``)
is read as that computation in int64, under one more entry condition: that no part of it
wraps around where the access runs (bounded as indices are, guards included;
`_Collector.without_narrow_casts`).

A kernel a call passes an element's address to (``T.call_extern``) reaches elements from
there, in row-major order, up to the last its declared shape reaches (rows a stride apart
included, `pyir.ffi.extern.reach`): that last one must lie in the buffer too, a condition
like any other (`_Collector.reach`); where it cannot be bounded by the shapes, the build is
refused.

An index whose bounds cannot be stated that way -- one read from memory (``A[I[i]]``), one
the analysis cannot bound, one divided by a variable that is not provably in bounds (its
bounds are loose: as conditions they could refuse calls that stay in bounds) -- is checked
where it is used instead: it becomes
``T.checked_index(index, extent, status)``, and the function returns ``status`` (one
more than the entry conditions so far, per such index) when it falls outside the buffer.
The attribute "access_checks" holds their messages, in status order.

Runs on loop-level IR with multi-dimensional buffers (after lowering blocks, before
flattening).
"""

from functools import cached_property, reduce

from .. import arith
from ..arith import vars_of
from ..errors import Error
from ..ffi.extern import last_offset, reach
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.expr import conjuncts
from ..ir.node import rewrite, substitute, walk, with_fields
from ..runtime.exprtext import expr_text
from ._arith import Scope, is_const
from .common import (
    LowerError,
    has_blocks,
    prim_func_pass,
    replace_func,
    set_attrs,
    shape_vars,
)
from .dependence import comparison_facts
from .flatten import linear_index, product

class _Collector:
    def __init__(self, func):
        self.func = func
        # Parameters and the buffers the function allocates (their sizes are shape
        # expressions too; local tiles made by the schedule are provably in bounds).
        self.buffers = set(func.buffer_params) | {
            n.buffer for n in S.walk_stmts(func.body) if isinstance(n, S.Allocate)}
        dims = shape_vars(func)
        self.allowed = set(dims) | {
            p for p in func.params if isinstance(p, E.Var) and dt.is_int(p.dtype)}
        self.scope = _shape_scope(dims)
        self.ranges = {}  # loop var -> (start, extent)
        self.loop_vars = []
        self.lets = {}
        self.guards = []
        self.found = {}   # (index, extent) -> `bounds`, while the scope stays as it is
        self.conditions = {}
        self.unbounded = {}  # (buffer, dimension, index) -> message: checked where used

    # ------------------------------------------------------------ traversal
    def stmt(self, s):
        S.follow_tails(s, self._stmt)

    def _stmt(self, s):
        if isinstance(s, S.For):
            self.expr(s.start)
            self.expr(s.extent)
            start, extent = substitute(s.start, self.lets), substitute(s.extent, self.lets)
            if isinstance(extent, E.IntImm) and extent.value == 1:
                # One iteration: the variable is its start, in indices and guards alike
                # (a guard on r_0 * 2 + r_1 + r_2 with r_2 in range(1) bounds r_0 * 2 + r_1).
                self.lets[s.loop_var] = start
            with self.scope.loop(s.loop_var, start, extent):
                self.ranges[s.loop_var] = (start, extent)
                self.loop_vars.append(s.loop_var)
                self.found = {}
                self.stmt(s.body)
                self.loop_vars.pop()
                self.found = {}
        elif isinstance(s, S.LetStmt):
            self.expr(s.value)
            self.lets[s.var] = substitute(s.value, self.lets)
            self.found = {}
            return S.Tail(s.body)
        elif isinstance(s, S.IfThenElse):
            self.expr(s.condition)
            self.guarded(s.condition, lambda: self.stmt(s.then_case))
            if s.else_case is not None:
                self.guarded(E.Not(s.condition), lambda: self.stmt(s.else_case))
        elif isinstance(s, S.BufferStore):
            self.access(s.buffer, s.indices, "written")
            for i in s.indices:
                self.expr(i)
            self.expr(s.value)
        elif isinstance(s, S.SeqStmt) and s.stmts:
            for x in s.stmts[:-1]:
                self.stmt(x)
            return S.Tail(s.stmts[-1])
        elif isinstance(s, S.Allocate):
            return S.Tail(s.body)
        elif isinstance(s, S.Evaluate):
            self.expr(s.value)

    def guarded(self, cond, fn):
        self.guards.append(cond)
        self.found = {}
        fn()
        self.guards.pop()
        self.found = {}

    def expr(self, e):
        if isinstance(e, E.BufferLoad):
            self.access(e.buffer, e.indices, "read")
            for i in e.indices:
                self.expr(i)
        elif isinstance(e, E.Select):
            self.expr(e.cond)
            self.guarded(e.cond, lambda: self.expr(e.true_value))
            self.guarded(E.Not(e.cond), lambda: self.expr(e.false_value))
        elif isinstance(e, E.Binary) and e.op in ("and", "or"):
            self.expr(e.a)
            self.guarded(e.a if e.op == "and" else E.Not(e.a), lambda: self.expr(e.b))
        elif isinstance(e, E.Call) and e.op == "call_extern":
            for k, a in enumerate(e.args[1:]):
                if isinstance(a, E.Buffer):   # the whole buffer: from its first element
                    self.reach(e, k, E.BufferLoad(a, tuple(E.IntImm(0) for _ in a.shape)))
                    continue
                if isinstance(a, E.BufferLoad):
                    self.reach(e, k, a)
                self.expr(a)
        elif isinstance(e, E.PrimExpr):
            for f in (getattr(e, "a", None), getattr(e, "b", None), getattr(e, "value", None)):
                if isinstance(f, E.PrimExpr):
                    self.expr(f)
            for f in getattr(e, "args", ()):
                self.expr(f)

    # ------------------------------------------------------------ bounds
    def access(self, buf, indices, verb):
        if buf not in self.buffers:
            return
        for d, index in enumerate(indices):
            extent = buf.shape[d]
            where = f"dimension {d} of {buf.name}"
            found = self.bounds(index, extent, f"{buf.name} is {verb} at index "
                                f"{expr_text(index)} in {where}")
            if found is None:
                continue
            lo, hi = found
            stated = [hi is not None and self.require(
                E.ge(extent, self.scope.simplify(hi + 1)),
                f"{buf.name} is {verb} up to index {expr_text(hi)} in {where}")]
            stated.append(lo is not None and self.require(
                E.ge(lo, E.IntImm(0)), f"{buf.name} is {verb} at index {expr_text(lo)} in {where}"))
            if not all(stated):
                self.unbounded.setdefault(
                    (buf, d, indices[d]),
                    f"{buf.name} is {verb} at index {expr_text(indices[d])} in {where}, which "
                    f"must lie in [0, {expr_text(extent)})")

    def bounds(self, index, extent, message):
        """`find_bounds`, remembered while the loops, guards and lets in scope stay as they
        are: a store reads the element it writes (``C[i, j] = C[i, j] + ...``). A second
        call would record the conditions the first did, which keep the first message."""
        key = (index, extent)
        if key not in self.found:
            self.found[key] = self.find_bounds(index, extent, message)
        return self.found[key]

    def find_bounds(self, index, extent, message):
        """None where ``index`` lies in ``[0, extent)`` by the cheap proofs, else its bounds
        ``(lo, hi)`` over the loops and under the guards in scope (None for a side that
        cannot be bounded by the shapes). ``message`` says what ``index`` is, for the
        condition that a part of it computed in a narrower integer does not wrap around
        (`without_narrow_casts`)."""
        if self.in_bounds_by_guard(index, extent):
            return None
        index = substitute(index, self.lets)
        if self.in_bounds_by_intervals(index, extent) or self.in_bounds_by_loop(index, extent):
            return None
        index = self.without_narrow_casts(index, message)
        # An index read from memory is bounded by what memory holds, not by the shapes.
        lo, hi = self.relaxed_bounds(index, extent, any(
            isinstance(n, E.BufferLoad) for n in walk(index)))
        if _divides_by_a_variable(index) and not self.within(lo, hi, extent):
            # Bounds through a division by a variable are loose: as a condition they
            # could refuse calls that stay in bounds.
            lo = hi = None
        return lo, hi

    def without_narrow_casts(self, index, message):
        """``index`` with each int64 cast of a narrower signed integer computation
        (``T.int64(T.int32(i) + off)``) read as that computation done in int64, which it
        equals when no part of it wraps around: that is recorded as an entry condition
        (``off + m <= 2**31``; each part bounded as an index is, under the guards in scope),
        with ``message`` and "computed in int32 without wrapping around". Where it cannot be
        stated, the cast stays (its value: any of the narrower dtype's)."""
        if not any(_narrow_cast(n) for n in walk(index)):
            return index
        fits = []   # (int64 expression, dtype whose range must hold it)
        wide = rewrite(index, lambda n: _widened(n.value, fits) if _narrow_cast(n) else None)
        need = {}
        for x, dtype in fits:
            smallest, largest = dt.int_range(dtype)
            lo, hi = self.relaxed_bounds(x, E.IntImm(largest + 1))
            if lo is None or hi is None:
                return index
            for cond in (E.ge(lo, E.IntImm(smallest)), E.le(hi, E.IntImm(largest))):
                if not self.scope.can_prove(cond):
                    if is_const(self.scope.simplify(cond), 0):   # false for every call (a
                        return index   # value read from memory, + 1): checked where used
                    need[cond] = None
        dtypes = " and ".join(sorted({dtype for _, dtype in fits}))
        if need and not self.require(reduce(E.and_, need),
                                     f"{message}, computed in {dtypes} without wrapping around"):
            return index
        return wide

    def reach(self, call, k, load):
        """A kernel's reach through the address of ``load``'s element (argument ``k``): the
        elements up to the last it may touch from there (`pyir.ffi.extern.reach`) must lie
        in the buffer, and the extents of its declared shape that the call gives (row
        strides) must not be negative. Where the kernel's extents are not all constants
        and its trailing ones are the buffer's (a row stride that is the buffer's rows),
        its rows are the buffer's and that last element is bounded in each dimension, as
        an access (so the guard of a whole tile bounds it: ``(i0 * 7 + 6) * n + k`` is
        beyond the guards' reach); else its offset in the buffer's row-major order (a
        kernel steps past the end of a row)."""
        buf = load.buffer
        found = reach(call, k)
        if buf not in self.buffers or found is None:
            return
        shape, tops = found
        name = call.args[0].value
        where = f"prim function {self.func.name}: T.call_extern({name!r}, ...): argument {k + 1}"
        for e in shape:
            cond = self.scope.simplify(E.ge(e, E.IntImm(0)))
            if isinstance(cond, E.IntImm) and not cond.value:
                raise Error(f"{where} takes {expr_text(e)} as an extent of {buf.name}: an "
                            "extent is at least 0")
            if not self.require(cond, f"kernel {name!r} takes {expr_text(e)} as an extent of "
                                f"{buf.name}"):
                raise Error(f"{where} takes {expr_text(e)} as an extent of {buf.name}, which "
                            "cannot be bounded by the shapes to be at least 0")
        if all(isinstance(t, E.IntImm) for t in tops) and (
                all(t.value == 0 for t in tops) or any(t.value < 0 for t in tops)):
            return   # the element itself (its own access), or none
        last = last_offset(shape, tops)
        m, p = len(shape), len(buf.shape)
        if m <= p and not all(isinstance(e, E.IntImm) for e in shape) and all(
                self.scope.can_prove(E.eq(e, buf.shape[p - m + d]))
                for d, e in enumerate(shape) if d):
            self.reach_by_rows(where, name, load, tops, p - m, last)
        else:
            self.reach_in_order(where, name, load, last)

    def reach_by_rows(self, where, name, load, tops, first, last):
        """`reach` where the kernel's dimensions are the buffer's from ``first`` on: each
        index of the last element it reaches (``load``'s plus ``tops``) in bounds."""
        buf = load.buffer
        for d, top in enumerate(tops, first):
            if isinstance(top, E.IntImm) and top.value == 0:
                continue
            found = self.bounds(load.indices[d] + top, buf.shape[d],
                                f"{where} reaches {buf.name} from {expr_text(load)} in "
                                f"dimension {d}")
            if found is None:
                continue
            hi = found[1]
            upto = "an index" if hi is None else f"index {expr_text(hi)}"
            what = (f"{where} reaches {buf.name} from {expr_text(load)} up to {upto} in "
                    f"dimension {d}")
            self.require_reach(hi, buf.shape[d],
                               f"kernel {name!r} reaches {buf.name} up to index "
                               f"{expr_text(hi)} in dimension {d}",
                               f"{what}: past its extent {expr_text(buf.shape[d])}", what)

    def reach_in_order(self, where, name, load, last):
        """`reach` through the offset ``last`` of the last element from ``load``'s, in the
        buffer's row-major order."""
        buf = load.buffer
        if isinstance(last, E.IntImm) and self.within_slab(buf.shape, load.indices,
                                                           last.value + 1):
            return
        total = self.scope.simplify(product(buf.shape))
        end = substitute(linear_index(buf.shape, load.indices) + last, self.lets)
        if self.in_bounds_by_intervals(end, total):
            return
        hi = self.relaxed_bounds(end, total)[1]
        size = expr_text(self.scope.simplify(last + 1))
        where = f"{where} reaches {size} elements of {buf.name} from {expr_text(load)}"
        self.require_reach(hi, total,
                           f"kernel {name!r} reaches {buf.name} up to element {expr_text(hi)}",
                           f"{where}, up to element {expr_text(hi)}: past its "
                           f"{expr_text(total)} elements", where)

    def require_reach(self, hi, extent, message, past, what):
        """Require at entry (``message``) that a kernel's reach up to ``hi`` stays below
        ``extent``; a pyir.Error ``past`` where it provably does not, and one beginning
        with ``what`` where ``hi`` is unknown or the condition cannot be checked at entry."""
        need = None if hi is None else self.scope.simplify(E.ge(extent, hi + 1))
        if isinstance(need, E.IntImm) and not need.value:
            raise Error(past)
        if need is None or not self.require(need, message):
            raise Error(f"{what}, and where that ends cannot be bounded by the shapes")

    def within_slab(self, shape, indices, size):
        """Whether ``size`` elements from ``indices`` stay in the trailing constant dimensions
        that hold them (a tile's slab, as tensorize passes it), by interval arithmetic: then
        the element's own bounds check (`access`) is the whole check."""
        p, slab = len(shape), 1
        while p and slab < size and isinstance(shape[p - 1], E.IntImm):
            p -= 1
            slab *= shape[p].value
        if slab < size:
            return False
        lo, hi = self.scope.analyzer.const_int_bound(linear_index(shape[p:], indices[p:]),
                                                     simplify=False)
        return lo is not None and hi is not None and lo >= 0 and hi + size <= slab

    def in_bounds_by_guard(self, index, extent):
        """Whether a guard in scope states ``index < extent`` as written (a split tail's
        guard on the index it protects) -- or ``x < E`` for an index ``x // d`` of a
        dimension of ``(E + d - 1) // d`` (a column's panel in packed B, under the column's
        guard) -- and the index is at least 0 by constant bounds."""
        wanted = {(index, extent)}
        if isinstance(index, E.Binary) and index.op == "floordiv" and \
                isinstance(index.b, E.IntImm) and index.b.value >= 1 and \
                isinstance(extent, E.Binary) and extent.op == "floordiv" and \
                extent.b == index.b and isinstance(extent.a, E.Binary) and \
                extent.a.op == "add" and is_const(extent.a.b, index.b.value - 1):
            wanted.add((index.a, extent.a.a))
        if not any(isinstance(c, E.Binary) and c.op == "lt" and (c.a, c.b) in wanted
                   for g in self.guards for c in conjuncts(g)):
            return False
        lo, _ = self.scope.analyzer.const_int_bound(index, simplify=False)
        return lo is not None and lo >= 0

    def in_bounds_by_intervals(self, index, extent):
        """Whether constant bounds of ``index`` as written (interval arithmetic over the
        loop ranges) put it in ``[0, extent)`` for a constant extent: the cheap proof that
        settles most accesses of a static kernel before any symbolic relaxation."""
        if not isinstance(extent, E.IntImm):
            return False
        lo, hi = self.scope.analyzer.const_int_bound(index, simplify=False)
        return lo is not None and hi is not None and lo >= 0 and hi < extent.value

    def in_bounds_by_loop(self, index, extent):
        """Whether ``index`` simplifies to the variable of a loop in scope that runs over
        ``[0, extent)``: the row of a tile in a buffer laid out in tiles, ``(i_0 * 7 + i_1) //
        7`` with ``i_1`` in ``range(7)``, indexes a dimension of ``(n + 6) // 7`` as its loop
        ``i_0`` runs (the cheap proof; relaxing the quotient and proving its bounds took
        ten times as long)."""
        simple = self.scope.simplify(index)
        found = self.ranges.get(simple) if isinstance(simple, E.Var) else None
        return found is not None and is_const(found[0], 0) and found[1] == extent

    def never_runs(self):
        """Whether what is in scope never runs, and so needs no condition: a loop around it
        has a constant extent below 1 (``range(0)``), or a guard around it never holds
        (``i_0 * 2 + i_1 < 0``, the tail guard of such a loop split by [2, 2])."""
        return any(is_const(self.ranges[v][1]) and self.ranges[v][1].value < 1
                   for v in self.loop_vars) or any(is_const(self.guard(g), 0)
                                                   for g in self.guards)

    def relaxed_bounds(self, index, extent, guards_only=False):
        """``(lo, hi)`` of ``index`` over the loops in scope (``guards_only``: from the
        guards alone), tightened by the guards where that does not put it in ``[0, extent)``;
        None for a side that cannot be bounded by the shapes."""
        relaxed = None if guards_only else self.scope.relax(index, self.loop_vars)
        lo, hi = relaxed if relaxed is not None else (None, None)
        if self.guards and not self.within(lo, hi, extent):
            lo, hi = self.guarded_bounds(index, lo, hi, extent)
        return lo, hi

    def within(self, lo, hi, extent):
        """Whether ``[lo, hi]`` provably lies in ``[0, extent)`` (the guards need no look)."""
        return (lo is not None and hi is not None and self.scope.can_prove(E.ge(lo, E.IntImm(0)))
                and self.scope.can_prove(E.ge(extent, self.scope.simplify(hi + 1))))

    def guarded_bounds(self, index, lo, hi, extent):
        """``(lo, hi)`` of ``index`` tightened by the guards in scope: bounds they put on
        part of the index (or on ``x`` of a term ``x // d``, see `divided_bounds`) and, when
        those do not suffice, loop ranges they narrow -- by themselves, and then under the
        bounds on parts (``if i * 2 + k < n`` and ``if r < 3`` with ``r`` in a loop of 4:
        ``X[i * 2 + k + r]`` reads up to ``n - 1 + 2``)."""
        divided = self.divided_bounds(index, extent)
        if divided is None or not self.within(*divided, extent):
            # The division may show only once simplified: a fused loop's f // 15 * 5 +
            # f // 3 % 5 is f // 3.
            simple = self.scope.simplify(index)
            if simple != index:
                divided = self.divided_bounds(simple, extent) or divided
        if divided is not None:
            if self.within(*divided, extent):
                return divided
            # Each side the guards bound more tightly counts, also where the other is not
            # in bounds: the caller may divide it again (x // 7 + 2 >= 3 where the guards
            # give x >= 7 keeps (x // 7 + 2) // 3 - 1 at least 0).
            lo = divided[0] if lo is None or self.scope.can_prove(E.ge(divided[0], lo)) else lo
            hi = divided[1] if hi is None or self.scope.can_prove(E.le(divided[1], hi)) else hi
        lo, hi = self.part_bounds(index, lo, hi, extent)
        if self.within(lo, hi, extent):
            return lo, hi
        narrowed = self.narrowed_ranges()
        if narrowed:
            with self.scope.analyzer.scope():
                for var, (start, ext) in narrowed.items():
                    self.scope.bind(var, start, ext)
                tight = self.scope.relax(index, self.loop_vars)
                if tight is not None:
                    lo = tight[0] if lo is None or self.scope.can_prove(E.ge(tight[0], lo)) \
                        else lo
                    hi = tight[1] if hi is None or self.scope.can_prove(E.le(tight[1], hi)) \
                        else hi
                if not self.within(lo, hi, extent):
                    lo, hi = self.part_bounds(index, lo, hi, extent)
        return lo, hi

    def part_bounds(self, index, lo, hi, extent):
        """``(lo, hi)`` tightened by the bounds the guards put on parts of ``index``."""
        used = vars_of(index)
        for g in self.guards:
            for x, upper, last in comparison_facts(self.guard(g)):
                if used.isdisjoint(vars_of(x)):
                    continue  # a guard on other variables does not bound this index
                for c in self.scales(index, x):
                    rest = self.scope.simplify(index - x * c)
                    limit = last * c
                    if upper == (c > 0):
                        hi = self.tighter(hi, self.split_extreme(rest, limit, 1), rest, E.le,
                                          self.scope.simplify(extent - 1))
                    else:
                        lo = self.tighter(lo, self.split_extreme(rest, limit, 0), rest, E.ge,
                                          E.IntImm(0))
        return lo, hi

    def divided_bounds(self, index, extent):
        """``(lo, hi)`` of an index ``x // d + rest`` (``d >= 1``) with ``x`` bounded by the
        guards and divided (what the tail guard of a split fused loop states; sound, and
        exact where relaxing the division is not), or None."""
        division = [(t, sg) for t, sg in _terms(index) if isinstance(t, E.Binary) and
                    t.op == "floordiv" and self.scope.can_prove(E.ge(t.b, E.IntImm(1)))]
        if len(division) != 1:
            return None
        (term, sign), = division
        relaxed = self.scope.relax(term.a, self.loop_vars)
        a_lo, a_hi = self.guarded_bounds(term.a, *(relaxed or (None, None)), extent * term.b)
        rest = self.scope.simplify(index - term * sign)
        r_lo, r_hi = self.extreme(rest, 0), self.extreme(rest, 1)
        if None in (a_lo, a_hi, r_lo, r_hi):
            return None
        t_lo, t_hi = (self.scope.simplify(E.binary("floordiv", a, term.b)) for a in (a_lo, a_hi))
        if sign < 0:
            t_lo, t_hi = -t_hi, -t_lo
        return self.scope.simplify(r_lo + t_lo), self.scope.simplify(r_hi + t_hi)

    def guard(self, cond):
        """A guard as simplified under the loops in scope (lets substituted)."""
        return self.scope.simplify(substitute(cond, self.lets))

    def narrowed_ranges(self):
        """The loop ranges the guards in scope narrow, as {var: (start, extent)}: under
        ``if a * 2 + b < 1`` with ``a`` and ``b`` from 0, ``b`` is at most 0 (nested splits
        of a short loop guard a sum whose parts index a buffer separately); under
        ``if i >= 1``, ``i`` starts at 1 (``A[(i + 3) // 4 - 1]`` reads from 0)."""
        out = {}
        for g in self.guards:
            for x, upper, last in comparison_facts(self.guard(g)):
                for var in vars_of(x) & self.ranges.keys():
                    found = arith.detect_linear(x, var, self.scope.analyzer)
                    if found is None or not (isinstance(found[0], E.IntImm)
                                             and found[0].value > 0):
                        continue
                    coeff, rest = found
                    start, extent = out.get(var) or self.ranges[var]
                    # upper: coeff * var <= last - min(rest); else >= last - max(rest)
                    other = self.extreme(rest, 0 if upper else 1)
                    if other is None:
                        continue
                    if upper:
                        top = E.binary("floordiv", last - other, coeff)
                        out[var] = (start, self.scope.simplify(E.min_(extent, top - start + 1)))
                    else:
                        bottom = -E.binary("floordiv", other - last, coeff)   # a ceiling
                        first = self.scope.simplify(E.max_(start, bottom))
                        out[var] = (first, self.scope.simplify(start + extent - first))
        return out

    def scales(self, index, x):
        """The factors ``c`` to read ``index`` as ``c * x + rest``: 1, and the ratio of a
        variable's coefficients in ``index`` and ``x`` when it is a whole number
        (``2 * (j0 * 16 + j1) + j2`` under ``j0 * 16 + j1 < 48`` reads up to
        ``2 * 47 + 1``: a split by 2 inside a split with a tail; ``n - 1 - x`` under
        ``x < n`` reads from 0: a negative ratio turns a bound on ``x`` into the other
        bound on ``index``); -1, and the factor ``c`` of a term ``t * c`` of ``index``, also
        when ``index - c * x`` leaves none of ``x``'s loop variables (``x`` not linear in
        them, as the guard of a fused loop's splits: ``x * 2 + 1`` reads up to
        ``2 * (n - 1) + 1`` under ``x < n``; ``n - 1 - x`` reads from 0, also where ``x``
        holds ``n`` in its coefficients)."""
        out = [1]
        for var in sorted(vars_of(x) & vars_of(index), key=lambda v: v.name):
            in_x = arith.detect_linear(x, var, self.scope.analyzer)
            in_index = arith.detect_linear(index, var, self.scope.analyzer)
            if in_x is None or in_index is None:
                continue
            a, b = in_x[0], in_index[0]
            if (isinstance(a, E.IntImm) and isinstance(b, E.IntImm) and a.value > 0
                    and b.value % a.value == 0 and b.value // a.value not in out):
                out.append(b.value // a.value)
        factors = [-1] + [t.b.value * sign for t, sign in _terms(index) if isinstance(t, E.Binary)
                          and t.op == "mul" and isinstance(t.b, E.IntImm)]
        loops = vars_of(x) - self.allowed   # x's loop variables (shapes may stay)
        for c in factors:
            if c not in out and loops.isdisjoint(vars_of(self.scope.simplify(index - x * c))):
                out.append(c)
        return out

    def split_extreme(self, rest, limit, which):
        """The max (which=1) or min of ``index == rest + x`` under a guard that bounds
        ``x`` by ``limit``: the extremes of both parts added (sound, and exact when
        ``rest`` is constant or independent of ``x``)."""
        r, b = self.extreme(rest, which), self.extreme(limit, which)
        stated = self.stated_bound(rest, which)
        if stated is not None and (r is None or self.scope.can_prove(
                (E.le if which else E.ge)(stated, r))):
            r = stated   # another guard bounds ``rest`` itself (a second split's tail)
        return None if r is None or b is None else self.scope.simplify(r + b)

    def stated_bound(self, e, which):
        """The max (which=1) or min of ``e`` a guard in scope states about ``e`` itself
        (``e < b``: ``b - 1``), or about ``x`` of ``e = x // d`` (``d`` a positive constant:
        ``x < 2 * n`` bounds ``x // 2`` by ``n - 1``, as a spatial loop fused with a
        reduction and split is guarded), or None."""
        d = e.b if isinstance(e, E.Binary) and e.op == "floordiv" and isinstance(
            e.b, E.IntImm) and e.b.value > 0 else None
        for g in self.guards:
            for x, upper, last in comparison_facts(self.guard(g)):
                if upper != bool(which):
                    continue
                if x == e:
                    return self.scope.simplify(last)
                if d is not None and x == e.a:
                    return self.scope.simplify(E.binary("floordiv", last, d))
        return None

    def tighter(self, current, cand, rest, better, enough):
        """``cand`` when it is known to be the tighter bound: a guard on exactly the
        index (constant ``rest``) is what tail guards state, unless ``current`` is provably
        ``better`` (another such guard: ``x < n`` and ``x < (n + 6) // 7 * 7`` from a split
        of a fused split loop), otherwise it must be provably ``better`` than ``current`` --
        or, the two not comparable (nested splits guard a sum twice), when it is provably
        ``better`` than ``enough`` (the buffer's edge) and ``current`` is not."""
        if cand is None:
            return current
        if current is None or self.scope.can_prove(better(cand, current)):
            return cand
        if isinstance(rest, E.IntImm) and not self.scope.can_prove(better(current, cand)):
            return cand
        if self.scope.can_prove(better(cand, enough)) and not self.scope.can_prove(
                better(current, enough)):
            return cand
        return current

    def extreme(self, e, which):
        """The max (which=1) or min (which=0) of ``e`` over the loops in scope."""
        relaxed = self.scope.relax(e, self.loop_vars)
        return None if relaxed is None else relaxed[which]

    def require(self, cond, message):
        """Record ``cond`` as an entry condition unless it is provably true; False when it
        cannot be checked at entry (it reads more than shapes and scalar parameters:
        another variable, or memory, ``n <= I[0]``, which codegen cannot read there).
        A condition that no call can meet (``A[8]`` of an 8-element A where it surely runs)
        refuses the build, naming the access (every call would have been refused)."""
        cond = self.scope.simplify(cond)
        if any(n not in self.allowed for n in vars_of(cond)) or _reads(cond):
            return False
        if not self.scope.can_prove(cond) and not self.never_runs():
            needed = self.when_run(cond)
            if is_const(self.shapes.simplify(needed), 0):
                raise LowerError(f"prim function {self.func.name}: {message}, out of bounds "
                                 "for every call")
            self.conditions.setdefault(needed, message)
        return True


    def when_run(self, cond):
        """``cond`` as needed only when the loops in scope run: a loop over a shape ``n``
        runs no access when ``n`` is 0, so unless ``cond`` holds then too it becomes
        ``n < 1 or cond`` (``A[max(i - 1, 0)]`` for ``i < n`` needs ``n >= 1`` only if it
        runs); a loop over an expression of shapes and scalar parameters (``n // 4``) runs
        none when that is below 1, and ``n // 4 < 1 or cond`` is what it needs. An extent
        that is at least 1 for every shape (``n + 1``) gives no such escape, nor does one
        whose escape another's implies (``n`` beside ``n // 4``, which is at most ``n``;
        the same extent twice)."""
        extents, wrapped = [], cond
        for var in self.loop_vars:
            extent = self.ranges[var][1]
            if isinstance(extent, E.Var):
                escapes = extent in self.allowed and not self.scope.can_prove(
                    substitute(wrapped, {extent: E.IntImm(0)}))
            else:   # (an extent read from memory cannot be read at entry: no escape)
                escapes = not isinstance(extent, E.IntImm) and vars_of(extent) <= \
                    self.allowed and not _reads(extent)
            if escapes:
                extents.append(extent)
                wrapped = E.or_(E.lt(extent, E.IntImm(1)), wrapped)
        kept = []
        for extent in extents:
            if self.shapes.can_prove(E.ge(extent, E.IntImm(1))) or any(
                    self.shapes.can_prove(E.le(other, extent)) for other in kept):
                continue
            kept = [other for other in kept if not self.shapes.can_prove(E.le(extent, other))]
            kept.append(extent)
        for extent in kept:
            escape = E.lt(extent, E.IntImm(1))
            # an access out of bounds whenever it runs: it must not run (not "n < 1 or False")
            cond = escape if is_const(cond) and not cond.value else E.or_(escape, cond)
        return cond

    @cached_property
    def shapes(self):
        """A `Scope` of no loops: it knows only what holds at every call."""
        return _shape_scope(shape_vars(self.func))


def _reads(e):
    """Whether ``e`` reads memory or calls out (it cannot be evaluated at the entry)."""
    return any(isinstance(n, (E.BufferLoad, E.Call)) for n in walk(e))


def _shape_scope(dims):
    """A `Scope` that knows the dimensions ``dims`` are never negative."""
    scope = Scope()
    for v in dims:
        scope.nonnegative(v)
    return scope


def _narrow_signed(dtype):
    return dt.is_int(dtype) and dt.bits(dtype) < 64


def _narrow_cast(n):
    """Whether ``n`` is an int64 cast of a narrower signed integer."""
    return isinstance(n, E.Cast) and n.dtype == "int64" and _narrow_signed(n.value.dtype)


def _widened(e, fits):
    """The narrower signed integer expression ``e`` computed in int64: equal to ``e`` while
    each ``(x, dtype)`` appended to ``fits`` has ``x`` in the range of ``dtype`` (a sum,
    difference or product, and a cast from int64 or a wider dtype, must not wrap around).
    Parts it cannot follow stay as they are, cast to int64."""
    if isinstance(e, E.IntImm):
        return E.IntImm(e.value)
    if isinstance(e, E.Cast) and (e.value.dtype == "int64" or _narrow_signed(e.value.dtype)):
        x = e.value if e.value.dtype == "int64" else _widened(e.value, fits)
        fits.append((x, e.dtype))
        return x
    if isinstance(e, E.Binary) and (e.op in ("add", "sub", "mul", "min", "max") or (
            e.op in ("floordiv", "floormod") and isinstance(e.b, E.IntImm) and e.b.value > 0)):
        x = E.Binary(e.op, _widened(e.a, fits), _widened(e.b, fits))
        if e.op in ("add", "sub", "mul"):
            fits.append((x, e.dtype))
        return x
    return E.Cast("int64", e)


def _terms(e, sign=1):
    """The (term, sign) pairs of a sum (a term ``t * 1`` is ``t``: a split by 1 fused with
    other loops binds ``f // 13 * 1 + 0``)."""
    if isinstance(e, E.Binary) and e.op in ("add", "sub"):
        return _terms(e.a, sign) + _terms(e.b, sign if e.op == "add" else -sign)
    if isinstance(e, E.Binary) and e.op == "mul" and isinstance(e.b, E.IntImm) and e.b.value == 1:
        return _terms(e.a, sign)
    return [(e, sign)]


def _divides_by_a_variable(index):
    return any(isinstance(n, E.Binary) and n.op in ("floordiv", "floormod")
               and not isinstance(n.b, E.IntImm) for n in walk(index))


def _checked_where_used(body, unbounded, first_status):
    """``body`` with each index in ``unbounded`` as ``T.checked_index(index, extent,
    status)``, statuses from ``first_status`` in the order of ``unbounded``."""
    status = {key: first_status + k for k, key in enumerate(unbounded)}
    unwrap = {}

    def original(index):
        # Indices inside an index are wrapped first (rewrite goes bottom-up).
        if index not in unwrap:
            unwrap[index] = rewrite(index, lambda n: n.args[0] if isinstance(n, E.Call)
                                    and n.op == "checked_index" else None)
        return unwrap[index]

    def check(n):
        if not isinstance(n, (E.BufferLoad, S.BufferStore)):
            return None
        indices = tuple(
            E.Call("int64", "checked_index", (i, n.buffer.shape[d], E.IntImm(status[key])))
            if (key := (n.buffer, d, original(i))) in status else i
            for d, i in enumerate(n.indices))
        return None if indices == n.indices else with_fields(n, indices=indices)
    return rewrite(body, check)


@prim_func_pass
def entry_conditions(func):
    """Record the shape requirements of ``func`` and check the rest where it is used (see
    the module docstring)."""
    if has_blocks(func) or func.attr("entry_conditions") is not None:
        return func
    c = _Collector(func)
    c.stmt(func.body)
    if not c.unbounded:
        return set_attrs(func, entry_conditions=tuple(c.conditions.items()))
    body = _checked_where_used(func.body, c.unbounded, len(c.conditions) + 1)
    return set_attrs(replace_func(func, body=body),
                     entry_conditions=tuple(c.conditions.items()),
                     access_checks=tuple(c.unbounded.values()))
