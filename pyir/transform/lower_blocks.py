"""Lower blocks to plain loops.

Each BlockRealize becomes its body with the block iterators replaced by their bindings;
the reduction init runs under ``if`` all reduce iterators are at their first value (0);
a predicate other than ``True`` becomes an ``if``; alloc buffers become Allocate
statements around the block's body. A block lowered to a sequence inside a sequence is
spliced into it, so no SeqStmt holds another (script text always reads back flat).
"""

from functools import reduce

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import rewrite, substitute
from .common import has_blocks, prim_func_pass, replace_func


def _is_true(e):
    return isinstance(e, E.IntImm) and e.dtype == "bool" and e.value == 1


def _lower_realize(realize):
    block = realize.block
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    body = block.body
    if block.init is not None:
        firsts = [E.eq(iv.var, E.IntImm(0)) for iv in block.iter_vars if iv.kind == "R"]
        if firsts:
            body = S.seq(S.IfThenElse(reduce(E.and_, firsts), block.init), body)
        else:
            body = S.seq(block.init, body)
    body = substitute(body, binding)
    for buf in reversed(block.alloc_buffers):
        body = S.Allocate(buf, body)
    if not _is_true(realize.predicate):
        body = S.IfThenElse(realize.predicate, body)
    return body


def _lower_realized(node):
    return _lower_realize(node) if isinstance(node, S.BlockRealize) else None


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


@prim_func_pass
def lower_blocks(func):
    """Replace every block by plain statements (see the module docstring)."""
    if not has_blocks(func):
        return func
    body = rewrite(rewrite(func.body, _lower_realized), _lower_bare)
    return replace_func(func, body=rewrite(body, _splice))
