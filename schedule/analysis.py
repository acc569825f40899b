"""Schedule-specific analyses built on `pyir.arith`: loop ranges, block bindings in terms of
loops, affine and complete bindings, regions relaxed over loops, and the dependences
between blocks that decide whether loops may be reordered or run in parallel."""

from pyir.arith import Analyzer, tiles_apart
from pyir.arith.region import detect_linear
from pyir.ir import (Binary, BufferLoad, Call, For, IntImm, Range, Var, conjuncts, ge, substitute,
                     walk)
from pyir.script.parser.tensor_regions import infer_regions as infer
from pyir.transform.linear import coefficient

from .tree import realizes_under


def uses(expr, variables):
    """True if ``expr`` mentions any of ``variables``."""
    vs = set(variables)
    return any(isinstance(n, Var) and n in vs for n in walk(expr))


def analyzer_for(loops):
    """An Analyzer knowing the range of every loop in ``loops``."""
    ana = Analyzer()
    for loop in loops:
        ana.bind(loop.loop_var, Range(loop.start, loop.extent))
    return ana


def is_true(expr):
    return isinstance(expr, IntImm) and expr.dtype == "bool" and expr.value == 1


def bindings(realize):
    """{block iterator var: its binding}."""
    return {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}


def linear_form(expr, loop_vars, ana):
    """``(coeffs, rest)`` with ``expr == sum(coeffs[v] * v) + rest`` where every coefficient
    is a constant int and ``rest`` uses none of ``loop_vars``; None if not so affine."""
    coeffs = {}
    rest = ana.simplify(expr)
    for v in loop_vars:
        found = detect_linear(rest, v, ana)
        if found is None:
            return None
        coeff, rest = found
        coeff = ana.simplify(coeff)
        if not isinstance(coeff, IntImm):
            return None
        if coeff.value:
            coeffs[v] = coeff.value
    if uses(rest, loop_vars):
        return None
    return coeffs, rest


def affine_bindings(realize, loops, ana):
    """{iter var: (coeffs, rest)} when every binding is affine in ``loops``, else None."""
    loop_vars = [lp.loop_var for lp in loops]
    out = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        form = linear_form(value, loop_vars, ana)
        if form is None:
            return None
        out[iv.var] = form
    return out


def complete_binding(realize, loops, ana):
    """True if the loops bind every iterator over exactly its domain ``[0, extent)``: each
    binding is a mixed-radix combination of loops starting at 0 (a split), loops are not
    shared between iterators, any excess is cut off by the predicate, and the predicate
    cuts off nothing else (`extra_predicate`)."""
    forms = affine_bindings(realize, loops, ana)
    if forms is None:
        return False
    extents = {lp.loop_var: lp.extent for lp in loops}
    starts = {lp.loop_var: lp.start for lp in loops}
    used = set()
    guards = conjuncts(realize.predicate)
    for iv in realize.block.iter_vars:
        coeffs, rest = forms[iv.var]
        if not ana.can_prove_equal(rest, 0) or used & set(coeffs):
            return False
        used |= set(coeffs)
        span = IntImm(1)
        for v, c in sorted(coeffs.items(), key=lambda kv: kv[1]):
            if not ana.can_prove_equal(starts[v], 0) or not ana.can_prove_equal(span, c):
                return False
            span = ana.simplify(span * extents[v])
        if ana.can_prove_equal(span, iv.extent):
            continue
        value = realize.iter_values[realize.block.iter_vars.index(iv)]
        if not any(_is_guard(g, value, iv.extent, ana) for g in guards):
            return False
    return not extra_predicate(realize, ana)


def extra_predicate(realize, ana):
    """The conjuncts of ``realize``'s predicate (``T.where``) other than the guards of split
    tails (``binding < extent``) and conditions ``ana`` proves: those that leave out points
    of the iterators' domains."""
    tails = [(v, iv.extent) for iv, v in zip(realize.block.iter_vars, realize.iter_values)]
    return [g for g in conjuncts(realize.predicate)
            if not any(_is_guard(g, v, e, ana) or _is_lower_guard(g, v, ana) for v, e in tails)
            and not ana.can_prove(g)]


def _is_guard(cond, value, extent, ana):
    return (isinstance(cond, Binary) and cond.op == "lt" and ana.can_prove_equal(cond.a, value)
            and ana.can_prove_equal(cond.b, extent))


def _is_lower_guard(cond, value, ana):
    """``value >= 0``: the guard `compute_at` puts on a nest that may start below 0."""
    return (isinstance(cond, Binary) and cond.op == "ge" and ana.can_prove_equal(cond.a, value)
            and ana.can_prove_equal(cond.b, 0))


def relax_range(rng, ana, relax_vars):
    """A Range covering ``rng`` while ``relax_vars`` run over their bound ranges, or None."""
    if isinstance(rng.extent, IntImm) and rng.extent.value == 1:   # a point: one question
        lo, hi = ana.symbolic_bound(rng.start, relax_vars)
    else:
        lo, _ = ana.symbolic_bound(rng.start, relax_vars)
        _, hi = ana.symbolic_bound(ana.simplify(rng.start + rng.extent - 1), relax_vars)
    if lo is None or hi is None:
        return None
    return Range(lo, ana.simplify(hi - lo + 1))


def region_in_loops(realize, region):
    """A block's BufferRegion with its iterators replaced by their bindings."""
    return substitute(region, bindings(realize))


def accesses(realize):
    """[(buffer, region-in-loops, is_write)] of one block instance."""
    out = [(r.buffer, region_in_loops(realize, r).region, False) for r in realize.block.reads]
    out += [(r.buffer, region_in_loops(realize, r).region, True) for r in realize.block.writes]
    return out


def written_buffers(stmt):
    return {r.buffer for p in realizes_under(stmt, nested=True) for r in p[-1].block.writes}


def read_buffers(stmt):
    return {r.buffer for p in realizes_under(stmt, nested=True) for r in p[-1].block.reads}


def block_touches(stmt, buffer):
    return buffer in written_buffers(stmt) or buffer in read_buffers(stmt)


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
        ana = _LazyAnalyzer(list(outer_loops) + inner)   # most checks never need one
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

        def relax(acc):
            # A block reading and writing one region (C[i, j] += ...) relaxes it once.
            _, region, _, _, lazy, relax_vars = acc
            key = (id(lazy), region)
            if key not in relaxed:
                relaxed[key] = [relax_range(r, lazy.get(), relax_vars) for r in region]
            return relaxed[key]

        for other in accs[1:]:
            if other[0] is first[0] and other[1] == first[1] and _affine(first[1]):
                continue  # one block, one region: the same in every iteration
            if not _same_region(relax(first), relax(other), other[4].get()):
                return (f"blocks \"{first[0].name}\" and \"{other[0].name}\" access "
                        f"{buf.name} at regions that differ between iterations, so their "
                        "order matters")
        if not allow_reduce_reorder:
            write = next(a for a in accs if a[2])
            for var in moved:
                if _point_moves_with(write[1], var, write[5]) or _offset_moves_with(
                        write[1], buf.shape, var, write[5], write[4].get()):
                    continue
                if not _disjoint_steps(relax(write), buf.shape, var, write[4].get()):
                    return (f"block \"{write[0].name}\" writes parts of {buf.name} that "
                            f"iterations of loop {var.name} share, so they would write them "
                            "at the same time")
    return None


def _point_moves_with(region, var, relax_vars):
    """Whether, in some dimension, the region is the one index ``c * var + rest`` (``c`` a
    nonzero constant, ``rest`` free of the loops relaxed over): each step of ``var`` then
    writes its own index there. The cheap answer for most blocks (``C[i, j]``)."""
    for r in region:
        if isinstance(r.extent, IntImm) and r.extent.value == 1 and coefficient(r.start, var) \
                and not uses(r.start, relax_vars):
            return True
    return False


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


def _disjoint_steps(region, shape, var, ana):
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
    """`analyzer_for` the loops, made on first use."""

    def __init__(self, loops):
        self.loops, self._ana = loops, None

    def get(self):
        if self._ana is None:
            self._ana = analyzer_for(self.loops)
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


def infer_regions(block):
    """(reads, writes) of ``block`` inferred from its body as the parser infers them."""
    return infer(block.iter_vars, block.body, block.init, block.alloc_buffers)
