"""Which loops' iterations depend on each other: the rule behind `Schedule.reorder`,
`Schedule.parallel` and `Schedule.vectorize` (`pyir.schedule`), and behind the loops the
default schedule makes parallel or vectorized (`pyir.transform.default_schedule`), with the
helpers it stands on: block instances under a statement, their accesses in terms of loops,
and regions relaxed over loops (`pyir.arith`), each loop over the range where the block's
``T.where`` lets it run (`narrowed_by_predicate`).

A loop's iterations may run in another order when every buffer written below it is accessed,
in each iteration, at one region by every block touching it; they may run at the same time
when, in addition, the iterations write disjoint parts of each buffer
(`pyir.transform.concurrency` asks that, and the same of statements outside blocks).
"""

import dataclasses
import math

from ..arith import Analyzer, IntBound, detect_iter_map, detect_linear, tiles_apart, vars_of
from ..ir import (Binary, BlockRealize, BufferLoad, Call, For, IntImm, Range, Var, conjuncts,
                  ge, le, rewrite, stmt_children, substitute, walk)
from ..ir import dtype as dt
from ..ir.stmt import find_paths
from .linear import coefficient


def realizes_under(stmt, nested=False):
    """Paths (relative to ``stmt``) of the BlockRealizes below ``stmt``; only the outermost
    ones unless ``nested``."""
    return list(find_paths(stmt, lambda s: isinstance(s, BlockRealize),
                           lambda s: () if isinstance(s, BlockRealize) and not nested
                           else stmt_children(s)))


def uses(expr, variables):
    """True if ``expr`` mentions any of ``variables``."""
    vs = set(variables)
    return any(isinstance(n, Var) and n in vs for n in walk(expr))


def analyzer_for(loops, nonnegative=()):
    """An Analyzer knowing the range of every loop in ``loops`` and that the variables of
    ``nonnegative`` (shape variables) are at least 0, so that a loop over a product of them
    bounds each below by 1 (`pyir.arith.Analyzer.bind`)."""
    ana = Analyzer()
    for var in nonnegative:
        ana.bind(var, IntBound(0, None))
    for loop in loops:
        ana.bind(loop.loop_var, Range(loop.start, loop.extent))
    return ana


def bindings(realize):
    """{block iterator var: its binding}."""
    return {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}


def relax_range(rng, ana, relax_vars):
    """A Range covering ``rng`` while ``relax_vars`` run over their bound ranges, or None."""
    start, extent = ana.simplify(rng.start), ana.simplify(rng.extent)   # (substitutions in)
    if vars_of(start).isdisjoint(relax_vars) and vars_of(extent).isdisjoint(relax_vars):
        return Range(start, extent)   # nothing to relax
    if isinstance(rng.extent, IntImm) and rng.extent.value == 1:   # a point: one question
        lo, hi = ana.symbolic_bound(rng.start, relax_vars)
    else:
        lo, _ = ana.symbolic_bound(rng.start, relax_vars)
        _, hi = ana.symbolic_bound(ana.simplify(rng.start + rng.extent - 1), relax_vars)
    if lo is None or hi is None:
        return None
    return Range(lo, ana.simplify(hi - lo + 1))


_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def comparison_facts(cond):
    """(expr, upper, bound) facts from a guard's comparisons (lt/le/gt/ge): ``expr <= bound``
    when ``upper``, else ``expr >= bound`` (``i < n`` gives ``(i, True, n - 1)``); a side
    ``x // c`` (``c`` > 0) is read as a bound on ``x`` (``x // 64 < 1`` is ``x < 64``), as
    fusing loops writes the guards of split ones."""
    out = []
    for c in conjuncts(cond):
        if isinstance(c, Binary) and c.op in _FLIP and c.a.dtype == "int64":
            for x, op, bound in ((c.a, c.op, c.b), (c.b, _FLIP[c.op], c.a)):
                x, op, bound = _undivided(x, op, bound)
                last = bound - 1 if op == "lt" else bound + 1 if op == "gt" else bound
                out.append((x, op in ("lt", "le"), last))
    return out


def _undivided(x, op, bound):
    """``x <op> bound`` with a floor division by a positive constant moved to the bound."""
    if not (isinstance(x, Binary) and x.op == "floordiv" and isinstance(x.b, IntImm)
            and x.b.value > 0):
        return x, op, bound
    c = x.b
    if op in ("lt", "ge"):       # x // c < k  <=>  x < c * k
        return x.a, op, bound * c
    return x.a, op, bound * c + (c.value - 1)  # x // c <= k  <=>  x <= c * k + c - 1


def relax_guarded(rng, ana, relax_vars, predicate):
    """`relax_range`, a point's bounds tightened by the conjuncts of ``predicate`` that
    bound a part of it: under ``T.where(j_1_0 * 2 + j_1_1 < 3)`` (nested splits with tails)
    the point ``j_0 * 3 + (j_1_0 * 2 + j_1_1)`` spans ``[j_0 * 3, j_0 * 3 + 3)``, not the
    4 elements the loops reach. Sound: the bound of a sum is at most the bounds of its
    parts added."""
    out = relax_range(rng, ana, relax_vars)
    if out is None or not (isinstance(rng.extent, IntImm) and rng.extent.value == 1):
        return out
    lo, hi = out.start, ana.simplify(out.start + out.extent - 1)
    start = ana.simplify(rng.start)
    for part, upper, last in comparison_facts(predicate):
        if not uses(part, relax_vars) or uses(last, relax_vars):
            continue
        for sign in (1, -1):
            rest = ana.simplify(start - part * sign)
            if vars_of(rest) & vars_of(part) & set(relax_vars):
                continue
            r_lo, r_hi = ana.symbolic_bound(rest, relax_vars)
            if upper == (sign > 0) and r_hi is not None:
                cand = ana.simplify(r_hi + last * sign)
                hi = cand if ana.can_prove(le(cand, hi)) else hi
            elif upper != (sign > 0) and r_lo is not None:
                cand = ana.simplify(r_lo + last * sign)
                lo = cand if ana.can_prove(ge(cand, lo)) else lo
    return Range(lo, ana.simplify(hi - lo + 1))


def narrow_loops(ana, loops, predicate, outer=()):
    """Bind in ``ana`` the ranges of ``loops`` that ``predicate`` narrows
    (`narrowed_by_predicate`, the loops ``outer`` around them fixed), where a block with that
    predicate runs; return the loops so narrowed."""
    narrowed, _ = narrowed_by_predicate(loops, predicate, ana, outer)
    for lp, cut in zip(loops, narrowed):
        if cut is not lp:
            ana.bind(cut.loop_var, Range(cut.start, cut.extent))
    return narrowed


def narrowed_by_predicate(loops, predicate, ana, outer=()):
    """``(loops, left)``: ``loops`` (For nodes) each with its range cut to where the
    conjuncts of ``predicate`` that bound it alone hold (``T.where(i >= 3)``: ``i`` from 3
    on), and the conjuncts that narrow no loop so, in order: those bounding no single loop
    of ``loops`` with coefficient 1 or -1 by bounds free of the loops and of ``outer`` (a
    split tail's guard ``i_0 * 4 + i_1 < n`` moves with its outer loop ``i_0``), and those
    ``ana`` cannot place within the loop's range. A conjunct the range implies is in
    neither. Over the loops returned, ``left`` holds exactly where ``predicate`` did over
    ``loops``."""
    by_var = {lp.loop_var: lp for lp in loops}
    fixed = {lp.loop_var for lp in outer}
    left = []
    for cond in conjuncts(predicate):
        found = _bound_of(cond, by_var, fixed, ana)
        if found is None:
            left.append(cond)
            continue
        var, lo, end = found
        lp = by_var[var]
        start, stop = lp.start, ana.simplify(lp.start + lp.extent)
        if lo is not None and ana.can_prove(le(lo, start)) or \
                end is not None and ana.can_prove(ge(end, stop)):
            continue   # the loop's range implies it
        cut = lo if lo is not None else end
        if not (ana.can_prove(ge(cut, start)) and ana.can_prove(le(cut, stop))):
            left.append(cond)
            continue
        start, stop = (cut, stop) if lo is not None else (start, cut)
        by_var[var] = dataclasses.replace(lp, start=start, extent=ana.simplify(stop - start))
    return [by_var[lp.loop_var] for lp in loops], left


def _bound_of(cond, loop_vars, fixed, ana):
    """``(var, lo, end)`` where ``cond`` says ``var >= lo`` (``end`` None) or ``var < end``
    (``lo`` None) for one of ``loop_vars``, with bounds that use none of them nor of
    ``fixed``; else None."""
    if not (isinstance(cond, Binary) and cond.op in ("lt", "le", "gt", "ge")
            and dt.is_int(cond.a.dtype)):
        return None
    loops = [v for v in vars_of(cond) if v in loop_vars or v in fixed]
    if len(loops) != 1 or loops[0] in fixed:
        return None
    a, b = cond.a, cond.b
    at_least_0 = ana.simplify({"ge": a - b, "gt": a - b - 1, "le": b - a,
                               "lt": b - a - 1}[cond.op])   # cond: at_least_0 >= 0
    found = detect_linear(at_least_0, loops[0], ana)
    if found is None or not isinstance(found[0], IntImm) or uses(found[1], loops):
        return None
    coeff, rest = found
    if coeff.value == 1:      # var + rest >= 0
        return loops[0], ana.simplify(IntImm(0) - rest), None
    if coeff.value == -1:     # rest - var >= 0
        return loops[0], None, ana.simplify(rest + 1)
    return None


def region_in_loops(realize, region):
    """A block's BufferRegion with its iterators replaced by their bindings."""
    return substitute(region, bindings(realize))


def accesses(realize):
    """[(buffer, region-in-loops, is_write)] of one block instance."""
    out = [(r.buffer, region_in_loops(realize, r).region, False) for r in realize.block.reads]
    out += [(r.buffer, region_in_loops(realize, r).region, True) for r in realize.block.writes]
    return out


def reduce_loop_vars(realize):
    """The variables used in the bindings of the block's reduction iterators."""
    out = set()
    for iv, v in zip(realize.block.iter_vars, realize.iter_values):
        if iv.kind == "R":
            out |= {n for n in walk(v) if isinstance(n, Var)}
    return out


def iteration_conflict(root, outer_loops, moved, allow_reduce_reorder):
    """Why running the iterations of loops ``moved`` (vars) below ``root`` in another order
    could change results, or None if it cannot.

    Every buffer written below ``root`` must be accessed, in each iteration of the moved
    loops, at the same region by every block touching it (regions relaxed over the other
    loops below ``root``). A block whose reduction iterators depend on a moved loop is
    allowed (``allow_reduce_reorder``: reductions are reassociated) only while it is the
    only block touching its output. Iterations that run at the same time (parallel and
    vectorized loops: ``allow_reduce_reorder`` False) must also write disjoint parts of
    every buffer.
    """
    moved = set(moved)
    raw = {}
    for rel in realizes_under(root):
        realize = rel[-1]
        inner = [n for n in rel if isinstance(n, For)]
        ana = _LazyAnalyzer(list(outer_loops), inner, realize.predicate)
        relax_vars = [lp.loop_var for lp in inner if lp.loop_var not in moved]
        red = reduce_loop_vars(realize) & moved
        for buf, region, is_write in accesses(realize):
            raw.setdefault(buf, []).append((realize.block, region, is_write, red, ana,
                                            relax_vars))
    # Only buffers written below ``root`` matter: compare the regions of those alone.
    for buf, accs in raw.items():
        if not any(a[2] for a in accs):
            continue
        blocks = {id(a[0]) for a in accs}
        for block, _, is_write, red, _, _ in accs:
            if is_write and red and (not allow_reduce_reorder or len(blocks) > 1):
                names = ", ".join(sorted(v.name for v in red))
                return (f"block \"{block.name}\" reduces into {buf.name} over loop {names}, "
                        "so its iterations depend on each other")
        first = accs[0]
        relaxed = {}

        def relax(acc, guarded=False):
            # A block reading and writing one region (C[i, j] += ...) relaxes it once; the
            # block's guards tighten it (`relax_guarded`) only where the loops do not do.
            _, region, _, _, lazy, relax_vars = acc
            key = (id(lazy), region, guarded)
            if key not in relaxed:
                relaxed[key] = [relax_guarded(r, lazy.get(), relax_vars, lazy.predicate)
                                if guarded else relax_range(r, lazy.get(), relax_vars)
                                for r in region]
            return relaxed[key]

        for other in accs[1:]:
            if other[1] == first[1] and _affine(first[1]) and (
                    other[0] is first[0] or _same_iterations(first, other)):
                continue  # one region: the same in every iteration
            if not (_same_region(relax(first), relax(other), other[4].get()) or _same_region(
                    relax(first, True), relax(other, True), other[4].get())):
                if other[0] is first[0]:
                    return (f"block \"{first[0].name}\" accesses {buf.name} at regions that "
                            "differ between iterations, so the order of its iterations "
                            "matters")
                return (f"blocks \"{first[0].name}\" and \"{other[0].name}\" access "
                        f"{buf.name} at regions that differ between iterations, so their "
                        "order matters")
        if not allow_reduce_reorder:
            write = next(a for a in accs if a[2])
            for var in moved:   # the cheap answers first
                if not (_point_moves_with(write[1], var, write[5])
                        or disjoint_steps(relax(write), buf.shape, var, write[4].get())
                        or _offset_moves_with(write[1], buf.shape, var, write[5],
                                              write[4].get())
                        or _point_one_to_one(write[1], var, write[4])
                        or disjoint_steps(relax(write, True), buf.shape, var, write[4].get())
                        or _apart_through_one_sum(write[1], buf.shape, var, write[5],
                                                  write[4].get())):
                    return (f"block \"{write[0].name}\" writes parts of {buf.name} that "
                            f"iterations of loop {var.name} share, so they would write them "
                            "at the same time")
    return None


def _same_iterations(a, b):
    """Whether two blocks' accesses ``a`` and ``b`` (`iteration_conflict`'s tuples) at one
    region, as written in terms of the loops, reach the same elements in each iteration:
    the loops it uses that either relaxes over, both relax over, under one predicate
    (``C_init`` and ``C`` after decompose_reduction, under the loops of a fused loop's
    split: a region of ``(f_0 * 16 + f_1) // m`` cannot be relaxed, but it is one)."""
    used = set().union(*(vars_of(r.start) | vars_of(r.extent) for r in a[1]))
    return (used & set(a[5]) == used & set(b[5])
            and a[4].predicate == b[4].predicate)


def _point_moves_with(region, var, relax_vars):
    """Whether, in some dimension, the region is the one index ``c * var + rest`` (``c`` a
    nonzero constant, ``rest`` free of the loops relaxed over): each step of ``var`` then
    writes its own index there. The cheap answer for most blocks (``C[i, j]``)."""
    for r in region:
        if isinstance(r.extent, IntImm) and r.extent.value == 1 and coefficient(r.start, var) \
                and not uses(r.start, relax_vars):
            return True
    return False


def one_to_one(index, var, loops, ana):
    """Whether ``index`` takes a different value for each value of ``var`` at every point
    of the loops it uses (``loops``: var -> (start, extent)). Its *atoms* are those loops'
    variables and, for one from 0, ``v // d`` and ``v % d`` (``d`` a positive constant: a
    fused loop's parts). It must be ``sum(c_a * a) + rest`` with ``rest`` and each ``c_a``
    free of the loops, each atom's start free of them too, ``var`` an atom or both its parts
    (with one ``d``) atoms, and an order of the terms in which each ``|c_a|`` is more than
    the span of the terms before it (``sum(|c_b| * (values_b - 1))``, each count at its
    largest): the terms then make a mixed-radix number, different at each point."""
    atoms, parts = dict(loops), {}

    def part(n):
        if not (isinstance(n, Binary) and n.op in ("floordiv", "floormod")
                and isinstance(n.a, Var) and n.a in loops and isinstance(n.b, IntImm)
                and n.b.value > 0 and isinstance(loops[n.a][0], IntImm)
                and loops[n.a][0].value == 0):
            return None
        key = (n.op, n.a, n.b.value)
        if key not in parts:
            parts[key] = atom = Var(f"{n.a.name}_{n.op}")
            extent = loops[n.a][1]
            atoms[atom] = (IntImm(0), n.b if n.op == "floormod"
                           else ana.simplify((extent + n.b - 1) // n.b))
        return parts[key]

    rest = rewrite(index, part)
    used = vars_of(rest)
    if var not in used and not any(("floordiv", var, d) in parts and ("floormod", var, d)
                                   in parts for _, _, d in parts):
        return False
    terms = []
    for v, (start, extent) in atoms.items():
        if v not in used:
            continue
        found = ana.symbolic_bound(ana.simplify(extent - 1), list(loops))[1]
        linear = detect_linear(rest, v, ana)
        if linear is None or found is None or uses(start, atoms) or uses(linear[0], atoms):
            return False
        coeff, rest = linear
        if ana.can_prove(ge(coeff, 1)):
            terms.append((coeff, found))
        elif ana.can_prove(le(coeff, -1)):
            terms.append((ana.simplify(IntImm(0) - coeff), found))
        else:
            return False
    if uses(rest, atoms):
        return False
    span = IntImm(0)
    while terms:
        fits = [t for t in terms if ana.can_prove(ge(t[0], span + 1))]
        if not fits:
            return False
        least = next((t for t in fits if all(ana.can_prove(le(t[0], u[0])) for u in fits)),
                     fits[0])
        terms.remove(least)
        span = ana.simplify(span + least[0] * least[1])
    return True


def _point_one_to_one(region, var, lazy):
    """Whether, in some dimension, a point region's index takes a different value for each
    value of ``var`` at every point of the loops below it (`one_to_one`: a vectorized
    ``j_1`` outside its ``j_0`` writes ``B[i, j_0 * 8 + j_1]``, columns 8 apart for each
    lane)."""
    loops = {lp.loop_var: (lp.start, lp.extent) for lp in lazy.inner}
    return any(isinstance(r.extent, IntImm) and r.extent.value == 1
               and one_to_one(r.start, var, loops, lazy.get()) for r in region)


def _offset_moves_with(region, shape, var, relax_vars, ana):
    """Whether a point region's row-major offset over ``shape``, over the loops relaxed
    over, ends in each step of ``var`` before the next step's starts: a split of a fused
    loop writes ``D[(f_0 * 4 + f_1) // m, (f_0 * 4 + f_1) % m]``, at offset
    ``f_0 * 4 + f_1``."""
    if not all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region):
        return False
    offset = IntImm(0)
    for r, extent in zip(region, shape):
        offset = offset * extent + r.start
    span = relax_range(Range(ana.simplify(offset), 1), ana, relax_vars)
    return span is not None and uses(span.start, [var]) and ana.can_prove(
        ge(substitute(span.start, {var: var + 1}), span.start + span.extent))


def _apart_through_one_sum(region, shape, var, relax_vars, ana):
    """Whether a point region's indices that change with the loops are a one-to-one function
    of one sum ``x`` of them (`pyir.arith.detect_iter_map` of ``x``'s divisions and
    remainders: ``D[x % m, x // m]`` with ``x = f_0 * 4 + f_1``, a fused loop's split laid
    out transposed; ``B[i // 12, i % 4, i // 4 % 3]`` laid out twice), whose values in one
    step of ``var`` end before those of the next step begin. A divisor must be at least 1:
    provably, or as a dimension of the buffer's ``shape``, which is where the access runs
    (in bounds, as the entry conditions make every access)."""
    if not all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region):
        return False
    loops = [var, *relax_vars]
    moving = [r.start for r in region if uses(r.start, loops)]
    sums = {n.a for e in moving for n in walk(e) if isinstance(n, Binary)
            and n.op in ("floordiv", "floormod") and uses(n.a, [var])} | set(moving)
    t, count = Var("t"), Var("count")
    for x in sums:
        mapped = [rewrite(e, lambda n, x=x: t if n == x else None) for e in moving]
        if any(uses(e, loops) or t not in vars_of(e) for e in mapped):
            continue
        divisors = {n.b for e in mapped for n in walk(e) if isinstance(n, Binary)
                    and n.op in ("floordiv", "floormod")
                    and (n.b in shape or ana.can_prove(ge(n.b, 1)))}
        size = count * math.lcm(1, *(d.value for d in divisors if isinstance(d, IntImm)))
        for d in divisors - {d for d in divisors if isinstance(d, IntImm)}:
            size = size * d
        found = detect_iter_map(mapped, {t: Range(IntImm(0), size)})
        if found is None or not found.bijective:
            continue
        span = relax_range(Range(x, IntImm(1)), ana, relax_vars)
        return span is not None and uses(span.start, [var]) and ana.can_prove(
            ge(substitute(span.start, {var: var + 1}), span.start + span.extent))
    return False


def disjoint_steps(region, shape, var, ana):
    """Whether the region (in terms of ``var``) of one step of ``var`` ends before that of
    the next step starts: in some dimension, or in row-major order over the buffer's
    ``shape`` (a fused loop writes ``D[f // 64, f % 64]``); or whether each value of
    ``var`` has a tile of its own (`pyir.arith.tiles_apart`: a fused loop over tiles writes
    ``C[f // J * 6 : + 6, f % J * 16 : + 16]``)."""
    if any(r is None for r in region):
        return False
    step = {var: var + 1}
    for r in region:
        if uses(r.start, [var]) and ana.can_prove(ge(substitute(r.start, step),
                                                     r.start + r.extent)):
            return True
    first, last = IntImm(0), IntImm(0)
    for r, extent in zip(region, shape):
        first, last = first * extent + r.start, last * extent + r.start + r.extent - 1
    if uses(first, [var]) and ana.can_prove(ge(substitute(first, step), last + 1)):
        return True
    extents = [ana.const_int_bound(r.extent)[1] for r in region]
    return tiles_apart([r.start for r in region], extents, {var}, {}, one_to_one=True)


class _LazyAnalyzer:
    """`analyzer_for` the loops, made on first use, with the ranges of the ``inner`` ones
    narrowed by the block's ``predicate`` (`narrow_loops`)."""

    def __init__(self, outer, inner, predicate):
        self.outer, self.inner, self.predicate, self._ana = outer, inner, predicate, None

    def get(self):
        if self._ana is None:
            self._ana = analyzer_for(self.outer + self.inner)
            narrow_loops(self._ana, self.inner, self.predicate, self.outer)
        return self._ana


def _affine(region):
    """Whether a region's bounds read no memory and call nothing (so relaxing it cannot
    fail; a region that cannot be relaxed counts as differing, as before)."""
    return not any(isinstance(n, (BufferLoad, Call)) for r in region for n in walk(r))


def _same_region(a, b, ana):
    if any(r is None for r in a) or any(r is None for r in b):
        return False
    return all(ana.can_prove_equal(x.start, y.start) and ana.can_prove_equal(x.extent, y.extent)
               for x, y in zip(a, b))
