"""blockize: wrap the loops from a given loop down to a block into an outer block, so that
the inner computation becomes one unit (the shape tensorize replaces)."""

import dataclasses

from pyir.ir import Block, BlockRealize, IntImm, IterVar, Range, Var, substitute
from pyir.transform.dependence import analyzer_for, realizes_under, relax_range

from .analysis import affine_bindings
from .cache import unique_block_name
from .errors import ScheduleError
from .tree import find_block, find_loop, loops_of, replace, with_body


def blockize(func, loop_var):
    """Make the subtree of ``loop`` the body of a new block ``<name>_o``. Each iterator of
    the inner block whose binding is ``outer * c + inner`` (``inner`` spanning ``[0, c)``
    with the loops below ``loop``) gets an outer iterator bound to ``outer``. Returns the
    outer block.

    Before::

        for i_0, i_1 in T.grid(n // 16, 16):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 16 + i_1)
                B[vi] = A[vi]

    After ``sch.blockize(i_1)``::

        for i_0 in range(n // 16):
            with T.block("B_o"):
                vi_o = T.axis.spatial(n // 16, i_0)
                T.reads(A[vi_o * 16:vi_o * 16 + 16])
                T.writes(B[vi_o * 16:vi_o * 16 + 16])
                for i_1 in range(16):
                    with T.block("B"):
                        vi = T.axis.spatial(n, vi_o * 16 + i_1)
                        B[vi] = A[vi]
    """
    prim = "blockize"
    lpath = find_loop(func.body, loop_var)
    loop = lpath[-1]
    subject = f"loop {loop_var.name}"
    inner_rel = realizes_under(loop)
    if len(inner_rel) != 1:
        raise ScheduleError(prim, subject, "the loop must hold exactly one block", loop)
    name = inner_rel[0][-1].block.name
    path = find_block(func.body, name)
    realize = path[-1]
    block = realize.block
    subject = f"loop {loop_var.name} of block \"{name}\""
    loops = loops_of(path)
    at = next(k for k, lp in enumerate(loops) if lp.loop_var is loop_var)
    inner = loops[at:]
    ana = analyzer_for(loops)
    forms = affine_bindings(realize, loops, ana)
    if forms is None:
        raise ScheduleError(prim, subject, "the block's bindings are not affine in its loops",
                            loop)
    inner_vars = {lp.loop_var for lp in inner}
    extents = {lp.loop_var: lp.extent for lp in loops}
    new_iters, outer_values, inner_values = [], [], []
    for iv, value in zip(block.iter_vars, realize.iter_values):
        coeffs, rest = forms[iv.var]
        inner_terms = {v: c for v, c in coeffs.items() if v in inner_vars}
        outer_terms = {v: c for v, c in coeffs.items() if v not in inner_vars}
        span = IntImm(1)
        for v, c in sorted(inner_terms.items(), key=lambda kv: kv[1]):
            if not ana.can_prove_equal(span, c):
                raise ScheduleError(prim, subject, f"the binding of {iv.var.name} does not "
                                    "split into an outer part and an inner part over the loops "
                                    "below", loop)
            span = ana.simplify(span * extents[v])
        if not outer_terms and ana.can_prove_equal(rest, 0):
            inner_values.append(value)
            continue
        if not isinstance(span, IntImm) or any(c % span.value for c in outer_terms.values()) \
                or not ana.can_prove_equal(ana.simplify(rest % span.value), 0):
            raise ScheduleError(prim, subject, f"the outer part of {iv.var.name}'s binding is "
                                "not a multiple of the inner part's extent", loop)
        step = span.value
        outer_sum = sum((v * (c // step) for v, c in outer_terms.items()), IntImm(0))
        vo = Var(f"{iv.var.name}_o")
        new_iters.append(IterVar(vo, ana.simplify((iv.extent + (step - 1)) // step), iv.kind))
        outer_values.append(ana.simplify(outer_sum + rest // step))
        inner_part = sum((v * c for v, c in inner_terms.items()), IntImm(0))
        inner_values.append(ana.simplify(vo * step + inner_part) if step != 1 else vo)
    pred = realize.predicate
    new_inner = BlockRealize(tuple(inner_values), pred, block)
    subtree = replace(path[len(lpath) - 1:], new_inner)
    ranges = analyzer_for(inner)
    for it in new_iters:
        ranges.bind(it.var, Range(IntImm(0), it.extent))
    reads, writes = [], []
    for src, dst in ((block.reads, reads), (block.writes, writes)):
        for r in src:
            region = substitute(r, dict(zip([iv.var for iv in block.iter_vars], inner_values)))
            relaxed = [relax_range(x, ranges, [lp.loop_var for lp in inner])
                       for x in region.region]
            if any(x is None for x in relaxed):
                raise ScheduleError(prim, subject, f"cannot bound the region of "
                                    f"{r.buffer.name} over the loops below", loop)
            dst.append(dataclasses.replace(region, region=tuple(relaxed)))
    outer_block_name = unique_block_name(func, f"{name}_o")
    outer_block = Block(outer_block_name, tuple(new_iters), tuple(reads), tuple(writes),
                        subtree)
    outer_realize = BlockRealize(tuple(outer_values), IntImm(1, "bool"), outer_block)
    return with_body(func, replace(lpath, outer_realize)), [outer_block_name]
