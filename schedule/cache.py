"""Cache primitives: cache_read and cache_write copy a buffer into a new buffer of another
storage scope next to the block that uses it, and make the block use the copy."""

import dataclasses
from functools import reduce

from pyir.arith import vars_of
from pyir.ir import (Allocate, Block, BlockRealize, Buffer, BufferLoad, BufferRegion,
                     BufferStore, IfThenElse, IterVar, Var, and_)
from pyir.ir.node import rewrite
from pyir.ir.ops import is_one
from pyir.ir.stmt import find_paths
from pyir.transform.common import shape_vars
from pyir.transform.dependence import analyzer_for, narrowed_by_predicate, region_in_loops

from .analysis import complete_binding, extra_predicate, maps_onto, maps_onto_buffer
from .common import (index_vars, item_index, nest_around, point_region, readers, realize_path,
                     writers)
from .errors import ScheduleError
from .tree import find_block, iter_paths, loops_of, replace, scope_depth, top_level, with_body

SCOPES = ("global", "local")


def _pick(prim, subject, regions, which, kind, ir):
    if isinstance(which, bool):
        raise ScheduleError(prim, subject, f"name the buffer by its name or its index, not "
                            f"{which!r}", ir)
    if isinstance(which, int):
        if not 0 <= which < len(regions):
            raise ScheduleError(prim, subject, f"the block {kind} {len(regions)} buffer(s); "
                                f"index {which} is out of range", ir)
        return regions[which].buffer
    for r in regions:
        if r.buffer.name == which:
            return r.buffer
    names = ", ".join(r.buffer.name for r in regions) or "none"
    raise ScheduleError(prim, subject, f"the block {kind} no buffer {which!r} (it {kind} "
                        f"{names})", ir)


def unique_block_name(func, base):
    taken = {p[-1].block.name for p in iter_paths(func.body) if isinstance(p[-1], BlockRealize)}
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def copy_nest(name, src, dst):
    """Loops over the whole of ``dst`` copying ``src`` into it, in one block ``name``."""
    iters = [IterVar(Var(f"v{d}"), e, "S") for d, e in enumerate(dst.shape)]
    idx = tuple(iv.var for iv in iters)
    copy = BufferStore(dst, BufferLoad(src, idx), idx)
    return nest_around(Block(name, tuple(iters), (point_region(src, idx),),
                             (point_region(dst, idx),), copy))


def _swap(block, old, new):
    """``block`` with every access to ``old`` (body, init, regions) going to ``new``."""
    def fn(n):
        if isinstance(n, BufferLoad) and n.buffer is old:
            return BufferLoad(new, n.indices)
        if isinstance(n, BufferStore) and n.buffer is old:
            return BufferStore(new, n.value, n.indices)
        if isinstance(n, BufferRegion) and n.buffer is old:
            return BufferRegion(new, n.region)
        return None
    return rewrite(block, fn)


def _common(prim, func, name, which, scope, kind):
    path = realize_path(func, name, prim)
    realize = path[-1]
    subject = f"block \"{name}\""
    regions = realize.block.reads if kind == "reads" else realize.block.writes
    buf = _pick(prim, subject, regions, which, kind, realize)
    subject = f"block \"{name}\", buffer {buf.name}"
    if scope not in SCOPES:
        raise ScheduleError(prim, subject, f"unknown storage scope {scope!r}; use one of "
                            f"{', '.join(SCOPES)}", realize)
    if scope_depth(path) >= 0:
        raise ScheduleError(prim, subject, "the block is nested in another block; caches are "
                            "made for blocks at the function level", realize)
    items, k = item_index(path)
    others = [w.block.name for w in writers(items[k], buf) if w is not realize]
    if others:
        raise ScheduleError(prim, subject, f"block \"{others[0]}\" in the same loop nest also "
                            f"writes {buf.name}", items[k])
    cache = Buffer(f"{buf.name}_{scope}", buf.shape, buf.dtype, scope)
    return path, realize, buf, cache, subject


def cache_read(func, name, which, scope):
    """Copy a buffer the block reads into a new buffer of ``scope`` right before the block's
    loop nest, and make the block read the copy. Returns the copy block.

    Before::

        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    After ``sch.cache_read(b, "A", "local")``::

        A_local = T.alloc_buffer((n, m), "float32", scope="local")
        for ax0, ax1 in T.grid(n, m):
            with T.block("A_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                A_local[v0, v1] = A[v0, v1]
        for i, j in T.grid(n, m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_local[vi, vj] * T.float32(2)
    """
    prim = "cache_read"
    path, realize, buf, cache, subject = _common(prim, func, name, which, scope, "reads")
    if any(w.buffer is buf for w in realize.block.writes):
        raise ScheduleError(prim, subject, f"the block also writes {buf.name}; use cache_write",
                            realize)
    copy_name = unique_block_name(func, cache.name)
    nest = copy_nest(copy_name, buf, cache)
    new_realize = dataclasses.replace(realize, block=_swap(realize.block, buf, cache))
    body = replace(path, new_realize)
    item_path = _item_path(body, name)
    body = replace(item_path, [nest, item_path[-1]])
    return with_body(func, Allocate(cache, body)), [copy_name]


def _item_path(body, name):
    path = find_block(body, name)
    return path[:top_level(path) + 1]


def cache_write(func, name, which, scope):
    """Make the block write a new buffer of ``scope`` and copy it to the original buffer right
    after the block's loop nest. Returns the copy block.

    Before::

        for i, j, k in T.grid(n, m, p):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    After ``sch.cache_write(c, 0, "local")``::

        C_local = T.alloc_buffer((n, m), "float32", scope="local")
        for i, j, k in T.grid(n, m, p):
            with T.block("C"):
                ...
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(n, m):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                C[v0, v1] = C_local[v0, v1]

    Legal when the block is the only one in its loop nest touching the buffer, writes all of
    it (the copy writes back every element), and reads of it only what it wrote itself (a
    block that reads the buffer needs an init: without one, e.g. after
    ``decompose_reduction``, it reads values written before it, which the new cache lacks).
    """
    prim = "cache_write"
    path, realize, buf, cache, subject = _common(prim, func, name, which, scope, "writes")
    if realize.block.init is None and any(r.buffer is buf for r in realize.block.reads):
        raise ScheduleError(prim, subject, f"the block reads {buf.name} and has no init: it "
                            "reads values written before it, which a new cache would not "
                            "hold", realize)
    items, k = item_index(path)
    if any(r is not realize for r in readers(items[k], buf)):
        raise ScheduleError(prim, subject, f"another block in the same loop nest reads "
                            f"{buf.name}", items[k])
    if not _covers(realize, path, buf, shape_vars(func)):
        raise ScheduleError(prim, subject, f"the block writes only part of {buf.name}; copying "
                            "the cache back would overwrite the rest", items[k])
    copy_name = unique_block_name(func, cache.name)
    nest = copy_nest(copy_name, cache, buf)
    new_realize = dataclasses.replace(realize, block=_swap(realize.block, buf, cache))
    body = replace(path, new_realize)
    item_path = _item_path(body, name)
    body = replace(item_path, [item_path[-1], nest])
    return with_body(func, Allocate(cache, body)), [copy_name]


def _covers(realize, path, buf, shapes):
    """True if the block, over all its loop iterations, writes every element of ``buf``:
    each dimension its own iterator, bound over its whole domain (a reduction writes each
    element again), or the written indices mapping the loops they use one-to-one onto the
    buffer under the block's predicate (``T.where(i < 10)`` over ``i`` in ``[0, 12)``
    writes all of a 10-element buffer; ``B[vi * 2]`` over 5 points is half of 9 elements,
    though their bounds span them all; ``T.where(i >= 3)`` writing ``B[vi - 3]`` all of
    B if its loop ends at B's extent plus 3), or their row-major offset doing so
    (`maps_onto_buffer`: 13 x 7 loops fused and split by 4 write all of a 13 x 7 ``C`` at
    ``C[(f_0 * 4 + f_1) // 7, (f_0 * 4 + f_1) % 7]`` under ``T.where(f_0 * 4 + f_1 <
    91)``). A block that stores to ``buf`` only under an ``if`` writes no element for sure.
    ``shapes`` are the function's shape variables (each at least 0)."""
    stores = find_paths(realize.block, lambda s: isinstance(s, BufferStore) and s.buffer is buf)
    if all(any(isinstance(s, IfThenElse) for s in p) for p in stores):
        return False
    loops = loops_of(path)
    ana = analyzer_for(loops, shapes)
    region = next(w for w in realize.block.writes if w.buffer is buf)
    if not extra_predicate(realize, ana):
        try:
            dims = index_vars(region, realize.block.iter_vars, "", "", "")
        except ScheduleError:
            dims = None
        if dims is not None and complete_binding(realize, loops, ana):
            ext = {iv.var: iv.extent for iv in realize.block.iter_vars}
            if all(ana.can_prove_equal(ext[v], s) for v, s in zip(dims, buf.shape)):
                return True
    ranges = region_in_loops(realize, region).region
    if not all(is_one(r.extent) for r in ranges):
        return False
    indices = [r.start for r in ranges]
    loop_vars = {lp.loop_var for lp in loops}
    used = set().union(*(vars_of(i) for i in indices)) & loop_vars
    if not vars_of(realize.predicate) & loop_vars <= used:
        return False   # which points are written depends on other loops too
    loops, left = narrowed_by_predicate([lp for lp in loops if lp.loop_var in used],
                                        realize.predicate, ana)
    left = reduce(and_, left) if left else None
    return (maps_onto(indices, buf.shape, loops, ana, left)
            or maps_onto_buffer([ana.simplify(i) for i in indices], buf.shape, loops, ana, left))
