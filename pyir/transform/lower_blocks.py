"""Lower blocks to plain loops.

Each BlockRealize becomes its body with the block iterators replaced by their bindings;
the reduction init runs under ``if`` the reduce iterators have the values they take at the
first iteration of the loops around the block (0 for ``vk = k``, 4 for ``vk = 4 - k``), each
loop from where the ``T.where`` of the block and of the blocks around it lets it start, but
the loops the spatial iterators fix (``vk == i`` for ``vi = i``, ``vk = i + k``); a
predicate other than ``True`` becomes an ``if``; alloc buffers become Allocate statements
around the block's body.

A reduction whose iterators may have no value at all (a symbolic extent: ``R.sum`` over an
axis of length 0) would then never run its init, leaving the output as it was, where numpy
gives the identity. Its init runs first instead, under copies of the spatial loops inside
the outermost reduction loop, right before that loop (what ``decompose_reduction`` does);
blocks whose loops drive both kinds of iterator (the schedule's ``fuse`` makes no such loop
for them), whose spatial loops' ranges depend on a reduction loop, or that sit under other
statements inside that loop, keep the ``if``.
A block lowered to a sequence inside a sequence is spliced into it, so no SeqStmt holds
another (script text always reads back flat). The function gets the attribute "lowered": the
parallel and vectorized loops it holds were proven on its blocks, whose declared regions
(what a kernel called in a block touches) are now gone, and the parser trusts them
(`pyir.script.parser.tensor_stmt`).
"""

from functools import reduce

from ..arith import simplify, vars_of
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.expr import conjuncts, is_true
from ..ir.node import substitute, walk, with_fields
from .common import has_blocks, prim_func_pass, replace_func, set_attrs
from .dependence import analyzer_for, narrowed_by_predicate


def _lower_realize(realize, firsts):
    block = realize.block
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    body = block.body
    if block.init is not None:
        first = firsts[id(block.iter_vars), id(realize.iter_values)]
        body = S.seq(block.init if first is None else S.IfThenElse(first, block.init), body)
    body = substitute(body, binding)
    for buf in reversed(block.alloc_buffers):
        body = S.Allocate(buf, body)
    if not is_true(realize.predicate):
        body = S.IfThenElse(realize.predicate, body)
    return body


def _in_loop_vars(path):
    """{iterator of each block realized along ``path`` (statements from the function's
    body down): its binding in loop variables (the iterators of enclosing blocks replaced
    by their bindings)}."""
    outer = {}
    for s in path:
        if isinstance(s, S.BlockRealize):
            outer.update({iv.var: substitute(v, outer) for iv, v in
                          zip(s.block.iter_vars, s.iter_values)})
    return outer


def _at_first_iteration(values, loops, wheres, kept):
    """``values`` (expressions of the loop variables) at the first iteration of ``loops``
    but those whose variables are in ``kept``: each loop at its start, moved to where the
    conjuncts of ``wheres`` that bound that loop alone let it begin
    (`narrowed_by_predicate`); a start may use the loops outside."""
    guards = [c for w in wheres if not is_true(w) for c in conjuncts(w)]
    if guards:
        loops, _ = narrowed_by_predicate(loops, reduce(E.and_, guards), analyzer_for(loops))
    starts = {lp.loop_var: lp.start for lp in loops if lp.loop_var not in kept}
    out = []
    for v in values:
        while not isinstance(v, E.IntImm) and (moved := substitute(v, starts)) is not v:
            v = moved
        out.append(v if isinstance(v, E.IntImm) else simplify(v))
    return out


def _fixed_by(spatial):
    """The loop variables that the bindings ``spatial`` of spatial iterators fix: those in
    them outside every floordiv and floormod (``vi = i_0 * 4 + i_1``). A loop under one
    (``vi = f // 5`` of a fused loop) also runs over a reduction's part (``vk = f % 5``)."""
    seen, divided = set(), set()
    for value in spatial:
        for n in walk(value):
            if isinstance(n, E.Var):
                seen.add(n)
            elif isinstance(n, E.Binary) and n.op in ("floordiv", "floormod"):
                divided |= vars_of(n)
    return seen - divided


def _init_conditions(body):
    """{(id of a block's iterators, id of their bindings): the condition under which the init
    runs}: its reduce iterators at their values of the first iteration of the loops around
    it that its spatial iterators leave free (`_at_first_iteration`, `_fixed_by`: for
    ``vi = i``, ``vk = i + k`` that is ``vk == i``), or None for a block without reduce
    iterators."""
    out = {}
    for path in S.find_paths(body, lambda s: isinstance(s, S.BlockRealize)
                             and s.block.init is not None):
        realize = path[-1]
        outer = _in_loop_vars(path)
        reduces = [iv.var for iv in realize.block.iter_vars if iv.kind == "R"]
        spatial = [outer[iv.var] for iv in realize.block.iter_vars if iv.kind != "R"]
        firsts = _at_first_iteration(
            [outer[v] for v in reduces], [s for s in path if isinstance(s, S.For)],
            [substitute(s.predicate, outer) for s in path if isinstance(s, S.BlockRealize)],
            _fixed_by(spatial))
        conds = [E.eq(v, first) for v, first in zip(reduces, firsts)]
        out[id(realize.block.iter_vars), id(realize.iter_values)] = \
            reduce(E.and_, conds) if conds else None
    return out


def _splice(node):
    if isinstance(node, S.SeqStmt) and any(isinstance(s, S.SeqStmt) for s in node.stmts):
        return S.seq(*node.stmts)
    return None


def _lower_bare(node):
    """A block left without a realize (the root block) has no iterators: only its init,
    body and allocations remain."""
    if not isinstance(node, S.Block):
        return None
    body = S.seq(node.init, node.body)
    for buf in reversed(node.alloc_buffers):
        body = S.Allocate(buf, body)
    return body


def _lower_bare_or_splice(node):
    """`_lower_bare` and `_splice` in one bottom-up pass: a sequence is seen once the
    statements in it are lowered and spliced, and a lowered block holds no nested sequence."""
    return _lower_bare(node) if isinstance(node, S.Block) else _splice(node)


def init_may_not_run(block):
    """Whether ``block`` has an init and a reduce iterator whose extent may be 0."""
    return block.init is not None and any(
        iv.kind == "R" and not (isinstance(iv.extent, E.IntImm) and iv.extent.value >= 1)
        for iv in block.iter_vars)


def _paths(stmt):
    """(path, realize) for each BlockRealize with an init that may never run, ``path``
    the statements from ``stmt`` down to it."""
    for path in S.find_paths(stmt, lambda s: isinstance(s, S.BlockRealize)
                             and init_may_not_run(s.block),
                             lambda s: [s.block.body] if isinstance(s, S.BlockRealize)
                             else S.stmt_children(s)):
        yield path, path[-1]


def _init_first(body):
    """``body`` with the first reduction whose init may never run given its init before its
    outermost reduction loop (see the module docstring), or None when there is none."""
    for path, realize in _paths(body):
        block = realize.block
        outer = _in_loop_vars(path)
        values = [outer[iv.var] for iv in block.iter_vars]
        # The loops that drive a reduce iterator (not the shape variables in its binding:
        # a guard ``... < n`` of the spatial loops stays a guard of the init).
        loop_vars = {s.loop_var for s in path if isinstance(s, S.For)}
        reduce_vars = set()
        for iv, v in zip(block.iter_vars, values):
            if iv.kind == "R":
                reduce_vars |= vars_of(v) & loop_vars
        at = next((k for k, s in enumerate(path) if isinstance(s, S.For)
                   and s.loop_var in reduce_vars), None)
        inner = path[at:-1] if at is not None else ()
        if at is None or not all(isinstance(s, (S.For, S.SeqStmt)) or (
                isinstance(s, S.BlockRealize) and not s.block.alloc_buffers) for s in inner):
            continue
        loops = [s for s in inner if isinstance(s, S.For)]
        spatial = {v for iv, val in zip(block.iter_vars, values)
                   if iv.kind == "S" for v in vars_of(val)}
        if any(lp.loop_var in spatial and lp.loop_var in reduce_vars or (
                lp.loop_var not in reduce_vars and not reduce_vars.isdisjoint(
                    vars_of(lp.start) | vars_of(lp.extent))) for lp in loops):
            continue   # a loop drives both kinds, or a spatial one's range needs a reduce one
        fresh = {lp.loop_var: E.Var(lp.loop_var.name, lp.loop_var.dtype)
                 for lp in loops if lp.loop_var not in reduce_vars}
        binding = {iv.var: substitute(v, fresh) for iv, v in zip(block.iter_vars, values)
                   if iv.kind == "S"}
        init = substitute(block.init, binding)
        predicates = [substitute(r.predicate, outer) for r in inner
                      if isinstance(r, S.BlockRealize)] + [substitute(realize.predicate, outer)]
        guards = [substitute(c, fresh) for p in predicates for c in conjuncts(p)
                  if vars_of(c).isdisjoint(reduce_vars)]
        if guards:
            init = S.IfThenElse(reduce(E.and_, guards), init)
        for lp in reversed(loops):
            if lp.loop_var in fresh:
                kind = "serial" if lp.kind == "parallel" else lp.kind  # keeps unroll, vectorized
                init = S.For(fresh[lp.loop_var], substitute(lp.start, fresh),
                             substitute(lp.extent, fresh), kind, init)
        new_realize = S.BlockRealize(realize.iter_values, realize.predicate,
                                     with_fields(block, init=None))
        top = path[at]
        replaced = S.rewrite_stmts(top, lambda n: new_realize if n is realize else None)
        return S.rewrite_stmts(body, lambda n: S.seq(init, replaced) if n is top else None)
    return None


@prim_func_pass
def lower_blocks(func):
    """Replace every block by plain statements (see the module docstring)."""
    if not has_blocks(func):
        return func
    body = func.body
    while (first := _init_first(body)) is not None:
        body = first
    firsts = _init_conditions(body)
    body = S.rewrite_stmts(S.rewrite_stmts(body, lambda n: _lower_realize(n, firsts)
                                           if isinstance(n, S.BlockRealize) else None),
                           _lower_bare_or_splice)
    return set_attrs(replace_func(func, body=body), lowered=True)
