"""Loop primitives: split, fuse, reorder, loop kinds (parallel, vectorize, unroll) and
annotations. Each is a function ``(PrimFunc, ...) -> (PrimFunc, new handles)`` that checks
legality first and raises `ScheduleError` without building anything when the step is
illegal."""

import dataclasses
import math
import numbers
from functools import reduce

from pyir import arith
from pyir.ir import For, IntImm, Range, Var, and_, ge, is_true, lt, max_
from pyir.ir.node import IdentityNode, rewrite
from pyir.ir.stmt import stmt_children
from pyir.transform.common import shape_vars
from pyir.transform.concurrency import concurrency_conflict
from pyir.transform.dependence import analyzer_for, iteration_conflict, realizes_under, uses
from pyir.transform.lower_blocks import init_may_not_run
from pyir.transform.register_tiles import FUSED_TAILS_KEY, TAIL_KEY

from .errors import ScheduleError, script_text
from .tree import find_block, find_loop, loops_of, map_realizes, replace, with_body



def _loop_subject(loop, path):
    blocks = [p[-1].block.name for p in realizes_under(loop.body)]
    where = f" (around block{'s' if len(blocks) > 1 else ''} " \
            f"{', '.join(repr(b) for b in blocks)})" if blocks else ""
    return f"loop {loop.loop_var.name}{where}"


def is_int(value):
    """True for an int or a numpy integer, not a bool (a loop count, a tile factor)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


#: The largest product of a split's factors: its index ``i_0 * f + i_1`` and its inferred
#: extent ``(extent + f - 1) // f`` stay within int64 for any loop that can run.
MAX_SPLIT = 1 << 62


def split(func, var, factors):
    """Split a loop into nested loops whose extents are ``factors``.

    One factor may be None; it is inferred as ``ceildiv(extent, product of the others)``, at
    least 1.
    For a constant extent a factor is cut to what its loop can use: ``[16, 100]`` on an
    extent of 7 gives loops of 1 and 7 (`_fit`).
    When the product is not provably the extent (a symbolic extent, or a factor that does
    not divide it), the blocks below get the tail guard ``T.where(fused < extent)`` and the
    outer loop the annotation ``"pyir.split_tail"`` (the extent of one outer iteration), so
    that codegen can run a guard-free main part and a tail.

    Before::

        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2)

    After ``sch.split(i, factors=[None, 32])``::

        for i_0 in T.serial((n + 31) // 32, annotations={"pyir.split_tail": 32}):
            for i_1 in range(32):
                with T.block("B"):
                    vi = T.axis.spatial(n, i_0 * 32 + i_1)
                    T.where(i_0 * 32 + i_1 < n)
                    B[vi] = A[vi] * T.float32(2)
    """
    path = find_loop(func.body, var)
    loop = path[-1]
    subject = _loop_subject(loop, path)
    if not isinstance(factors, (list, tuple)):
        raise ScheduleError("split", subject, f"factors must be a list, got {factors!r}", loop)
    if len(factors) < 2:
        raise ScheduleError("split", subject, "give at least two factors", loop)
    if sum(f is None for f in factors) > 1:
        raise ScheduleError("split", subject, "at most one factor may be None (inferred)", loop)
    for f in factors:
        if f is not None and not (is_int(f) and f >= 1):
            raise ScheduleError("split", subject, f"factor {f!r} is not a positive int "
                                f"(factors are positive ints or None), got {list(factors)}", loop)
    factors = [None if f is None else int(f) for f in factors]
    if loop.kind != "serial":
        raise ScheduleError("split", subject, f"the loop is {loop.kind}; split a serial loop "
                            "and set the kind on the new loops", loop)
    ana = analyzer_for(loops_of(path) + [loop])
    known = reduce(lambda a, b: a * b, [f for f in factors if f is not None], 1)
    if known > MAX_SPLIT:
        raise ScheduleError("split", subject, f"the factors multiply to {known}; they may "
                            f"multiply to at most 2**62 (the loops' indices are int64)", loop)
    extent = ana.simplify(loop.extent)
    if None in factors:
        inferred = ana.simplify((extent + (known - 1)) // known)
        if isinstance(inferred, IntImm) and inferred.value < 1:
            # An extent of 0: a loop of 1 (a loop of 0 would make the others' iterations
            # write one point, so that no loop could be made parallel).
            inferred = IntImm(1)
        exts = [inferred if f is None else IntImm(f) for f in factors]
    else:
        exts = [IntImm(f) for f in factors]
        if not ana.can_prove(ge(IntImm(known), extent)):
            raise ScheduleError("split", subject, f"the factors multiply to {known}, which is "
                                f"not provably at least the extent {script_text(extent)}", loop)
    if isinstance(extent, IntImm) and extent.value >= 1:
        exts = _fit(exts, extent.value)
    total = ana.simplify(reduce(lambda a, b: a * b, exts))
    guard = not ana.can_prove_equal(total, extent)
    blocks = realizes_under(loop.body)
    if guard and not blocks:
        raise ScheduleError("split", subject, "the extent may not divide evenly and the loop "
                            "has no block whose predicate could guard the tail", loop)
    new_vars = [Var(f"{var.name}_{k}") for k in range(len(factors))]
    fused = new_vars[0]
    for v, e in zip(new_vars[1:], exts[1:]):
        fused = fused * e + v
    value = fused if _is_zero(loop.start) else loop.start + fused
    body = _substitute(loop.body, {var: value}, new_vars)
    if guard:
        body = add_predicate(body, lt(fused, extent))
    for v, e in reversed(list(zip(new_vars, exts))):
        body = For(v, IntImm(0), e, "serial", body)
    if guard:
        inner = ana.simplify(reduce(lambda a, b: a * b, exts[1:]))
        body = dataclasses.replace(body, annotations=((TAIL_KEY, _int(inner)),))
    return with_body(func, replace(path, body)), new_vars


def _fit(exts, extent):
    """The constant factors ``exts`` of a split of a constant ``extent``, each cut to the
    values its loop can take with the index below ``extent`` (innermost first): a factor
    beyond the extent only adds iterations the tail guard skips, and a chain of them
    (7 split by [16, 100], the 16 by [1000, 1000]) loops a hundred million times for 7."""
    out, inner = [], 1
    for e in reversed(exts):
        e = min(e.value, -(-extent // inner))
        out.append(IntImm(e))
        inner *= e
    return out[::-1]


def _substitute(body, mapping, new_vars):
    """``body`` with the loop variables of ``mapping`` replaced by their values in terms of
    ``new_vars``, and the extent of each loop inside that comes to depend on them in the form
    the parser reads a loop extent in (`arith.simplify`), so that the module prints and
    parses back to itself (``range((i + 1) // 2)`` with ``i`` split by 4 is
    ``range(i_0 * 2 + (i_1 + 1) // 2)``)."""
    def fn(n):
        if isinstance(n, IdentityNode):
            return mapping.get(n)
        if isinstance(n, For) and uses(n.extent, new_vars):
            return dataclasses.replace(n, extent=arith.simplify(n.extent))
        return None
    return rewrite(body, fn)


def _int(e):
    return e.value if isinstance(e, IntImm) else script_text(e)


def _is_zero(e):
    return isinstance(e, IntImm) and e.value == 0


def add_predicate(stmt, cond):
    """``stmt`` with ``cond`` and-ed to the predicate of each outermost block below it."""
    def guard(realize):
        pred = cond if is_true(realize.predicate) else and_(realize.predicate, cond)
        return dataclasses.replace(realize, predicate=pred)
    return map_realizes(stmt, guard)


def fuse(func, vars_):
    """Fuse perfectly nested loops (outermost first) into one loop.

    Before::

        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    After ``sch.fuse(i, j)``::

        for i_j_fused in range(m * n):
            with T.block("B"):
                vi = T.axis.spatial(n, i_j_fused // m)
                vj = T.axis.spatial(m, i_j_fused % m)
                B[vi, vj] = A[vi, vj]

    Fusing a loop split with a tail (annotated ``"pyir.split_tail"``) annotates the fused
    loop ``{"pyir.fused_tails": 1}``: lowering then tests the tails' guards once per
    iteration and runs the whole tiles without them (`pyir.transform.split_tail_loops`).

    Illegal when the fused loop would drive both spatial and reduction iterators of a block
    with an init over a reduction that may be empty: lowering could not run that init
    before the loop, and an empty loop would never run it.
    """
    paths = [find_loop(func.body, v) for v in vars_]
    loops = [p[-1] for p in paths]
    subject = "loops " + ", ".join(v.name for v in vars_)
    if len(set(map(id, vars_))) != len(vars_):
        raise ScheduleError("fuse", subject, "a loop is listed twice", loops[0])
    for outer, inner in zip(loops, loops[1:]):
        if outer.body is not inner:
            raise ScheduleError("fuse", subject, f"loop {inner.loop_var.name} is not the whole "
                                f"body of loop {outer.loop_var.name}; fuse needs perfectly "
                                "nested loops listed outermost first", outer)
    for lp in loops:
        if lp.kind != "serial":
            raise ScheduleError("fuse", subject, f"loop {lp.loop_var.name} is {lp.kind}; only "
                                "serial loops can be fused", lp)
        if uses(lp.extent, vars_) or uses(lp.start, vars_):
            raise ScheduleError("fuse", subject, f"the range of loop {lp.loop_var.name} depends "
                                "on another loop being fused", loops[0])
    for realize in (p[-1] for p in realizes_under(loops[-1].body)):
        kinds = {iv.kind for iv, v in zip(realize.block.iter_vars, realize.iter_values)
                 if uses(v, vars_)}
        empty = next((b for b in _with_inner_blocks(realize) if init_may_not_run(b)), None)
        if kinds >= {"S", "R"} and empty is not None:
            whose = "whose" if empty is realize.block else f"where block \"{empty.name}\"'s"
            raise ScheduleError("fuse", subject, "the fused loop would drive both spatial and "
                                f"reduction iterators of block \"{realize.block.name}\", {whose} "
                                "reduction may be empty (a symbolic extent): where it is, its "
                                "init would never run; decompose_reduction first", loops[0])
    # Outside the loops (where they may not run): an extent that may be negative is an
    # empty loop there, and counts as 0 (two such make a positive product).
    outside = analyzer_for(loops_of(paths[0]), shape_vars(func))
    exts = [outside.simplify(lp.extent) for lp in loops]
    counts = [e if outside.can_prove(ge(e, 0)) else max_(e, 0) for e in exts]
    total = outside.simplify(reduce(lambda a, b: a * b, counts))
    ana = analyzer_for(loops_of(paths[0]) + loops)
    fused = Var("_".join(v.name for v in vars_) + "_fused")
    ana.bind(fused, Range(0, total))
    mapping = {}
    for k, lp in enumerate(loops):
        value = fused
        stride = reduce(lambda a, b: a * b, exts[k + 1:], IntImm(1))
        if k + 1 < len(loops):
            value = value // stride
        if k > 0:
            value = value % exts[k]
        value = ana.simplify(value)
        mapping[lp.loop_var] = value if _is_zero(lp.start) else lp.start + value
    body = _substitute(loops[-1].body, mapping, [fused])
    tails = any(key in (TAIL_KEY, FUSED_TAILS_KEY) for lp in loops for key, _ in lp.annotations)
    new = For(fused, IntImm(0), total, "serial", body,
              ((FUSED_TAILS_KEY, 1),) if tails else ())
    return with_body(func, replace(paths[0], new)), [fused]


def reorder(func, vars_):
    """Reorder loops of one nest. The listed loops must lie on one chain of perfectly
    nested loops; they take each other's places in the listed order and loops not listed
    stay where they are.

    Before::

        for i, j, k in T.grid(n, m, p):
            with T.block("C"):
                ...

    After ``sch.reorder(k, i)``::

        for k, j, i in T.grid(p, m, n):
            with T.block("C"):
                ...

    Illegal when a block's accesses differ between iterations in a way that makes their
    order matter (a block reading what another wrote in an earlier iteration).
    """
    paths = [find_loop(func.body, v) for v in vars_]
    subject = "loops " + ", ".join(v.name for v in vars_)
    if len(set(map(id, vars_))) != len(vars_):
        raise ScheduleError("reorder", subject, "a loop is listed twice", paths[0][-1])
    order = sorted(range(len(paths)), key=lambda k: len(paths[k]))
    top, bottom = paths[order[0]], paths[order[-1]]
    if not all(any(n is paths[k][-1] for n in bottom) for k in order):
        raise ScheduleError("reorder", subject, "the loops are not nested in one another "
                            "(they must be on one chain of loops)", top[-1])
    chain = list(bottom[len(top) - 1:])
    for outer, inner in zip(chain, chain[1:]):
        if not isinstance(outer, For) or outer.body is not inner:
            raise ScheduleError("reorder", subject, f"loop {chain[0].loop_var.name} does not "
                                f"contain loop {chain[-1].loop_var.name} alone: the loops in "
                                "between must be perfectly nested", chain[0])
    chain_vars = [lp.loop_var for lp in chain]
    for lp in chain:
        if uses(lp.extent, chain_vars) or uses(lp.start, chain_vars):
            raise ScheduleError("reorder", subject, f"the range of loop {lp.loop_var.name} "
                                "depends on another loop of the nest", chain[0])
    why = iteration_conflict(chain[0], loops_of(top), vars_, allow_reduce_reorder=True)
    if why:
        raise ScheduleError("reorder", subject, why + "; reordering could change the "
                            "results", chain[0])
    positions = [k for k, lp in enumerate(chain) if lp.loop_var in set(vars_)]
    placed = list(chain)
    by_var = {lp.loop_var: lp for lp in chain}
    for pos, v in zip(positions, vars_):
        placed[pos] = by_var[v]
    moved = [lp.loop_var for lp, was in zip(placed, chain) if lp is not was]
    for realize in (p[-1] for p in realizes_under(chain[-1].body)):
        mixed = _drives_init_order(realize, moved)
        if mixed:
            raise ScheduleError("reorder", subject, f"loop {mixed.name} drives both spatial "
                                f"and reduction iterators of block \"{realize.block.name}\", "
                                "whose init runs where its reduction iterators are 0: in "
                                "another order it would run after some of the updates "
                                "(decompose_reduction first)", chain[0])
    body = chain[-1].body
    for lp in reversed(placed):
        body = dataclasses.replace(lp, body=body)
    return with_body(func, replace(top, body)), None


def _with_inner_blocks(realize):
    """``realize``'s block and the blocks inside it: the init of one inside (blockize's
    inner block) runs at the first iteration of the outer block's reduction, as if it were
    the outer block's own."""
    return [realize.block] + [p[-1].block
                              for p in realizes_under(realize.block.body, nested=True)]


def _drives_init_order(realize, moved):
    """The loop of ``moved`` that drives both a spatial and a reduction iterator of
    ``realize``'s block, if the block or one inside it has an init (`_with_inner_blocks`;
    it runs first only in the loops' own order: a fused ``j * 5 + r`` split and reordered
    reaches ``r == 0`` of a row after other points of it), else None."""
    if all(b.init is None for b in _with_inner_blocks(realize)):
        return None
    for v in moved:
        kinds = {iv.kind for iv, value in zip(realize.block.iter_vars, realize.iter_values)
                 if uses(value, [v])}
        if kinds >= {"S", "R"}:
            return v
    return None


_KINDS = {"parallel": "parallel", "vectorize": "vectorized", "unroll": "unroll"}


def set_kind(func, var, prim):
    """Run a loop as ``parallel`` (on the thread pool), ``vectorized`` or ``unroll``.

    Before::

        for i in range(n):
            with T.block("B"): ...

    After ``sch.parallel(i)``::

        for i in T.parallel(n):
            with T.block("B"): ...

    Parallel and vectorized loops must not carry dependences: no block below may reduce
    over the loop, and blocks sharing a buffer must touch the same region in each
    iteration. Unrolling keeps the order and is always legal.
    """
    path = find_loop(func.body, var)
    loop = path[-1]
    subject = _loop_subject(loop, path)
    if prim != "unroll":
        why = concurrency_conflict(loop, loops_of(path))
        if why:
            raise ScheduleError(prim, subject, why, loop)
    new = dataclasses.replace(loop, kind=_KINDS[prim])
    return with_body(func, replace(path, new)), None


#: Steps that change only loop kinds or annotations: the accesses in each iteration of a
#: parallel or vectorized loop stay as they were.
KIND_STEPS = frozenset({"parallel", "vectorize", "unroll", "annotate"})


def check_concurrent_loops(prim, old, new):
    """A ScheduleError if a parallel or vectorized loop of ``new`` (``old`` after step
    ``prim``) that the step made anew -- not one of ``old``'s statements, nodes being
    shared where a step leaves them as they were -- no longer writes apart in its
    iterations (`concurrency_conflict`, the rule of `set_kind` and of the parser for
    ``T.parallel``): a split below a parallel loop, say, that the rule cannot follow. The
    module would then not read back from its script."""
    if prim in KIND_STEPS:
        return
    for path in _new_statements(old.body, new.body):
        loop = path[-1]
        if isinstance(loop, For) and loop.kind in ("parallel", "vectorized"):
            why = concurrency_conflict(loop, loops_of(path))
            if why:
                raise ScheduleError(prim, _loop_subject(loop, path), f"after this step, "
                                    f"{why}, and it is {loop.kind}", loop)


def _new_statements(old, new):
    """The paths of the statements of ``new`` not shared with ``old``, pre-order: a child
    that is its counterpart or one of its counterpart's children is left out with all below
    it (steps rebuild the nodes on the way to what they change and share the rest; a cache
    stage wraps the old body in its allocation)."""
    stack = [(old, (new,))]
    while stack:
        before, path = stack.pop()
        if path[-1] is before:
            continue
        yield path
        olds = stmt_children(before) if before is not None else ()
        kept = {id(before), *map(id, olds)}
        children = stmt_children(path[-1])
        for k in reversed(range(len(children))):
            if id(children[k]) not in kept:
                stack.append((olds[k] if k < len(olds) else None, path + (children[k],)))


def plain_value(value):
    """``value`` as the plain Python type it is an instance of (an annotation is printed and
    traced as such: ``np.float64(1.5)`` or an enum member would print as text that does not
    read back); anything else unchanged, for `annotate` to refuse."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def annotate(func, target, key, value):
    """Attach ``key: value`` to a block or loop (``value`` a plain int, float, str or bool;
    a key already present is replaced).

    Before::

        for i in range(n): ...

    After ``sch.annotate(i, "pragma_unroll", 4)``::

        for i in T.serial(n, annotations={"pragma_unroll": 4}): ...
    """
    what, ident = target
    subject = f"block \"{ident}\"" if what == "block" else f"loop {ident.name}"
    if not isinstance(key, str) or not isinstance(value, (int, float, str, bool)):
        raise ScheduleError("annotate", subject, "the key must be a str and the value a plain "
                            f"int, float, str or bool, got {key!r}: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ScheduleError("annotate", subject, f"the value of {key!r} is {value!r}; a "
                            "float value must be finite (the script has no literal for it)")
    if what == "block":
        path = find_block(func.body, ident)
        node = path[-1].block if hasattr(path[-1], "block") else path[-1]
    else:
        path = find_loop(func.body, ident)
        node = path[-1]
    annotations = tuple((k, v) for k, v in node.annotations if k != key) + ((key, value),)
    new = dataclasses.replace(node, annotations=annotations)
    if what == "block" and hasattr(path[-1], "block"):
        new = dataclasses.replace(path[-1], block=new)
    return with_body(func, replace(path, new)), None
