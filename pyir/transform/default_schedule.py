"""The default schedule for prim functions that no one scheduled.

An unscheduled function (attribute "scheduled" not set) that still has blocks gets:
- consecutive loop nests over the same rows fused into one row loop (softmax, layernorm:
  a row reduction, then elementwise work with its result), when every access to a buffer
  that the nests write indexes its first dimension by exactly the row variable, so that
  rows are independent and each row stays in cache between the nests;
- its outermost spatial loop(s) parallel: a serial loop whose variable feeds a spatial
  iterator of every block below it and no reduce iterator;
- its innermost spatial loops vectorized when every store of the block below is
  contiguous in the loop (last index moves by 1, other indices do not move).
A loop that is both becomes parallel with annotation ``("vectorize", 1)``: codegen
vectorizes the chunk each worker runs.
"""

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import substitute, walk
from .common import has_blocks, prim_func_pass, replace_func
from .linear import coefficient

#: Constant extents below this are not worth vectorizing.
MIN_VECTOR_EXTENT = 4


def _realizes(stmt):
    return [n for n in walk(stmt) if isinstance(n, S.BlockRealize)]


def _spatial_only(loop):
    """The loop variable binds a spatial iterator of every block below and no reduce
    iterator."""
    realizes = _realizes(loop.body)
    if not realizes:
        return False
    for r in realizes:
        used = False
        for iv, value in zip(r.block.iter_vars, r.iter_values):
            if any(n is loop.loop_var for n in walk(value)):
                if iv.kind == "R":
                    return False
                used = True
        if not used:
            return False
    return True


def _contiguous(loop):
    body = loop.body
    if not isinstance(body, S.BlockRealize):
        return False
    if isinstance(loop.extent, E.IntImm) and loop.extent.value < MIN_VECTOR_EXTENT:
        return False
    block = body.block
    binding = {iv.var: v for iv, v in zip(block.iter_vars, body.iter_values)}
    stores = [n for n in walk(substitute(block.body, binding)) if isinstance(n, S.BufferStore)]
    if not stores or any(isinstance(n, (S.For, S.BlockRealize)) for n in walk(block.body)):
        return False
    for st in stores:
        if not st.indices or coefficient(st.indices[-1], loop.loop_var) != 1:
            return False
        if any(coefficient(i, loop.loop_var) != 0 for i in st.indices[:-1]):
            return False
    return True


def _accesses(loop):
    """(buffer, is a store, first index is the row variable) for every access in the
    blocks below ``loop``."""
    for r in _realizes(loop.body):
        binding = {iv.var: v for iv, v in zip(r.block.iter_vars, r.iter_values)}
        for n in walk(substitute(r.block, binding)):
            if isinstance(n, (E.BufferLoad, S.BufferStore)):
                yield (n.buffer, isinstance(n, S.BufferStore),
                       bool(n.indices) and n.indices[0] is loop.loop_var)


def _fusible(a, b):
    if not (isinstance(a, S.For) and isinstance(b, S.For) and a.kind == b.kind == "serial"
            and a.start == b.start and a.extent == b.extent
            and _spatial_only(a) and _spatial_only(b)):
        return False
    accesses = list(_accesses(a)) + list(_accesses(b))
    written = {buf for buf, store, _ in accesses if store}
    return all(row for buf, _, row in accesses if buf in written)


def _fuse_rows(stmt):
    """Fuse runs of consecutive row loops (see the module docstring)."""
    if not isinstance(stmt, S.SeqStmt):
        return _map_children(stmt, _fuse_rows)
    out = []
    for s in (_fuse_rows(x) for x in stmt.stmts):
        if out and _fusible(out[-1], s):
            last = out[-1]
            body = substitute(s.body, {s.loop_var: last.loop_var})
            out[-1] = dataclasses.replace(last, body=S.seq(last.body, body))
        else:
            out.append(s)
    return S.seq(*out)


def _has_loop(stmt):
    return any(isinstance(n, S.For) for n in walk(stmt))


def _vectorize(stmt):
    """Mark innermost contiguous spatial loops vectorized (a rebuilt statement)."""
    if isinstance(stmt, S.For):
        if not _has_loop(stmt.body) and stmt.kind == "serial":
            if _spatial_only(stmt) and _contiguous(stmt):
                return dataclasses.replace(stmt, kind="vectorized")
            return stmt
        return dataclasses.replace(stmt, body=_vectorize(stmt.body))
    return _map_children(stmt, _vectorize)


def _parallelize(stmt):
    """Mark the outermost spatial loop of each loop nest parallel."""
    if isinstance(stmt, S.For):
        if stmt.kind == "vectorized" and _spatial_only(stmt):
            return dataclasses.replace(stmt, kind="parallel",
                                       annotations=stmt.annotations + (("vectorize", 1),))
        if stmt.kind != "serial" or not _spatial_only(stmt):
            return stmt
        if any(isinstance(n, S.For) and n.kind == "parallel" for n in walk(stmt.body)):
            return stmt
        if isinstance(stmt.extent, E.IntImm) and stmt.extent.value < 2:
            return stmt
        return dataclasses.replace(stmt, kind="parallel")
    return _map_children(stmt, _parallelize)


def _map_children(stmt, fn):
    if isinstance(stmt, S.SeqStmt):
        return S.SeqStmt(tuple(fn(s) for s in stmt.stmts))
    if isinstance(stmt, S.BlockRealize):
        return dataclasses.replace(stmt, block=_map_children(stmt.block, fn))
    if isinstance(stmt, (S.Block, S.Allocate, S.LetStmt)):
        return dataclasses.replace(stmt, body=fn(stmt.body))
    if isinstance(stmt, S.IfThenElse):
        return dataclasses.replace(stmt, then_case=fn(stmt.then_case),
                                   else_case=None if stmt.else_case is None
                                   else fn(stmt.else_case))
    return stmt


@prim_func_pass
def default_schedule(func):
    """Parallelize and vectorize an unscheduled function (see the module docstring)."""
    if func.attr("scheduled") or not has_blocks(func):
        return func
    return replace_func(func, body=_parallelize(_vectorize(_fuse_rows(func.body))))
