"""Reduction primitives: decompose_reduction pulls a reduction's init into its own block;
rfactor splits a reduction into partial results along one loop plus a block combining
them."""

import dataclasses

from pyir.ir import (Allocate, Binary, Block, BlockRealize, Buffer, BufferLoad, BufferStore,
                     For, IntImm, IterVar, Var, and_, conjuncts, const, is_true, substitute,
                     walk)
from pyir.ir.ops import is_one
from pyir.transform.dependence import analyzer_for, realizes_under, uses

from .analysis import complete_binding, infer_regions
from .cache import unique_block_name
from .common import item_index, nest_around, readers, realize_path, writers
from .errors import ScheduleError
from .tree import find_block, find_loop, loops_of, replace, top_level, with_body


def _vars_in(e):
    return {n for n in walk(e) if isinstance(n, Var)}


def _with_regions(block):
    reads, writes = infer_regions(block)
    return dataclasses.replace(block, reads=reads, writes=writes)


def decompose_reduction(func, name, loop_var):
    """Move a reduction block's init into a block ``<name>_init`` placed right before
    ``loop``, under copies of the spatial loops between that loop and the block. Returns the
    init block.

    Before::

        for i, j, k in T.grid(n, m, p):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    After ``sch.decompose_reduction(c, k)``::

        for i, j in T.grid(n, m):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.float32(0)
            for k in range(p):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    Legal when the loops above ``loop`` drive no reduction iterator, no loop drives both
    kinds of iterator, and every loop from ``loop`` in drives one (or runs once): under a
    loop that drives none the reduction runs again in each iteration, each time from its
    init.
    """
    prim = "decompose_reduction"
    path = realize_path(func, name, prim)
    realize = path[-1]
    block = realize.block
    subject = f"block \"{name}\" at loop {loop_var.name}"
    if block.init is None:
        raise ScheduleError(prim, subject, "the block has no init (T.init) to decompose",
                            realize)
    loops = loops_of(path)
    at = next((k for k, lp in enumerate(loops) if lp.loop_var is loop_var), None)
    if at is None:
        raise ScheduleError(prim, subject, f"loop {loop_var.name} is not around the block",
                            realize)
    red_vars, sp_vars = set(), set()
    for iv, v in zip(block.iter_vars, realize.iter_values):
        (red_vars if iv.kind == "R" else sp_vars).update(_vars_in(v))
    for lp in loops:
        if lp.loop_var in red_vars and lp.loop_var in sp_vars:
            raise ScheduleError(prim, subject, f"loop {lp.loop_var.name} drives both spatial and "
                                "reduction iterators", loops[at])
    for lp in loops[:at]:
        if lp.loop_var in red_vars:
            raise ScheduleError(prim, subject, f"loop {lp.loop_var.name}, above "
                                f"{loop_var.name}, drives a reduction iterator; the init would "
                                "run again in every one of its iterations", loops[0])
    for lp in loops[at:]:
        if lp.loop_var not in red_vars | sp_vars and not is_one(lp.extent):
            raise ScheduleError(prim, subject, f"loop {lp.loop_var.name} drives no iterator "
                                "of the block: the reduction runs again in each of its "
                                "iterations, and its init with it (decompose at a loop inside "
                                f"{lp.loop_var.name})", lp)
    outer = sorted(v.name for v in red_vars - {lp.loop_var for lp in loops})
    if outer:
        raise ScheduleError(prim, subject, f"a reduction iterator of the block follows "
                            f"{', '.join(outer)}, from outside its enclosing block; the init "
                            "would run again for every value of it (decompose the outer "
                            "block's reduction instead)", realize)
    copies = [lp for lp in loops[at:] if lp.loop_var not in red_vars]
    fresh = {lp.loop_var: Var(lp.loop_var.name) for lp in copies}
    kept = [lp.loop_var for lp in loops[:at]] + list(fresh)
    guards = []
    for g in conjuncts(realize.predicate):
        used = _vars_in(g)
        if used & red_vars and used & set(fresh):
            raise ScheduleError(prim, subject, "the block's predicate mixes reduction and "
                                "spatial loops", realize)
        if used <= set(kept) | (used - {lp.loop_var for lp in loops}):
            guards.append(substitute(g, fresh))
    spatial = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.kind == "S"]
    new_iters = {iv.var: Var(iv.var.name) for iv, _ in spatial}
    init_block = Block(unique_block_name(func, f"{name}_init"),
                       tuple(IterVar(new_iters[iv.var], iv.extent, "S") for iv, _ in spatial),
                       (), (), substitute(block.init, new_iters))
    init_block = _with_regions(init_block)
    pred = IntImm(1, "bool")
    for g in guards:
        pred = g if is_true(pred) else and_(pred, g)
    nest = BlockRealize(tuple(substitute(v, fresh) for _, v in spatial), pred, init_block)
    for lp in reversed(copies):
        nest = For(fresh[lp.loop_var], substitute(lp.start, fresh), substitute(lp.extent, fresh),
                   lp.kind, nest, lp.annotations)
    update = dataclasses.replace(realize, block=dataclasses.replace(block, init=None))
    body = replace(path, update)
    lpath = find_loop(body, loop_var)
    body = replace(lpath, [nest, lpath[-1]])
    return with_body(func, body), [init_block.name]


_COMBINERS = ("add", "mul", "max", "min")


def _update_parts(block, prim, subject, ir):
    """(buffer, indices, op, rhs, init value) of ``C[idx] = C[idx] <op> rhs``."""
    store, init = block.body, block.init
    if not isinstance(store, BufferStore) or not isinstance(init, BufferStore):
        raise ScheduleError(prim, subject, "the block must be one reduction update with an init "
                            "(C[...] = C[...] + value)", ir)
    value = store.value
    if isinstance(value, Binary) and value.op in _COMBINERS:
        for mine, other in ((value.a, value.b), (value.b, value.a)):
            if (isinstance(mine, BufferLoad) and mine.buffer is store.buffer
                    and mine.indices == store.indices
                    and not any(getattr(n, "buffer", None) is store.buffer
                                for n in walk(other))):
                return store.buffer, store.indices, value.op, other, init.value
    raise ScheduleError(prim, subject, "the update must combine the old value with "
                        "+, *, max or min, like C[vi] = C[vi] + A[vi, vk]", ir)


def _identity(op, dtype, init_value):
    if op == "add":
        return const(0, dtype)
    if op == "mul":
        return const(1, dtype)
    return init_value


def rfactor(func, loop_var, factor_axis):
    """Factor the reduction under ``loop`` into partial results indexed by that loop (block
    ``<name>_rf`` writing ``<buffer>_rf``), followed by the original block reducing the
    partial results. Returns the ``_rf`` block.

    Before::

        for i, k in T.grid(n, 128):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]

    After splitting k into k_0, k_1 (4 x 32) and ``sch.rfactor(k_1, 0)``::

        S_rf = T.alloc_buffer((32, n), "float32")
        for i, k_0, k_1 in T.grid(n, 4, 32):
            with T.block("S_rf"):
                vi = T.axis.spatial(n, i)
                vk_1 = T.axis.spatial(32, k_1)
                vk_0 = T.axis.reduce(4, k_0)
                with T.init():
                    S_rf[vk_1, vi] = T.float32(0)
                S_rf[vk_1, vi] = S_rf[vk_1, vi] + A[vi, vk_0 * 32 + vk_1]
        for ax0, k_1 in T.grid(n, 32):
            with T.block("S"):
                vi, vk_1 = T.axis.remap("SR", [ax0, k_1])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + S_rf[vk_1, vi]

    When the reduction loops carry a tail guard (k split by a factor that does not divide
    it), some partial results get no update at all: a block ``<name>_rf_init`` before the
    loop nest sets every one to the identity, and ``<name>_rf`` has no init.
    """
    prim = "rfactor"
    lpath = find_loop(func.body, loop_var)
    loop = lpath[-1]
    subject = f"loop {loop_var.name}"
    inner = realizes_under(loop.body)
    if len(inner) != 1:
        raise ScheduleError(prim, subject, "the loop must hold exactly one block", loop)
    name = inner[0][-1].block.name
    path = find_block(func.body, name)
    realize = path[-1]
    block = realize.block
    subject = f"loop {loop_var.name} of block \"{name}\""
    buf, idx, op, rhs, init_value = _update_parts(block, prim, subject, realize)
    loops = loops_of(path)
    ana = analyzer_for(loops)
    red = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.kind == "R"]
    spatial = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values) if iv.kind == "S"]
    if not any(uses(v, [loop_var]) for _, v in red) or any(uses(v, [loop_var])
                                                           for _, v in spatial):
        raise ScheduleError(prim, subject, "the loop must drive reduction iterators only",
                            realize)
    red_loops = [lp for lp in loops if any(uses(v, [lp.loop_var]) for _, v in red)]
    if any(uses(v, [lp.loop_var]) for _, v in spatial for lp in red_loops):
        raise ScheduleError(prim, subject, "a loop drives both spatial and reduction iterators",
                            realize)
    # A guard on the reduction loops (a split tail) may skip some partial results' every
    # update: they are initialised by a block of their own then, not by the updates' init.
    guarded = uses(realize.predicate, [lp.loop_var for lp in red_loops])
    if not complete_binding(realize, loops, ana):
        raise ScheduleError(prim, subject, "the block's loops do not bind its iterators "
                            "one-to-one over their domains", realize)
    loop_vars = [lp.loop_var for lp in loops]
    if any(uses(lp.extent, loop_vars) for lp in red_loops):
        raise ScheduleError(prim, subject, "a reduction loop's extent depends on another loop",
                            realize)
    ndim = len(buf.shape)
    if not isinstance(factor_axis, int) or isinstance(factor_axis, bool) \
            or not 0 <= factor_axis <= ndim:
        raise ScheduleError(prim, subject, f"factor_axis must be in [0, {ndim}], got "
                            f"{factor_axis!r}", realize)
    items, k = item_index(path)
    if any(r is not realize for r in readers(items[k], buf) + writers(items[k], buf)):
        raise ScheduleError(prim, subject, f"another block in the same loop nest accesses "
                            f"{buf.name}", items[k])
    rf_buf = Buffer(f"{buf.name}_rf", buf.shape[:factor_axis] + (loop.extent,)
                    + buf.shape[factor_axis:], buf.dtype)

    # the partial-result block, in place of the original
    sp_iters = {iv.var: Var(iv.var.name) for iv, _ in spatial}
    loop_iters = {lp.loop_var: Var(f"v{lp.loop_var.name}") for lp in red_loops}
    red_values = {iv.var: substitute(v, loop_iters) for iv, v in red}

    def rf_idx(ix, v):
        return ix[:factor_axis] + (v,) + ix[factor_axis:]

    sub = {**sp_iters, **red_values}
    my_idx = rf_idx(tuple(substitute(i, sub) for i in idx), loop_iters[loop_var])
    rf_iters = [IterVar(sp_iters[iv.var], iv.extent, "S") for iv, _ in spatial]
    rf_iters.append(IterVar(loop_iters[loop_var], loop.extent, "S"))
    rf_iters += [IterVar(loop_iters[lp.loop_var], lp.extent, "R") for lp in red_loops
                 if lp.loop_var is not loop_var]
    rf_values = [v for _, v in spatial] + [loop_var] + [
        lp.loop_var for lp in red_loops if lp.loop_var is not loop_var]
    rf_init = BufferStore(rf_buf, _identity(op, buf.dtype, substitute(init_value, sub)),
                          my_idx)
    rf_block = Block(unique_block_name(func, f"{name}_rf"), tuple(rf_iters), (), (),
                     BufferStore(rf_buf, Binary(op, BufferLoad(rf_buf, my_idx),
                                                substitute(rhs, sub)), my_idx),
                     None if guarded else rf_init)
    rf_block = _with_regions(rf_block)
    rf_realize = BlockRealize(tuple(rf_values), realize.predicate, rf_block)

    # the write-back block, after the loop nest
    wb_sp = {iv.var: Var(iv.var.name) for iv, _ in spatial}
    vr = Var(f"v{loop_var.name}")
    wb_idx = tuple(substitute(i, wb_sp) for i in idx)
    wb_iters = tuple([IterVar(wb_sp[iv.var], iv.extent, "S") for iv, _ in spatial]
                     + [IterVar(vr, loop.extent, "R")])
    wb_block = Block(name, wb_iters, (), (),
                     BufferStore(buf, Binary(op, BufferLoad(buf, wb_idx),
                                             BufferLoad(rf_buf, rf_idx(wb_idx, vr))), wb_idx),
                     BufferStore(buf, substitute(init_value, wb_sp), wb_idx))
    nest = nest_around(_with_regions(wb_block),
                       [f"ax{d}" for d in range(len(spatial))] + [loop_var.name])

    body = replace(path, rf_realize)
    new_path = find_block(body, rf_block.name)
    item_path = new_path[:top_level(new_path) + 1]
    first = [_init_nest(func, f"{name}_rf_init", rf_init, rf_iters[:len(spatial) + 1])] \
        if guarded else []
    body = replace(item_path, first + [item_path[-1], nest])
    for outer in [n.block for n in path[:-1] if isinstance(n, BlockRealize)]:
        body = _declare(body, outer.name, rf_buf)
    return with_body(func, Allocate(rf_buf, body)), [rf_block.name]


def _declare(body, name, buf):
    """``body`` with block ``name`` (which now holds blocks accessing the new buffer ``buf``)
    declaring the regions of ``buf`` its body reads and writes."""
    path = find_block(body, name)
    block = path[-1].block
    reads, writes = infer_regions(block)
    block = dataclasses.replace(
        block, reads=block.reads + tuple(r for r in reads if r.buffer is buf),
        writes=block.writes + tuple(r for r in writes if r.buffer is buf))
    return replace(path, dataclasses.replace(path[-1], block=block))


def _init_nest(func, name, store, iters):
    """Loops over the domains of ``iters`` (spatial block iterators) around a block ``name``
    that runs ``store`` (a partial result's init) at every point."""
    fresh = {iv.var: Var(iv.var.name) for iv in iters}
    iters = [IterVar(fresh[iv.var], iv.extent, "S") for iv in iters]
    return nest_around(_with_regions(Block(unique_block_name(func, name), tuple(iters), (), (),
                                           substitute(store, fresh))))
