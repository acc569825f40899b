"""Schedule-specific analyses built on `pyir.arith`: block bindings in terms of loops,
affine and complete bindings, predicates, and the buffers blocks read and write. The
dependences between iterations that decide whether loops may be reordered or run in
parallel, loop ranges and relaxed regions are `pyir.transform.dependence` (the default
schedule asks the same questions)."""

import dataclasses
from functools import reduce

from pyir.arith import detect_iter_map, vars_of
from pyir.arith.region import detect_linear
from pyir.ir import (Binary, BufferLoad, Call, For, IntImm, Range, Var, and_, binary, conjuncts,
                     dtype, ge, lt, substitute, walk)
from pyir.ir.node import rewrite
from pyir.transform.regions import infer_regions as infer
from pyir.transform.dependence import (analyzer_for, narrowed_by_predicate, realizes_under,
                                       uses)
from pyir.transform.flatten import linear_index, product


def linear_form(expr, loop_vars, ana):
    """``(coeffs, rest)`` with ``expr == sum(coeffs[v] * v) + rest`` where every coefficient
    is a constant int and ``rest`` uses none of ``loop_vars``; None if not so affine."""
    coeffs = {}
    rest = ana.simplify(expr)
    for v in loop_vars:
        if v not in vars_of(rest):   # coefficient 0, and ``rest`` (simplified) stays as it is
            continue
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
    cuts off nothing else (`extra_predicate`). Bindings that are not affine (a fused loop's
    ``f // m`` and ``f % m``) are asked of `pyir.arith.detect_iter_map`."""
    forms = affine_bindings(realize, loops, ana)
    if forms is None:
        return _bijective(realize, loops, ana)
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
        for v, c in _by_coefficient(coeffs, extents, ana):
            if not ana.can_prove_equal(starts[v], 0) or not ana.can_prove_equal(span, c):
                return False
            span = ana.simplify(span * extents[v])
        value = realize.iter_values[realize.block.iter_vars.index(iv)]
        if not _within_domain(value, span, iv.extent, guards, ana):
            return False
    return not extra_predicate(realize, ana)


def _by_coefficient(coeffs, extents, ana):
    """The (loop var, coefficient) pairs of a binding by coefficient; among equal
    coefficients a loop of extent 1 (always 0: a split by 1) goes first. Only loops that
    share a coefficient are asked about their extent (a proof that fails costs)."""
    values = list(coeffs.values())
    return sorted(coeffs.items(), key=lambda kv: (
        kv[1], values.count(kv[1]) > 1 and not ana.can_prove_equal(extents[kv[0]], 1)))


def _within_domain(value, span, extent, guards, ana):
    """Whether a binding ``value`` running over ``[0, span)`` stays in its iterator's domain
    ``[0, extent)``: ``span`` is ``extent``, or a guard ``value < extent`` cuts off the rest.
    The guards written on ``value`` are asked first, as proving ``span == extent`` fails, at
    a cost, for every split with a tail; the other guards last."""
    written = [g for g in guards if _compares(g, value)]
    others = [g for g in guards if not _compares(g, value)]
    return (any(_is_guard(g, value, extent, ana) for g in written)
            or ana.can_prove_equal(span, extent)
            or any(_is_guard(g, value, extent, ana) for g in others))


def _bijective(realize, loops, ana):
    """`complete_binding` by `maps_onto`: the bindings map the loops one-to-one onto the
    iterators' domains."""
    return not extra_predicate(realize, ana) and maps_onto(
        realize.iter_values, [iv.extent for iv in realize.block.iter_vars], loops, ana,
        realize.predicate)


def maps_onto(exprs, extents, loops, ana, predicate=None):
    """Whether ``exprs`` map the iterations of ``loops`` (under ``predicate``) one-to-one
    onto ``[0, extents[0]) x [0, extents[1]) x ...`` (`pyir.arith.detect_iter_map`, with
    each loop counted from 0: a loop ``v`` from ``s`` is a new ``v0`` from 0, plus ``s``)."""
    shift, counted = _from_zero(loops, ana)
    ranges = {var: Range(IntImm(0), extent) for var, extent in counted}
    if shift:
        exprs = [substitute(e, shift) for e in exprs]
        predicate = None if predicate is None else substitute(predicate, shift)
    found = detect_iter_map(list(exprs), ranges, predicate, ana)
    return found is not None and found.bijective and all(
        ana.can_prove_equal(r.start, 0) and ana.can_prove_equal(r.extent, e)
        for r, e in zip(found.ranges, extents))


def maps_onto_buffer(indices, shape, loops, ana, predicate=None):
    """Whether the points ``indices`` (as ``ana`` simplifies them) map the iterations of
    ``loops`` (under ``predicate``) one-to-one onto a buffer of ``shape``, read through
    their row-major offset: the offset maps the loops one-to-one onto ``[0, size)``
    (`maps_onto`), and at each offset the indices are the element there. A fused loop split
    in tiles writes ``B[(f_0 * 4 + f_1) // m, (f_0 * 4 + f_1) % m]``, each of whose indices
    is no split of one loop, at the offset ``f_0 * 4 + f_1``, which is."""
    offset, size = ana.simplify(linear_index(shape, indices)), ana.simplify(product(shape))
    if not maps_onto([offset], [size], loops, ana, predicate):
        return False
    x = Var("offset")
    with ana.scope():
        ana.bind(x, Range(IntImm(0), size))
        at = [rewrite(i, lambda n: x if n == offset else None) for i in indices]
        return not any(vars_of(i) & {lp.loop_var for lp in loops} for i in at) and (
            ana.can_prove_equal(linear_index(shape, at), x) and all(
                ana.can_prove(ge(i, 0)) and ana.can_prove(lt(i, e)) for i, e in zip(at, shape)))


def _from_zero(loops, ana):
    """``loops`` each counted from 0: ``(shift, [(var, extent)])``, a loop ``v`` from ``s``
    a new ``v0`` from 0, with ``shift`` mapping ``v`` to ``v0 + s``."""
    shift, out = {}, []
    for lp in loops:   # outer first: a loop's bounds use only the loops outside it
        start, extent = substitute(lp.start, shift), substitute(lp.extent, shift)
        var = lp.loop_var
        if not ana.can_prove_equal(start, 0):
            var = Var(var.name, var.dtype)
            shift[lp.loop_var] = var + start
        out.append((var, extent))
    return shift, out


def extra_predicate(realize, ana):
    """The conjuncts of ``realize``'s predicate (``T.where``) other than the guards of split
    tails (``binding < extent``) and conditions ``ana`` proves: those that leave out points
    of the iterators' domains."""
    tails = [(v, iv.extent) for iv, v in zip(realize.block.iter_vars, realize.iter_values)]
    return [g for g in conjuncts(realize.predicate)
            if not any(_is_guard(g, v, e, ana) or _is_lower_guard(g, v, ana)
                       for v, e in sorted(tails, key=lambda t: not _compares(g, t[0])))
            and not ana.can_prove(g)]


def where_over_iterators(realize, loops, extra, ana):
    """The conjuncts ``extra`` of ``realize``'s predicate (`extra_predicate`) rewritten over
    the block's iterators, so that a block moved to a new nest can keep them: each must be
    a comparison whose sides differ by an affine function of ``loops`` made of the
    bindings (``j_0 * 16 + j_1 < m`` with ``vj_0 = j_0``, ``vj_1 = j_1`` is ``vj_0 * 16 +
    vj_1 < m``; ``j >= 4`` with ``vj = j - 4`` is ``vj >= 0``), and read no memory (what it
    reads could change before the new place). None if one is not."""
    forms = affine_bindings(realize, loops, ana)
    if forms is None:
        return None
    out = []
    for cond in extra:
        if not (isinstance(cond, Binary) and cond.op in ("lt", "le", "gt", "ge", "eq", "ne")
                and dtype.is_int(cond.a.dtype)) or any(
                    isinstance(n, (BufferLoad, Call)) for n in walk(cond)):
            return None
        form = linear_form(cond.a - cond.b, [lp.loop_var for lp in loops], ana)
        if form is None:
            return None
        coeffs, rest = form
        lhs, rhs = IntImm(0), IntImm(0)   # the iterators with positive and negative factors
        for iv in realize.block.iter_vars:
            own, offset = forms[iv.var]
            if not own:
                continue
            first = next(iter(own))
            k, r = divmod(coeffs.get(first, 0), own[first])
            if r or any(coeffs.pop(v, 0) != k * c for v, c in own.items()):
                return None
            if k > 0:
                lhs = lhs + iv.var * k
            elif k < 0:
                rhs = rhs + iv.var * -k
            rest = rest - offset * k
        if coeffs:
            return None
        out.append(binary(cond.op, ana.simplify(lhs), ana.simplify(rhs - rest)))
    return out


def complete_where_narrowed(realize, loops, extra, shapes):
    """`complete_binding` for a block whose predicate has conjuncts ``extra`` beyond split
    tails, the other conjuncts as the guards: over ``loops``, or else over ``loops`` cut to
    where the predicate lets them run (`narrowed_by_predicate`, the function's shape
    variables ``shapes`` at least 0) and each then counted from 0 (``T.where(j >= 4)`` with
    ``vj = j - 4``). The block then runs at the points of its domain where ``extra`` holds,
    each once."""
    ana = analyzer_for(loops, shapes)
    guards = [g for g in conjuncts(realize.predicate) if g not in extra]
    if complete_binding(_guarded(realize, guards, {}), loops, ana):
        return True
    narrowed, left = narrowed_by_predicate(loops, realize.predicate, ana)
    shift, counted = _from_zero(narrowed, ana)
    zeroed = [For(var, IntImm(0), extent, lp.kind, lp.body)
              for (var, extent), lp in zip(counted, narrowed)]
    moved = _guarded(realize, [g for g in left if g not in extra], shift)
    return complete_binding(moved, zeroed, analyzer_for(zeroed, shapes))


def _guarded(realize, guards, shift):
    """``realize`` with ``guards`` as its predicate, each loop of ``shift`` replaced."""
    pred = substitute(reduce(and_, guards), shift) if guards else IntImm(1, "bool")
    return dataclasses.replace(realize, predicate=pred, iter_values=tuple(
        substitute(v, shift) for v in realize.iter_values))


def _compares(cond, value):
    """Whether ``cond`` compares ``value`` as written (``value < extent``): the guard of that
    binding, asked about first, as a proof that fails (another binding's guard) costs far
    more than one that holds."""
    return isinstance(cond, Binary) and cond.a == value


def _is_guard(cond, value, extent, ana):
    return (isinstance(cond, Binary) and cond.op == "lt" and ana.can_prove_equal(cond.a, value)
            and ana.can_prove_equal(cond.b, extent))


def _is_lower_guard(cond, value, ana):
    """``value >= 0``: the guard `compute_at` puts on a nest that may start below 0."""
    return (isinstance(cond, Binary) and cond.op == "ge" and ana.can_prove_equal(cond.a, value)
            and ana.can_prove_equal(cond.b, 0))


def written_buffers(stmt):
    return {r.buffer for p in realizes_under(stmt, nested=True) for r in p[-1].block.writes}


def read_buffers(stmt):
    return {r.buffer for p in realizes_under(stmt, nested=True) for r in p[-1].block.reads}


def infer_regions(block):
    """(reads, writes) of ``block`` inferred from its body as the parser infers them."""
    return infer(block.body, block.init, block.alloc_buffers)
