"""Compute-location primitives: compute_at, reverse_compute_at, compute_inline,
reverse_compute_inline. Each moves or merges whole blocks after checking the producer /
consumer dependences with `pyir.arith`."""

import dataclasses
import itertools
import math

from pyir.arith import detect_linear, non_decreasing, simplify, vars_of
from pyir.codegen.abi import evaluate
from pyir.ir import (Binary, Block, BlockRealize, BufferLoad, BufferStore, Call, For, IntImm, Range,
                     SeqStmt, Var, and_, ge, is_true, le, lt, max_, min_, seq, substitute, walk)
from pyir.ir.ops import is_one
from pyir.ir.stmt import rewrite_stmts
from pyir.runtime.exprtext import expr_text
from pyir.transform.common import shape_vars
from pyir.transform.dependence import (analyzer_for, narrow_loops,
                                       narrowed_by_predicate, realizes_under,
                                       reduce_loop_vars, region_in_loops, relax_range, uses)

from .analysis import (complete_binding, complete_where_narrowed, extra_predicate, maps_onto,
                       maps_onto_buffer, where_over_iterators)
from .common import (check_no_interference, drop_buffer, index_vars, inline_path, item_index,
                     kernel_taking, only_block, readers, realize_path, refresh_reads,
                     replace_loads, same_scope, writers)
from .errors import ScheduleError
from .tree import find_block, find_loop, loops_of, replace, top_level, with_body


def _loop_checks(prim, func, name, loop_var):
    """The checks compute_at and reverse_compute_at share, and the block's path, the loop's,
    the items of their scope, the indices of theirs there, the subject of errors and the
    block's ``T.where`` beyond split tails over its iterators (`where_over_iterators`),
    which the block keeps in its new nest: its loops bind the iterators one-to-one over
    their domains, so it runs at the points of its domain where those hold, each once."""
    bpath = realize_path(func, name, prim)
    lpath = find_loop(func.body, loop_var)
    subject = f"block \"{name}\" at loop {loop_var.name}"
    if any(n is lpath[-1] for n in bpath):
        raise ScheduleError(prim, subject, "the block is already inside this loop", lpath[-1])
    if not same_scope(bpath, lpath):
        raise ScheduleError(prim, subject, "the block and the loop are in different enclosing "
                            "blocks", lpath[-1])
    items, ib = item_index(bpath)
    _, il = item_index(lpath)
    if ib == il:
        raise ScheduleError(prim, subject, "the block and the loop share an outer loop; move the "
                            "block to a loop of another loop nest", items[ib])
    only_block(prim, subject, items[ib], bpath[-1])
    loops = loops_of(bpath)
    ana = analyzer_for(loops)
    extra = extra_predicate(bpath[-1], ana)
    where = where_over_iterators(bpath[-1], loops, extra, ana) if extra else []
    if where is None:
        raise ScheduleError(prim, subject, f"the block runs only where "
                            f"{expr_text(extra[0])} (T.where); moving it would compute the "
                            "other points too", items[ib])
    if not (complete_where_narrowed(bpath[-1], loops, extra, shape_vars(func)) if extra
            else complete_binding(bpath[-1], loops, ana)):
        raise ScheduleError(prim, subject, "the block's loops do not bind its iterators "
                            "one-to-one over their domains (affine splits of loops starting "
                            "at 0)", items[ib])
    return bpath, lpath, items, ib, il, subject, where


def _union(ranges_list, ana):
    """Per dimension, the smallest Range covering all of ``ranges_list``."""
    out = []
    for dim in zip(*ranges_list):
        lo, hi = dim[0].start, ana.simplify(dim[0].start + dim[0].extent)
        for r in dim[1:]:
            end = ana.simplify(r.start + r.extent)
            if not ana.can_prove_equal(r.start, lo):
                lo = ana.simplify(min_(lo, r.start))
            if not ana.can_prove_equal(end, hi):
                hi = ana.simplify(max_(hi, end))
        out.append((lo, ana.simplify(hi - lo)))
    return out


def _region_at(realizes_rel, outer, buffer, want_write, ana, shapes=(), accesses=None):
    """Regions of ``buffer`` read (or written) by blocks below a loop during one iteration of
    it: [(start, extent)] per dimension, or None if some access cannot be bounded. ``outer``
    are the loops down to that loop, ``ana`` knows their ranges (`analyzer_for`), ``shapes``
    are the function's shape variables. Each access is appended to the list ``accesses``
    if given, as (block realize, its loops below, an analyzer knowing all its loops, the
    region in terms of them)."""
    ranges = []
    for rel in realizes_rel:
        realize = rel[-1]
        inner = [n for n in rel if isinstance(n, For)]
        inner_ana = analyzer_for(outer + inner, shapes)
        inner = narrow_loops(inner_ana, inner, realize.predicate, outer)
        regions = realize.block.writes if want_write else realize.block.reads
        for r in regions:
            if r.buffer is not buffer:
                continue
            in_loops = region_in_loops(realize, r).region
            relaxed = [relax_range(x, inner_ana, [lp.loop_var for lp in inner])
                       for x in in_loops]
            if any(x is None for x in relaxed):
                return None
            ranges.append(relaxed)
            if accesses is not None:
                accesses.append((realize, inner, inner_ana, in_loops))
    return _union(ranges, ana)


def _new_nest(realize, ranges, ana, loop_var_names, where=()):
    """Fresh loops binding ``realize``'s iterators: an iterator in ``ranges`` runs over its
    (start, extent) there, any other over its whole domain; a guard keeps each inside its
    domain, and the conditions ``where`` (over the iterators, `_loop_checks`) hold, unless
    that is proven (under the loop ranges ``ana`` knows, `analyzer_for` the loops the nest
    goes into; the new loops are bound in a scope)."""
    block = realize.block
    new_vars, values, extents = [], [], []
    for k, iv in enumerate(block.iter_vars):
        ax = Var(f"ax{k}" if loop_var_names is None else loop_var_names[k])
        start, extent = ranges.get(iv.var, (IntImm(0), iv.extent))
        new_vars.append(ax)
        extents.append(extent)
        values.append(start + ax if not _zero(start) else ax)
    with ana.scope():
        for ax, e in zip(new_vars, extents):
            ana.bind(ax, Range(0, e))
        values = [ana.simplify(v) for v in values]
        guards = [cond for iv, v in zip(block.iter_vars, values)
                  for cond in (ge(v, 0), lt(v, iv.extent)) if not ana.can_prove(cond)]
        at = {iv.var: v for iv, v in zip(block.iter_vars, values)}
        guards += [c for c in (ana.simplify(substitute(w, at)) for w in where)
                   if not ana.can_prove(c)]
        extents = [ana.simplify(e) for e in extents]
    pred = None
    for g in guards:
        pred = g if pred is None else and_(pred, g)
    body = BlockRealize(tuple(values), pred if pred is not None else IntImm(1, "bool"), block)
    for ax, e in reversed(list(zip(new_vars, extents))):
        body = For(ax, IntImm(0), e, "serial", body)
    return body


def _write_forms(prim, subject, block, ir):
    """How the indices of the one buffer ``block`` writes hold its iterators: ``{v: (d,)}``
    for dimension ``d`` indexed by ``v``, ``{v: (a, b, c)}`` for ``v // c`` in dimension
    ``a`` and ``v % c`` in ``b`` (a layout from ``transform_layout``: ``B_global[vj // 16,
    vk, vj % 16]``); a dimension may also be a constant (``M[vi, 0]``, a row maximum kept
    as a column). Any other index is a ScheduleError."""
    region = block.writes[0]
    ivars = {iv.var for iv in block.iter_vars}
    whole, parts = {}, {}
    for d, rng in enumerate(region.region):
        x = rng.start
        if not is_one(rng.extent):
            x = None
        elif isinstance(x, IntImm):
            continue
        elif isinstance(x, Var) and x in ivars and x not in whole:
            whole[x] = (d,)
            continue
        elif isinstance(x, Binary) and x.op in ("floordiv", "floormod") and x.a in ivars \
                and isinstance(x.b, IntImm) and x.b.value > 0:
            kind = parts.setdefault((x.a, x.b.value), {})
            if x.op not in kind:
                kind[x.op] = d
                continue
        raise ScheduleError(prim, subject, f"the written buffer {region.buffer.name} must be "
                            "indexed by distinct block iterators, constants, or v // c and "
                            f"v % c of one (like {region.buffer.name}[vi, vj], "
                            f"{region.buffer.name}[vi, 0] or "
                            f"{region.buffer.name}[vj // 16, vi, vj % 16])", ir)
    for (v, c), kind in parts.items():
        if v in whole or len(kind) != 2 or sum(u is v for u, _ in parts) != 1:
            raise ScheduleError(prim, subject, f"iterator {v.name} must index "
                                f"{region.buffer.name} once, alone or as {v.name} // c with "
                                f"{v.name} % c", ir)
        whole[v] = (kind["floordiv"], kind["floormod"], c)
    return whole


def _iterator_ranges(forms, region, ana):
    """The (start, extent) of each iterator in ``forms`` (`_write_forms`) that produces the
    ``region`` of the written buffer: for ``v // c`` and ``v % c`` over ``[s_a, s_a + x_a)``
    and ``[s_b, s_b + x_b)``, ``[s_a * c + s_b, (s_a + x_a - 1) * c + s_b + x_b)``, exactly
    that region when ``x_a`` is 1 or the ``% c`` side is whole (a few points more, computed
    twice, otherwise)."""
    out = {}
    for v, form in forms.items():
        if len(form) == 1:
            out[v] = region[form[0]]
            continue
        (sa, xa), (sb, xb), c = region[form[0]], region[form[1]], form[2]
        start = ana.simplify(sa * c + sb)
        out[v] = (start, ana.simplify((sa + xa - 1) * c + sb + xb - start))
    return out


def _zero(e):
    return isinstance(e, IntImm) and e.value == 0


def _insert(func, body, loop_var, nest, at_end):
    """``body`` with ``nest`` first (or, ``at_end``, last) in the body of loop ``loop_var``."""
    lpath = find_loop(body, loop_var)
    loop = lpath[-1]
    items = list(loop.body.stmts) if isinstance(loop.body, SeqStmt) else [loop.body]
    new_loop = dataclasses.replace(loop, body=seq(*items, nest) if at_end else seq(nest, *items))
    return with_body(func, replace(lpath, new_loop))


def _once_per_point(prim, subject, buf, region, outer, ana, why, harm):
    """The ``region`` of ``buf`` a block computes in one iteration of the loops ``outer``
    (the last of them the new place) where it must not run twice for a point (``why``: it
    updates ``buf`` in place, or a block under the loop does; a point computed again would
    be ``harm``). Consecutive iterations of each loop must need disjoint elements, but where
    those of the last loop share some (rows of a fused loop split in tiles), it computes in
    each iteration only those no earlier one needed (`_first_needed`), if its iterations run
    one after another."""
    for lp in outer:
        step = {lp.loop_var: lp.loop_var + 1}
        if is_one(lp.extent) or any(ana.can_prove(ge(substitute(start, step), start + extent))
                                    for start, extent in region):
            continue
        cut = _first_needed(region, lp, ana) if lp is outer[-1] and lp.kind in (
            "serial", "unroll") else None
        if cut is None:
            raise ScheduleError(prim, subject, f"{why}, and consecutive iterations of loop "
                                f"{lp.loop_var.name} need the same elements of {buf.name}: "
                                f"{harm}", lp)
        region = cut
    return region


def _first_needed(region, loop, ana):
    """``region`` ((start, extent) per dimension, in terms of ``loop``) cut to the elements
    no earlier iteration of ``loop`` needs, where that is a range: in one dimension the
    region's start and end never decrease from an iteration to the next, it does not move in
    the others, and the first iteration needs nothing before its start. Then the elements
    from the end of the previous iteration's region on are new, and each element is computed
    once, no later than the first iteration needing it. None otherwise."""
    var = loop.loop_var
    moving = [d for d, (start, extent) in enumerate(region) if uses(start, [var])
              or uses(extent, [var])]
    if len(moving) != 1:
        return None
    d = moving[0]
    start, extent = region[d]
    end = ana.simplify(start + extent)
    if not (non_decreasing(start, var, ana) and non_decreasing(end, var, ana)):
        return None
    before = ana.simplify(substitute(end, {var: var - 1}))
    first = {var: loop.start}
    if not ana.can_prove(le(substitute(before, first), substitute(start, first))):
        return None
    new = ana.simplify(max_(start, before))
    return [*region[:d], (new, ana.simplify(end - new)), *region[d + 1:]]


def compute_at(func, name, loop_var):
    """Move a producer block under a loop of its consumers, computing in each iteration only
    the region they read in that iteration.

    Before::

        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    After ``sch.compute_at(sch.get_block("B"), i)`` (the i of block C)::

        for i in range(n):
            for ax0, ax1 in T.grid(1, m):
                with T.block("B"):
                    vi = T.axis.spatial(n, i + ax0)
                    vj = T.axis.spatial(m, ax1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j in range(m):
                with T.block("C"): ...

    Legal when the block writes one intermediate buffer (not a parameter) with indices that
    are its iterators (or ``v // c`` and ``v % c`` of one: a layout from ``transform_layout``;
    or constants: ``M[vi, 0]``),
    its loops bind its iterators one-to-one and its ``T.where`` beyond the guards of split
    tails is affine in them (it moves with the block, `_loop_checks`), every reader of the
    buffer is under the loop, and nothing between the old and the new place (nor beside the
    loop in its nest, nor under the loop: those blocks ran after it) touches what the block
    reads or writes. A
    block updating its buffer in place (a reduction after decompose_reduction) must need
    disjoint elements in consecutive iterations of each loop around the new place, or, in
    those of the loop it moves to, a range of one dimension whose start and end never
    decrease: each iteration then updates the elements no earlier one needed.
    """
    prim = "compute_at"
    bpath, lpath, items, ib, il, subject, where = _loop_checks(prim, func, name, loop_var)
    realize, loop = bpath[-1], lpath[-1]
    block = realize.block
    if ib > il:
        raise ScheduleError(prim, subject, "the block runs after this loop; compute_at moves a "
                            "producer into a loop of its consumers (see reverse_compute_at)",
                            items[ib])
    if len(block.writes) != 1:
        raise ScheduleError(prim, subject, "the block must write exactly one buffer",
                            items[ib])
    buf = block.writes[0].buffer
    if buf in func.params:
        raise ScheduleError(prim, subject, f"the block writes {buf.name}, a parameter of "
                            f"{func.name}; only blocks producing an intermediate buffer can "
                            "be computed at a loop", items[ib])
    forms = _write_forms(prim, subject, block, items[ib])
    if {iv.var for iv in block.iter_vars if iv.kind == "S"} - set(forms):
        raise ScheduleError(prim, subject, f"a spatial iterator of the block does not index "
                            f"{buf.name}", items[ib])
    users = [r for s in items[ib + 1:] for r in readers(s, buf)]
    inside = [p for p in realizes_under(loop.body) if any(
        r.buffer is buf for r in p[-1].block.reads)]
    inside_ids = {id(r) for p in realizes_under(loop.body, nested=True) for r in p}
    outside = [r.block.name for r in users if id(r) not in inside_ids]
    if not inside:
        raise ScheduleError(prim, subject, f"no block under loop {loop_var.name} reads "
                            f"{buf.name}", loop)
    if outside:
        raise ScheduleError(prim, subject, f"block(s) {', '.join(repr(o) for o in outside)} "
                            f"outside loop {loop_var.name} also read {buf.name}", loop)
    under = [p[-1] for p in realizes_under(loop.body, nested=True)]
    check_no_interference(prim, subject, [*items[ib + 1:il], *_beside((items[il],), *under)],
                          [r.buffer for r in block.reads], [buf])
    check_no_interference(prim, subject, under, [r.buffer for r in block.reads], [])
    outer = loops_of(lpath) + [loop]
    shapes = shape_vars(func)
    ana = analyzer_for(outer, shapes)
    region = _region_at(inside, outer, buf, want_write=False, ana=ana, shapes=shapes)
    if region is None:
        raise ScheduleError(prim, subject, f"cannot bound the region of {buf.name} read in one "
                            f"iteration of loop {loop_var.name}", loop)
    updaters = [r.block.name for r in under if any(w.buffer is buf for w in r.block.writes)]
    if block.init is None and any(r.buffer is buf for r in block.reads):
        region = _once_per_point(prim, subject, buf, region, outer, ana,
                                 f"the block updates {buf.name} in place (it reads it and has "
                                 "no init)", "they would be updated again (compute_at before "
                                 "decompose_reduction)")
    elif updaters:
        region = _once_per_point(prim, subject, buf, region, outer, ana,
                                 f"block \"{updaters[0]}\" under loop {loop_var.name} updates "
                                 f"{buf.name} in place", "computed again, they would overwrite "
                                 "its updates")
    nest = _new_nest(realize, _iterator_ranges(forms, region, ana), ana, None, where)
    body = replace(bpath[:top_level(bpath) + 1], None)
    return _insert(func, body, loop_var, nest, at_end=False), None


def reverse_compute_at(func, name, loop_var):
    """Move a consumer block under a loop of its producers, consuming in each iteration the
    region they produce in that iteration.

    Before::

        for i, j in T.grid(n, m):
            with T.block("B"): ...   # writes B[vi, vj]
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    After ``sch.reverse_compute_at(sch.get_block("C"), i)`` (the i of block B)::

        for i in range(n):
            for j in range(m):
                with T.block("B"): ...
            for ax0, ax1 in T.grid(1, m):
                with T.block("C"):
                    vi = T.axis.spatial(n, i + ax0)
                    vj = T.axis.spatial(m, ax1)
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    Legal when the block reads what blocks under the loop produce with indices that are its
    iterators times a constant plus constants, or constants the loop produces in each
    iteration (``B[vi * 2]`` and ``B[vi * 2 + 1]``, ``M[vi, 0]``: each
    iteration consumes the points whose reads lie in what it produced, and none may straddle
    two iterations), those producers finish each element within one iteration of the loop
    and, in each iteration, every element of the region they write there (not a stride of
    it) and, over all iterations, the block's whole domain -- or, for an elementwise block
    reading the one buffer that one block under the loop writes a point at a time, each
    element once (a fused loop split in tiles), the block then computing those points as
    they were written (`_point_by_point`) -- its ``T.where`` beyond the guards of split
    tails moves with it (`_loop_checks`), no block under the loop accesses what it writes,
    and nothing between the loop and the block (nor beside the loop in its nest) touches
    what the block reads or writes.
    """
    prim = "reverse_compute_at"
    bpath, lpath, items, ib, il, subject, where = _loop_checks(prim, func, name, loop_var)
    realize, loop = bpath[-1], lpath[-1]
    block = realize.block
    if ib < il:
        raise ScheduleError(prim, subject, "the block runs before this loop; reverse_compute_at "
                            "moves a consumer into a loop of its producers (see compute_at)",
                            items[ib])
    produced = [r for r in block.reads if writers(loop.body, r.buffer)]
    if not produced:
        raise ScheduleError(prim, subject, f"no block under loop {loop_var.name} writes a "
                            "buffer this block reads", loop)
    outer = loops_of(lpath) + [loop]
    outer_vars = {lp.loop_var for lp in outer}
    ana = analyzer_for(outer)
    region_of_iter, nest = {}, None
    for r in produced:
        buf = r.buffer
        for k, s in enumerate(items):
            if k != il and writers(s, buf):
                raise ScheduleError(prim, subject, f"{buf.name} is also written outside loop "
                                    f"{loop_var.name}", s)
        for w in writers(loop.body, buf):
            if reduce_loop_vars(w) & outer_vars:
                raise ScheduleError(prim, subject, f"block \"{w.block.name}\" finishes "
                                    f"{buf.name} only after all iterations of loop "
                                    f"{loop_var.name} (it reduces over it)", loop)
        forms = _read_forms(prim, subject, r, block.iter_vars, ana)
        written = []
        region = _region_at(realizes_under(loop.body), outer, buf, want_write=True, ana=ana,
                            shapes=shape_vars(func), accesses=written)
        if region is None:
            raise ScheduleError(prim, subject, f"cannot bound the region of {buf.name} written "
                                f"in one iteration of loop {loop_var.name}", loop)
        if not _writes_whole(written, region, outer, buf):
            top = next(k for k, n in enumerate(lpath) if n is items[il])
            nest = None if len(produced) > 1 else _point_by_point(
                realize, buf, forms, written, [n for n in lpath[top:] if isinstance(n, For)],
                where)
            if nest is None:
                raise ScheduleError(prim, subject, f"the blocks under loop {loop_var.name} "
                                    f"write {buf.name} within {_region_text(region, ana)} in "
                                    "one iteration, but not all of it (a stride, or a T.where):"
                                    " moved there, the block would read what the iteration did "
                                    "not produce", loop)
            continue
        for d, form in enumerate(forms):
            if form[0] is None:
                _constant_produced(prim, subject, buf, d, form, region[d], loop, ana)
                continue
            v, got = form[0], _consumed_range(prim, subject, buf, d, form, region[d], loop, ana)
            if v in region_of_iter:
                a, b = region_of_iter[v], got
                if not (ana.can_prove_equal(a[0], b[0]) and ana.can_prove_equal(a[1], b[1])):
                    raise ScheduleError(prim, subject, "the buffers the block reads are "
                                        "produced over different regions per iteration", loop)
            region_of_iter[v] = got
    if nest is None:
        _covers_domain(prim, subject, block, region_of_iter, lpath, items[il], ana)
    for w in block.writes:
        if readers(loop.body, w.buffer) or writers(loop.body, w.buffer):
            raise ScheduleError(prim, subject, f"blocks under loop {loop_var.name} also access "
                                f"{w.buffer.name}, which the block writes: moved into the loop, "
                                "they would see its writes of earlier iterations", loop)
    under = [p[-1] for p in realizes_under(loop.body, nested=True)]
    check_no_interference(prim, subject, [*_beside((items[il],), realize, *under),
                                          *items[il + 1:ib]],
                          [r.buffer for r in block.reads], [w.buffer for w in block.writes])
    nest = nest or _new_nest(realize, region_of_iter, ana, None, where)
    body = replace(bpath[:top_level(bpath) + 1], None)
    return _insert(func, body, loop_var, nest, at_end=True), None


def _point_by_point(realize, buf, forms, written, moving, where):
    """The consumer ``realize``'s nest computing, in one iteration of the loop, the points of
    ``buf`` that the one block writing it there (``written``, `_region_at`'s accesses) writes
    one at a time, in its order, each once over the loops ``moving`` (those of the nest
    down to the loop) and its own: its loops below the loop again, its predicate and the
    consumer's conditions ``where`` (`_loop_checks`), and the consumer's iterators bound to
    its indices. None unless the consumer is elementwise over ``buf`` (its iterators,
    spatial, index ``buf`` one per dimension over its extents, ``forms`` of `_read_forms`)
    and that block's indices are one element of ``buf`` for each offset in ``buf``'s
    row-major order, an offset they map those loops one-to-one onto (`maps_onto_buffer`:
    a fused loop split in tiles writes ``B[(f_0 * 4 + f_1) // m, (f_0 * 4 + f_1) % m]``,
    rows the region relaxed over ``f_1`` only bounds)."""
    block = realize.block
    if len(written) != 1 or block.init is not None or len(forms) != len(block.iter_vars) \
            or any(iv.kind != "S" for iv in block.iter_vars) \
            or any(form[1:] != (1, 0, 1) for form in forms):
        return None
    writer, inner, ana, ranges = written[0]
    extent = {iv.var: iv.extent for iv in block.iter_vars}
    if not all(is_one(x.extent) for x in ranges) or not all(
            ana.can_prove_equal(extent[form[0]], e) for form, e in zip(forms, buf.shape)):
        return None
    indices = [ana.simplify(x.start) for x in ranges]
    if not maps_onto_buffer(indices, buf.shape, moving + inner, ana, writer.predicate):
        return None
    fresh = {lp.loop_var: Var(f"ax{k}") for k, lp in enumerate(inner)}
    value = {form[0]: substitute(i, fresh) for form, i in zip(forms, indices)}
    pred = substitute(writer.predicate, fresh)
    for w in where:
        w = substitute(w, value)
        pred = w if is_true(pred) else and_(pred, w)
    nest = BlockRealize(tuple(value[iv.var] for iv in block.iter_vars), pred, block)
    for lp in reversed(inner):
        nest = For(fresh[lp.loop_var], substitute(lp.start, fresh), substitute(lp.extent, fresh),
                   "serial", nest)
    return nest


def _writes_whole(writes, region, outer, buf):
    """Whether each of ``writes`` (`_region_at`'s accesses) writes every element of
    ``region`` (per dimension (start, extent)) in one iteration of the loop, each once: its
    indices, less the region's start, map the loops below that they use one-to-one onto
    the region (``B[i_0 * 4 + i_1]`` for ``i_1 < 4`` does, ``B[i_0 + i_1 * 4]`` spans 13
    elements and writes 4), and its block has no ``T.where`` but split tails and bounds
    on the loops ``outer`` (down to the loop) under which it writes only outside ``buf``
    (`_skips_outside`)."""
    for realize, inner, ana, ranges in writes:
        if not all(is_one(r.extent) for r in ranges):
            return False
        extra = extra_predicate(realize, ana)
        if extra and not _skips_outside(extra, outer, ana, ranges, buf):
            return False
        offsets = [ana.simplify(r.start - start) for r, (start, _) in zip(ranges, region)]
        used = set().union(*(vars_of(o) for o in offsets))
        loops = [lp for lp in inner if lp.loop_var in used]
        if len(loops) != len(used) or not maps_onto(
                offsets, [extent for _, extent in region], loops, ana):
            return False
    return True


def _skips_outside(conds, outer, ana, ranges, buf):
    """Whether each of ``conds`` bounds one of the loops ``outer`` alone (``T.where(i >=
    2)``), and in the iterations it leaves out, the point ``ranges`` (one per dimension, in
    terms of the loops ``ana`` knows) lies outside ``buf``: an iteration that writes nothing
    then has nothing a consumer reads (``B[i - 2]``: ``i < 2`` only reaches below 0)."""
    for cond in conds:
        narrowed, left = narrowed_by_predicate(outer, cond, ana)
        if left:
            return False
        for lp, cut in zip(outer, narrowed):
            if cut is lp:
                continue
            stop, cut_stop = lp.start + lp.extent, cut.start + cut.extent
            for lo, hi in ((lp.start, cut.start), (cut_stop, stop)):   # what it leaves out
                if ana.can_prove(le(hi, lo)):
                    continue
                with ana.scope():
                    ana.bind(lp.loop_var, Range(lo, ana.simplify(hi - lo)))
                    if not any(ana.can_prove(lt(r.start, 0)) or ana.can_prove(ge(r.start, e))
                               for r, e in zip(ranges, buf.shape)):
                        return False
    return True


def _region_text(region, ana):
    """``region`` ((start, extent) per dimension) as ``[a:b, c:d]``."""
    return "[" + ", ".join(f"{expr_text(start)}:{expr_text(ana.simplify(start + extent))}"
                           for start, extent in region) + "]"


def _read_forms(prim, subject, region, iter_vars, ana):
    """How the consumed ``region`` holds the block's iterators: per dimension ``(v, a, c,
    w)``, the ``w`` elements from ``a * v + c`` (``a`` > 0, ``c`` and ``w`` constants: rows
    ``2 * vi`` and ``2 * vi + 1`` are ``(vi, 2, 0, 2)``), each dimension its own iterator,
    or ``(None, 0, c, w)`` for the constant elements ``[c, c + w)`` (``M[vi, 0]``). Any
    other region is a ScheduleError."""
    out, ivars = [], {iv.var for iv in iter_vars}
    for rng in region.region:
        if rng.start in ivars and is_one(rng.extent) and all(rng.start is not o[0] for o in out):
            out.append((rng.start, 1, 0, 1))   # the iterator itself: the common case
            continue
        start, w = ana.simplify(rng.start), ana.simplify(rng.extent)
        if isinstance(start, IntImm) and isinstance(w, IntImm) and w.value > 0:
            out.append((None, 0, start.value, w.value))
            continue
        found = next(((v, lin) for v in vars_of(start) & ivars
                      if (lin := detect_linear(start, v, ana)) is not None), None)
        if not (found and len(vars_of(start)) == 1 and isinstance(found[1][0], IntImm)
                and found[1][0].value > 0 and isinstance(found[1][1], IntImm)
                and isinstance(w, IntImm) and w.value > 0
                and all(found[0] is not o[0] for o in out)):
            raise ScheduleError(prim, subject, f"the consumed buffer {region.buffer.name} must "
                                "be indexed by distinct block iterators, one per dimension, "
                                "each times a constant plus constants, or by constants (like "
                                f"{region.buffer.name}[vi, vj], {region.buffer.name}"
                                f"[vi * 2 + 1, vj] or {region.buffer.name}[vi, 0])")
        (v, (a, c)) = found
        out.append((v, a.value, c.value, w.value))
    return out


def _consumed_range(prim, subject, buf, d, form, produced, loop, ana):
    """The (start, extent) of iterator ``v`` of ``form`` (`_read_forms`: the block reads
    ``w`` elements from ``a * v + c`` in dimension ``d`` of ``buf``) whose reads lie in the
    ``produced`` (start, extent) of that dimension in one iteration of ``loop``. Where a
    point's reads straddle what two iterations produce (``B[vi]`` and ``B[vi + 1]`` of rows
    produced one at a time), no iteration would compute it: a ScheduleError."""
    v, a, c, w = form
    start, extent = produced
    if (a, c, w) == (1, 0, 1):
        return produced
    # Where what an iteration produces starts, within the a-wide cells from c, must not cut
    # a point's w reads (one read is never cut).
    offset = ana.simplify(Binary("floormod", start - c, IntImm(a)))
    if not (w <= a and (w == 1 or ana.can_prove(Binary("or", Binary("eq", offset, IntImm(0)),
                                                       ge(offset, IntImm(w)))))):
        raise ScheduleError(prim, subject, f"the block reads {w} element{'s' * (w > 1)} of "
                            f"{buf.name} from {expr_text(ana.simplify(v * a + c))} in "
                            f"dimension {d}, and loop "
                            f"{loop.loop_var.name} produces [{expr_text(start)}, "
                            f"{expr_text(ana.simplify(start + extent))}) of it per iteration: "
                            "the reads of some points would straddle two iterations", loop)
    first = ana.simplify(Binary("floordiv", start - c + (a - 1), IntImm(a)))
    end = ana.simplify(Binary("floordiv", start + extent - c - w, IntImm(a)) + 1)
    return first, ana.simplify(max_(end - first, IntImm(0)))


def _constant_produced(prim, subject, buf, d, form, produced, loop, ana):
    """Whether the constant elements ``[c, c + w)`` the block reads in dimension ``d`` of
    ``buf`` (``form`` of `_read_forms`) lie in the ``produced`` (start, extent) of that
    dimension in every iteration of ``loop``; a ScheduleError if not."""
    _, _, c, w = form
    start, extent = produced
    if not (ana.can_prove(le(start, c)) and ana.can_prove(le(c + w, start + extent))):
        raise ScheduleError(prim, subject, f"the block reads [{c}, {c + w}) of {buf.name} in "
                            f"dimension {d}, and loop {loop.loop_var.name} produces "
                            f"[{expr_text(start)}, {expr_text(ana.simplify(start + extent))}) "
                            "of it per iteration: moved there, the block would read what the "
                            "iteration did not produce", loop)


def _covers_domain(prim, subject, block, region_of_iter, lpath, item, ana):
    """Over all iterations of the loops of ``lpath`` inside ``item`` (the nest the consumer
    moves into), the produced region of each iterator must cover its domain: the consumer
    then runs only there. ``ana`` knows the ranges of the loops down to the last of
    ``lpath``."""
    top = next(k for k, n in enumerate(lpath) if n is item)
    moving = [n for n in lpath[top:] if isinstance(n, For)]
    covered = _covered_point_by_point(block, region_of_iter, moving, ana)
    for iv in block.iter_vars:
        if iv.var not in region_of_iter or iv.var in covered:
            continue
        start, extent = region_of_iter[iv.var]
        whole = relax_range(Range(start, extent), ana, [lp.loop_var for lp in moving])
        end = None if whole is None else ana.simplify(whole.start + whole.extent)
        if whole is None or not (ana.can_prove(le(whole.start, 0))
                                 and ana.can_prove(ge(end, iv.extent))):
            got = "an unknown part" if whole is None else (
                f"[{expr_text(whole.start)}, {expr_text(end)})")
            raise ScheduleError(prim, subject, f"the loop produces {got} of what iterator "
                                f"{iv.var.name} reads, [0, {expr_text(iv.extent)}): moved there, "
                                "the block would skip the rest", lpath[-1])
        if not _without_gaps(start, extent, moving, ana):
            raise ScheduleError(prim, subject, f"the loop produces parts of what iterator "
                                f"{iv.var.name} reads, [0, {expr_text(iv.extent)}), that may "
                                f"leave gaps ([{expr_text(start)}, {expr_text(start)} + "
                                f"{expr_text(extent)}) per iteration): moved there, the block "
                                "would skip them", lpath[-1])


#: The most iterations of the loops a consumer moves into for which `_without_gaps` counts
#: the points they produce one by one (a region whose start is not linear in them).
MAX_COUNTED_ITERATIONS = 4096


def _without_gaps(start, extent, loops, ana):
    """Whether the regions ``[start, start + extent)`` of all iterations of ``loops`` leave
    no gap in the interval they span (`_covers_domain` proved that interval covers the
    domain). A start linear in the loops with constant steps does when each step is at
    most the span the smaller steps reach (``i_0 * 7`` with ``[0, 7)`` per tile); one that
    is not linear (``i * i % 8``, three points of eight) is counted point by point when the
    loops are few constant iterations, and otherwise not known to."""
    rest, steps = start, []
    for lp in loops:
        lin = detect_linear(rest, lp.loop_var, ana)
        if lin is None or not isinstance(lin[0], IntImm):
            return _counted_without_gaps(start, extent, loops)
        coeff, rest = lin
        if coeff.value:
            steps.append((abs(coeff.value), lp.extent))
    span = extent
    for step, count in sorted(steps, key=lambda s: s[0]):
        if not ana.can_prove(le(IntImm(step), span)):
            return False
        span = ana.simplify(span + step * (count - 1))
    return True


def _counted_without_gaps(start, extent, loops):
    """`_without_gaps` by counting: every point between the least and the most produced is
    produced, when ``start`` and ``extent`` depend on ``loops`` alone, whose extents are
    constants of at most `MAX_COUNTED_ITERATIONS` iterations in all."""
    if not all(isinstance(lp.extent, IntImm) and isinstance(lp.start, IntImm) for lp in loops):
        return False
    if not vars_of(start) | vars_of(extent) <= {lp.loop_var for lp in loops} or any(
            isinstance(n, (BufferLoad, Call)) for e in (start, extent) for n in walk(e)):
        return False
    if math.prod(lp.extent.value for lp in loops) > MAX_COUNTED_ITERATIONS:
        return False
    points = set()
    for values in itertools.product(*[range(lp.start.value, lp.start.value + lp.extent.value)
                                      for lp in loops]):
        env = dict(zip((lp.loop_var for lp in loops), values))
        first = evaluate(start, env)
        points.update(range(first, first + evaluate(extent, env)))
    return not points or len(points) == max(points) - min(points) + 1


def _covered_point_by_point(block, region_of_iter, loops, ana):
    """The iterators produced one point per iteration that ``loops`` map one-to-one onto
    their domains (`maps_onto`): a fused loop's ``f // n`` and ``f % n``, which relaxing one
    at a time cannot bound."""
    points = [iv for iv in block.iter_vars
              if iv.var in region_of_iter and is_one(region_of_iter[iv.var][1])]
    if points and maps_onto([region_of_iter[iv.var][0] for iv in points],
                            [iv.extent for iv in points], loops, ana):
        return {iv.var for iv in points}
    return set()


def _elementwise(prim, subject, realize, ir):
    block = realize.block
    if block.init is not None or any(iv.kind == "R" for iv in block.iter_vars):
        raise ScheduleError(prim, subject, "the block is a reduction; only elementwise blocks "
                            "(one store, spatial iterators) can be inlined", ir)
    if not isinstance(block.body, BufferStore) or len(block.writes) != 1:
        raise ScheduleError(prim, subject, "the block's body must be a single buffer store",
                            ir)
    if block.alloc_buffers:
        raise ScheduleError(prim, subject, "the block allocates buffers of its own", ir)
    return block.body


def _beside(nests, *blocks):
    """The innermost blocks of the loop nests ``nests`` other than ``blocks``: a block
    inlined out of its nest or into another runs before or after them in iterations where
    it did not."""
    return [p[-1] for nest in nests for p in realizes_under(nest, nested=True)
            if not realizes_under(p[-1].block.body) and all(p[-1] is not b for b in blocks)]


def compute_inline(func, name):
    """Inline an elementwise producer into the blocks that read its buffer, and drop the
    buffer.

    Before::

        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = B[vi] + T.float32(1)

    After ``sch.compute_inline(sch.get_block("B"))``::

        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] * T.float32(2) + T.float32(1)

    Legal when the block is elementwise, unguarded, writes an intermediate buffer at its
    iterators and reads nothing it writes, no other block writes that buffer or reads it
    before, and no block up to its last reader (nor beside it in its loop nest) writes what
    the block reads.
    """
    prim = "compute_inline"
    path = inline_path(func, name, prim)
    realize = path[-1]
    block = realize.block
    subject = f"block \"{name}\""
    store = _elementwise(prim, subject, realize, realize)
    buf = store.buffer
    if buf in func.params:
        raise ScheduleError(prim, subject, f"the block writes {buf.name}, a parameter of "
                            f"{func.name}; its values must stay in memory", realize)
    kernel = kernel_taking(func, buf)
    if kernel is not None:
        raise ScheduleError(prim, subject, f"{buf.name} is passed by address to kernel "
                            f"{kernel!r}; its values must stay in memory", realize)
    if not is_true(realize.predicate):
        raise ScheduleError(prim, subject, "the block has a predicate, so it does not compute "
                            "every element it could be asked for", realize)
    dims = index_vars(block.writes[0], block.iter_vars, prim, subject, "the written buffer")
    if len(dims) != len(block.iter_vars):
        raise ScheduleError(prim, subject, f"every iterator must index {buf.name}", realize)
    if any(getattr(n, "buffer", None) is buf for n in walk(store.value)):
        raise ScheduleError(prim, subject, f"the block reads {buf.name}, the buffer it writes",
                            realize)
    items, ib = item_index(path)
    for k, s in enumerate(items):
        others = [w for w in writers(s, buf) if w is not realize]
        if others:
            raise ScheduleError(prim, subject, f"block \"{others[0].block.name}\" also writes "
                                f"{buf.name}", s)
        if k < ib and readers(s, buf):
            raise ScheduleError(prim, subject, f"block \"{readers(s, buf)[0].block.name}\" reads "
                                f"{buf.name} before this block writes it", s)
    if readers(items[ib], buf):
        raise ScheduleError(prim, subject, f"a block in the same loop nest reads {buf.name}",
                            items[ib])
    last = max((k for k, s in enumerate(items) if readers(s, buf)), default=ib)
    inputs = [r.buffer for r in block.reads]
    for s in [*_beside((items[ib],), realize), *items[ib + 1:last + 1]]:
        hit = [(w.block.name, b.name) for b in inputs for w in writers(s, b)]
        if hit:
            raise ScheduleError(prim, subject, f"block \"{hit[0][0]}\" writes {hit[0][1]}, which "
                                f"the block reads, before {buf.name} is read: inlined, the "
                                "readers would see the new values", s)

    def inline(load):
        return substitute(store.value, dict(zip(dims, load.indices)))

    body = replace(path, None)
    body = replace_loads(body, buf, inline)
    body = _refresh(body, buf)
    return with_body(func, drop_buffer(body, buf)), None


def _refresh(body, buf):
    """Blocks that declared reads of ``buf`` get their reads recomputed."""
    return rewrite_stmts(body, lambda n: refresh_reads(n, {buf}) if isinstance(n, Block)
                         and any(r.buffer is buf for r in n.reads) else None)


def _same_domain(prim, subject, path, ppath, dims, pstore, buf):
    """The producer must store ``buf`` at its own iterators, unguarded, over exactly the
    points the consumer reads, and the loops of both (``path``, ``ppath``) must run their
    iterators over their whole domains: after inlining, the consumer's store runs over the
    producer's loops."""
    realize, producer = path[-1], ppath[-1]
    pvars = {iv.var: iv for iv in producer.block.iter_vars}
    pname = f"producer block \"{producer.block.name}\""
    if not is_true(producer.predicate):
        raise ScheduleError(prim, subject, f"the {pname} has a predicate", producer)
    for what, p in (("block", path), (pname, ppath)):
        loops = loops_of(p)
        if not complete_binding(p[-1], loops, analyzer_for(loops)):
            raise ScheduleError(prim, subject, f"the {what}'s loops do not run its iterators "
                                "over their whole domains (from 0, one-to-one): inlined, the "
                                "block would run where its loops do not", p[-1])
    if not all(isinstance(i, Var) and i in pvars for i in pstore.indices) or \
            len(set(pstore.indices)) != len(pstore.indices):
        raise ScheduleError(prim, subject, f"the {pname} does not store {buf.name} at its "
                            "iterators", producer)
    extent = {iv.var: iv.extent for iv in realize.block.iter_vars}
    ana = analyzer_for([])
    for d, (mine, theirs) in enumerate(zip(dims, pstore.indices)):
        if not ana.can_prove_equal(extent[mine], pvars[theirs].extent):
            raise ScheduleError(prim, subject, f"the {pname} writes {buf.name} over "
                                f"[0, {expr_text(pvars[theirs].extent)}) in dimension {d}, but "
                                f"the block reads it over [0, {expr_text(extent[mine])}): "
                                "inlined, the block would run over the producer's domain",
                                realize)


def reverse_compute_inline(func, name):
    """Inline an elementwise consumer into the producer of the buffer it reads: the producer
    stores the consumer's result directly, and the intermediate buffer is dropped.

    Before::

        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = B[vi] + T.float32(1)

    After ``sch.reverse_compute_inline(sch.get_block("C"))``::

        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] * T.float32(2) + T.float32(1)

    Legal when both blocks are elementwise, their loops run their iterators over their
    whole domains, the block reads exactly one intermediate buffer, its only reader, at its
    iterators over the producer's domain, and no block it moves across (between the two
    nests, or beside either block in its nest) writes what it reads or touches what it
    writes.
    """
    prim = "reverse_compute_inline"
    path = inline_path(func, name, prim)
    realize = path[-1]
    block = realize.block
    subject = f"block \"{name}\""
    store = _elementwise(prim, subject, realize, realize)
    if not is_true(realize.predicate):
        raise ScheduleError(prim, subject, "the block has a predicate", realize)
    items, ib = item_index(path)
    candidates = [r for r in block.reads if r.buffer not in func.params and any(
        writers(s, r.buffer) for s in items[:ib])]
    if len(candidates) != 1:
        what = "no" if not candidates else "more than one"
        raise ScheduleError(prim, subject, f"the block reads {what} intermediate buffer "
                            "produced before it; it must read exactly one", realize)
    buf = candidates[0].buffer
    dims = index_vars(candidates[0], block.iter_vars, prim, subject, "the consumed buffer")
    if set(dims) != {iv.var for iv in block.iter_vars}:
        raise ScheduleError(prim, subject, f"every iterator must index {buf.name}", realize)
    loads = [n for n in walk(store.value) if getattr(n, "buffer", None) is buf]
    if any(tuple(simplify(i) for i in ld.indices) != tuple(dims) for ld in loads):
        raise ScheduleError(prim, subject, f"the block reads {buf.name} at more than one "
                            "index", realize)
    producers = [w for s in items for w in writers(s, buf)]
    if len(producers) > 1 and all(any(n is w for n in walk(producers[0].block.body))
                                  for w in producers[1:]):
        raise ScheduleError(prim, subject, f"{buf.name} is produced by block "
                            f"\"{producers[0].block.name}\", which nests block(s) "
                            f"{', '.join(repr(w.block.name) for w in producers[1:])}: a "
                            "consumer can only be inlined into a producer that is a single "
                            "store", realize)
    if len(producers) != 1:
        raise ScheduleError(prim, subject, f"{buf.name} must have exactly one producer block",
                            realize)
    producer = producers[0]
    ppath = find_block(func.body, producer.block.name)
    pstore = _elementwise(prim, f"producer block \"{producer.block.name}\"", producer, producer)
    users = [r for s in items for r in readers(s, buf)]
    if len(users) != 1:
        raise ScheduleError(prim, subject, f"other blocks read {buf.name} too", realize)
    _, ip = item_index(ppath)
    check_no_interference(prim, subject, [*items[ip + 1:ib],
                                          *_beside((items[ip], items[ib]), producer, realize)],
                          [r.buffer for r in block.reads if r.buffer is not buf],
                          [w.buffer for w in block.writes])
    if readers(items[ip], store.buffer) and items[ip] is not items[ib]:
        raise ScheduleError(prim, subject, f"the producer's loops also read {store.buffer.name}",
                            items[ip])
    _same_domain(prim, subject, path, ppath, dims, pstore, buf)
    mapping = dict(zip(dims, pstore.indices))
    value = replace_loads(store.value, buf, lambda _ld: pstore.value)
    new_store = BufferStore(store.buffer, substitute(value, mapping),
                            tuple(substitute(i, mapping) for i in store.indices))
    pblock = producer.block
    new_block = dataclasses.replace(pblock, body=new_store, writes=tuple(
        substitute(w, mapping) for w in block.writes))
    new_block = refresh_reads(new_block, {buf})
    body = replace(path, None)
    ppath = find_block(body, producer.block.name)
    body = replace(ppath, dataclasses.replace(ppath[-1], block=new_block))
    return with_body(func, drop_buffer(body, buf)), None
