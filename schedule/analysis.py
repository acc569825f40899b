"""Schedule-specific analyses built on `pyir.arith`: block bindings in terms of loops,
affine and complete bindings, predicates, and the buffers blocks read and write. The
dependences between iterations that decide whether loops may be reordered or run in
parallel, loop ranges and relaxed regions are `pyir.transform.dependence` (the default
schedule asks the same questions)."""

from pyir.arith import detect_iter_map, vars_of
from pyir.arith.region import detect_linear
from pyir.ir import Binary, IntImm, Range, Var, conjuncts, substitute
from pyir.script.parser.tensor_regions import infer_regions as infer
from pyir.transform.dependence import realizes_under, uses


def is_true(expr):
    return isinstance(expr, IntImm) and expr.dtype == "bool" and expr.value == 1


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
    shift, ranges = {}, {}
    for lp in loops:   # outer first: a loop's bounds use only the loops outside it
        start, extent = substitute(lp.start, shift), substitute(lp.extent, shift)
        var = lp.loop_var
        if not ana.can_prove_equal(start, 0):
            var = Var(var.name, var.dtype)
            shift[lp.loop_var] = var + start
        ranges[var] = Range(IntImm(0), extent)
    if shift:
        exprs = [substitute(e, shift) for e in exprs]
        predicate = None if predicate is None else substitute(predicate, shift)
    found = detect_iter_map(list(exprs), ranges, predicate, ana)
    return found is not None and found.bijective and all(
        ana.can_prove_equal(r.start, 0) and ana.can_prove_equal(r.extent, e)
        for r, e in zip(found.ranges, extents))


def extra_predicate(realize, ana):
    """The conjuncts of ``realize``'s predicate (``T.where``) other than the guards of split
    tails (``binding < extent``) and conditions ``ana`` proves: those that leave out points
    of the iterators' domains."""
    tails = [(v, iv.extent) for iv, v in zip(realize.block.iter_vars, realize.iter_values)]
    return [g for g in conjuncts(realize.predicate)
            if not any(_is_guard(g, v, e, ana) or _is_lower_guard(g, v, ana)
                       for v, e in sorted(tails, key=lambda t: not _compares(g, t[0])))
            and not ana.can_prove(g)]


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


def block_touches(stmt, buffer):
    return buffer in written_buffers(stmt) or buffer in read_buffers(stmt)


def infer_regions(block):
    """(reads, writes) of ``block`` inferred from its body as the parser infers them."""
    return infer(block.body, block.init, block.alloc_buffers)
