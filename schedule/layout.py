"""transform_layout: store an intermediate buffer in another layout given by an index map;
every access and region is rewritten through the map."""

import dataclasses

from pyir.arith import Analyzer, simplify
from pyir.arith.tiles import recoverable
from pyir.errors import IRError
from pyir.ir import (Allocate, Binary, Block, Buffer, BufferLoad, BufferRegion, BufferStore,
                     IntImm, Range, Var, dtype as dt)
from pyir.ir.node import rewrite
from pyir.transform.dependence import relax_range

from .common import kernel_taking, realize_path
from .errors import ScheduleError
from .index_map import IndexMap
from .tree import with_body


def _pick(prim, subject, block, which, ir):
    if isinstance(which, str):
        for r in block.reads + block.writes:
            if r.buffer.name == which:
                return r.buffer
        raise ScheduleError(prim, subject, f"the block accesses no buffer named {which!r}", ir)
    if (isinstance(which, (tuple, list)) and len(which) == 2 and which[0] in ("read", "write")
            and isinstance(which[1], int) and not isinstance(which[1], bool)):
        regions = block.reads if which[0] == "read" else block.writes
        if 0 <= which[1] < len(regions):
            return regions[which[1]].buffer
        raise ScheduleError(prim, subject, f"the block has {len(regions)} {which[0]} "
                            f"buffer(s); index {which[1]} is out of range", ir)
    raise ScheduleError(prim, subject, f"name the buffer by name or as (\"read\" | \"write\", "
                        f"index), not {which!r}", ir)


def read_index_map(spec, name):
    """transform_layout's ``index_map`` argument as an `IndexMap`, and its text as the trace
    stores it. A lambda must build index expressions of its variables: one that returns a
    str, a float, a list, ... is refused, naming the block."""
    prim, subject = "transform_layout", f"block \"{name}\""
    rule = "the index map must give index expressions (its variables and integers with + - * // %)"
    try:
        imap = IndexMap.parse(spec, prim)
    except IRError as err:   # from the lambda's arithmetic or the conversion of its results
        raise ScheduleError(prim, subject, f"{rule}: {err}") from None
    try:
        return imap, imap.text()
    except ScheduleError as err:   # an output the text notation cannot write
        raise ScheduleError(prim, subject, f"{rule}: {err.subject} is not one") from None


def _one_to_one(imap):
    """True when each input index can be recovered from the outputs, simplified (``i * 1``
    is ``i``): it is an output by itself, or both ``v // c`` and ``v % c`` are outputs."""
    outputs = [simplify(o) for o in imap.outputs]
    return all(recoverable(v, outputs) for v in imap.inputs)


def transform_layout(func, name, which, imap):
    """Store a buffer in the layout ``index_map``: element ``B[i, j]`` moves to
    ``B[index_map(i, j)]`` and every access follows. The buffer must be one the function
    allocates (to change the layout of a parameter, cache it first with cache_read /
    cache_write and transform the cache).

    Before::

        B = T.alloc_buffer((n, 64), "float32")
        for i, j in T.grid(n, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    After ``sch.transform_layout(b, "B", "i, j -> j // 16, i, j % 16")``::

        B = T.alloc_buffer((4, n, 16), "float32")
        for i, j in T.grid(n, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj // 16, vi, vj % 16] = A[vi, vj]
    """
    prim = "transform_layout"
    path = realize_path(func, name, prim)
    realize = path[-1]
    subject = f"block \"{name}\""
    buf = _pick(prim, subject, realize.block, which, realize)
    subject = f"block \"{name}\", buffer {buf.name}"
    if buf in func.params:
        raise ScheduleError(prim, subject, f"{buf.name} is a parameter of {func.name}; changing "
                            "its layout would change the function's signature (cache it with "
                            "cache_read / cache_write and transform the cache)", realize)
    kernel = kernel_taking(func, buf)
    if kernel is not None:
        raise ScheduleError(prim, subject, f"{buf.name} is passed by address to kernel "
                            f"{kernel!r}, which steps through it as it is laid out (change the "
                            "layout before tensorize)", realize)
    if len(imap.inputs) != len(buf.shape):
        raise ScheduleError(prim, subject, f"the index map takes {len(imap.inputs)} index(es) but "
                            f"{buf.name} has {len(buf.shape)} dimension(s)", realize)
    if not _one_to_one(imap):
        raise ScheduleError(prim, subject, f"cannot prove that the index map {imap.text()!r} is "
                            "one-to-one (each index must appear alone or as both v // c and "
                            "v % c)", realize)
    ana = Analyzer()
    for v, s in zip(imap.inputs, buf.shape):
        ana.bind(v, Range(IntImm(0), s))
    shape = []
    for k, o in enumerate(imap.outputs):
        lo, hi = ana.symbolic_bound(o, list(imap.inputs))
        if lo is None or hi is None or not ana.can_prove(Binary("ge", lo, IntImm(0))):
            raise ScheduleError(prim, subject, f"cannot bound output {imap.output_text(k)!r} of "
                                f"the index map {imap.text()!r} below by 0 and above", realize)
        top = ana.const_int_bound(o, simplify=False).max
        if top is not None and top >= dt.int_range(dt.INDEX)[1]:
            raise ScheduleError(prim, subject, f"output {imap.output_text(k)!r} of the index map "
                                f"{imap.text()!r} reaches {top}: the buffer's extent would not "
                                f"fit in {dt.INDEX}", realize)
        shape.append(ana.simplify(hi + 1))
    new = Buffer(buf.name, tuple(shape), buf.dtype, buf.scope)

    simp = Analyzer()   # no facts: one for every access, so repeated indices are remembered

    def index(indices):
        return tuple(simp.simplify(e) for e in imap.apply(indices))

    def region(rng_list):
        if all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in rng_list):
            return tuple(Range(e, IntImm(1)) for e in index([r.start for r in rng_list]))
        fresh = [Var(f"t{d}") for d in range(len(rng_list))]
        ra = Analyzer()
        for v, r in zip(fresh, rng_list):
            ra.bind(v, r)
        out = []
        for e in imap.apply(fresh):
            r = relax_range(Range(e, IntImm(1)), ra, fresh)
            if r is None:
                raise ScheduleError(prim, subject, "cannot map a region of the buffer through "
                                    "the index map", realize)
            out.append(r)
        return tuple(out)

    def fn(n):
        if isinstance(n, BufferLoad) and n.buffer is buf:
            return BufferLoad(new, index(n.indices))
        if isinstance(n, BufferStore) and n.buffer is buf:
            return BufferStore(new, n.value, index(n.indices))
        if isinstance(n, BufferRegion) and n.buffer is buf:
            return BufferRegion(new, region(n.region))
        if isinstance(n, Allocate) and n.buffer is buf:
            return Allocate(new, n.body)
        if isinstance(n, Block) and buf in n.alloc_buffers:
            return dataclasses.replace(n, alloc_buffers=tuple(
                new if b is buf else b for b in n.alloc_buffers))
        return None

    return with_body(func, rewrite(func.body, fn)), None
