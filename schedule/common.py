"""Helpers shared by the primitives that move or rewrite blocks: locating a block and its
scope, naming its place in the scope's statement list, and checks every such primitive
makes."""

import dataclasses

from pyir import arith
from pyir.ir import Allocate, Block, BlockRealize, BufferLoad, BufferRegion, For, IntImm, Var
from pyir.ir.node import rewrite
from pyir.ir.ops import is_one
from pyir.ir.stmt import rewrite_stmts
from pyir.transform.common import kernel_addresses
from pyir.transform.dependence import realizes_under

from .analysis import infer_regions, read_buffers, written_buffers
from .errors import ScheduleError
from .tree import find_block, scope_depth, scope_items, top_level


def realize_path(func, name, prim):
    """Path to block ``name``'s BlockRealize; the root block is refused."""
    path = find_block(func.body, name)
    if not isinstance(path[-1], BlockRealize):
        raise ScheduleError(prim, f"block \"{name}\"", "this is the root block of the function; "
                            "it cannot be moved or rewritten", None)
    return path


def inline_path(func, name, prim):
    """`realize_path` for the inlining primitives: the block must sit directly in the
    function's root scope (inlining a block nested in another, e.g. by ``blockize``, would
    leave the outer block naming a buffer that no longer exists)."""
    path = realize_path(func, name, prim)
    depth = scope_depth(path)
    root = getattr(func.body, "block", None)
    if depth >= 0 and path[depth] is not root:
        raise ScheduleError(prim, f"block \"{name}\"", f"the block is nested in block "
                            f"\"{path[depth].name}\"; inline blocks of the root scope "
                            "(before blockize)", path[-1])
    return path


def same_scope(p1, p2):
    d1, d2 = scope_depth(p1), scope_depth(p2)
    return d1 == d2 and (d1 < 0 or p1[d1] is p2[d2])


def item_index(path):
    """(scope items, index of the item that holds the node of ``path``)."""
    items = scope_items(path)
    item = path[top_level(path)]
    return items, next(k for k, s in enumerate(items) if s is item)


def only_block(prim, subject, item, realize):
    """Refuse when ``item`` (a scope-level statement) holds blocks other than ``realize``
    and the blocks nested in it."""
    others = [p[-1].block.name for p in realizes_under(item, nested=True)
              if p[-1] is not realize and p[-1].block is not realize.block
              and not any(n is realize for n in p[:-1])]
    if others:
        raise ScheduleError(prim, subject, f"the loops around this block also hold block(s) "
                            f"{', '.join(repr(o) for o in others)}; it must have loops of its "
                            "own", item)


def kernel_taking(func, buffer):
    """The name of an extern kernel that ``func`` passes ``buffer`` to by address (a
    tensorized block's call: the kernel steps through the buffer as laid out), or None."""
    return next((call.args[0].value for call, _, _ in kernel_addresses(func.body, buffer)),
                None)


def readers(stmt, buffer):
    return [p[-1] for p in realizes_under(stmt, nested=True)
            if any(r.buffer is buffer for r in p[-1].block.reads)]


def writers(stmt, buffer):
    return [p[-1] for p in realizes_under(stmt, nested=True)
            if any(r.buffer is buffer for r in p[-1].block.writes)]


def check_no_interference(prim, subject, between, reads, writes):
    """Refuse when statements ``between`` write a buffer in ``reads`` or touch one in
    ``writes`` (moving a block across them would change what it reads or what they see)."""
    for stmt in between:
        w, r = written_buffers(stmt), read_buffers(stmt)
        hit = [b.name for b in reads if b in w] + [b.name for b in writes if b in w or b in r]
        if hit:
            names = [p[-1].block.name for p in realizes_under(stmt, nested=True)]
            raise ScheduleError(prim, subject, f"block(s) {', '.join(repr(n) for n in names)} "
                                f"in between also access {', '.join(sorted(set(hit)))}; moving "
                                "the block across them would change results", stmt)


def index_vars(region, iter_vars, prim, subject, what):
    """For a point region whose indices are distinct block iterators: the iterator of each
    dimension. Otherwise a ScheduleError."""
    out = []
    ivars = {iv.var for iv in iter_vars}
    for rng in region.region:
        if not (isinstance(rng.start, Var) and rng.start in ivars and is_one(rng.extent)
                and rng.start not in out):
            raise ScheduleError(prim, subject, f"{what} {region.buffer.name} must be indexed by "
                                "distinct block iterators, one per dimension (like "
                                f"{region.buffer.name}[vi, vj])")
        out.append(rng.start)
    return out


def drop_buffer(body, buffer):
    """``body`` without the allocation of ``buffer`` (in a block's alloc_buffers or an
    Allocate statement)."""
    def fn(n):
        if isinstance(n, Block) and buffer in n.alloc_buffers:
            return dataclasses.replace(
                n, alloc_buffers=tuple(b for b in n.alloc_buffers if b is not buffer))
        if isinstance(n, Allocate) and n.buffer is buffer:
            return n.body
        return None
    return rewrite_stmts(body, fn)


def refresh_reads(block, replaced):
    """``block`` with its reads of buffers in ``replaced`` dropped and the regions of the
    buffers its body now reads but did not declare inferred from the body."""
    inferred, _ = infer_regions(block)
    old = [r for r in block.reads if r.buffer not in replaced]
    known = {r.buffer for r in old}
    new = [r for r in inferred if r.buffer not in known]
    return dataclasses.replace(block, reads=tuple(old + new))


def replace_loads(node, buffer, fn):
    """``node`` with each load of ``buffer`` replaced by ``fn(load)``."""
    return rewrite(node, lambda n: fn(n) if isinstance(n, BufferLoad) and n.buffer is buffer
                   else None)


def point_region(buffer, indices):
    from pyir.ir import IntImm, Range
    return BufferRegion(buffer, tuple(Range(i, IntImm(1)) for i in indices))


def nest_around(block, loop_names=None):
    """Serial loops (``ax0, ax1, ...`` or ``loop_names``) over the domains of ``block``'s
    iterators, each binding its iterator: the block over its whole domain, once. The loop
    extents are in the form the parser reads them in (`arith.simplify`: ``m * n`` for an
    iterator over ``n * m``), so that the module prints and parses back to itself."""
    names = loop_names or [f"ax{d}" for d in range(len(block.iter_vars))]
    loop_vars = [Var(name) for name in names]
    body = BlockRealize(tuple(loop_vars), IntImm(1, "bool"), block)
    for v, iv in reversed(list(zip(loop_vars, block.iter_vars))):
        body = For(v, IntImm(0), arith.simplify(iv.extent), "serial", body)
    return body
