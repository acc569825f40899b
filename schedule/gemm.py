"""The packed-B register-tile schedule of a matmul block, and the test of which functions
are one plain matmul.

``C[i, j] += A[i, k] * B[k, j]``: B is packed into panels of ``cols`` columns
(``B_global[j // cols, k, j % cols]``, contiguous along each panel's rows); C is computed in
tiles of ``rows x cols`` kept in vector registers across the whole ``k`` loop, the tile's
rows unrolled and its columns vectorized; the row tiles run in parallel. Partial tiles of a
split tail keep the same loops, masked. A batch of row blocks times one matrix,
``C[b, i, j] += A[b, i, k] * B[k, j]`` (activations times weights), is tiled the same way in
each batch, the batch and row-tile loops fused into one parallel loop. bench/matmul.py
measures the schedule, and the default schedule gives it to an unscheduled function that
is one float matmul (`pyir.transform.default_schedule`).
"""

from ..codegen.target import Target
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S


def register_tile(dtype="float32", target="llvm"):
    """(rows, columns) of the register tile for ``dtype`` on ``target``: 7 rows of 2 vectors
    with 32 vector registers (AVX-512: 14 accumulators, 2 vectors of B, one of A), 6 rows
    with 16 (AVX2: 12 + 2 + 1; 7 rows would spill)."""
    bits = Target.from_string(target).vector_bits
    lanes = max(bits // dt.bits(dtype), 1)
    return (7, 2 * lanes) if bits >= 512 else (6, 2 * lanes)


def schedule_matmul(sch, block, tile, parallel=True, tensorize=None):
    """Apply the register-tile schedule (see the module docstring) to the matmul ``block``
    of ``sch`` (a BlockRV or its name), whose B operand is the buffer named "B". With
    ``tensorize`` (a registered tensor intrinsic's name) the tile update of one k step is
    that micro-kernel in whole tiles; partial tiles keep the unrolled, vectorized loops."""
    tile_i, tile_j = tile
    c = sch.get_block(block) if isinstance(block, str) else block
    bp = sch.cache_read(c, "B", "global")
    sch.transform_layout(bp, ("write", 0), f"k, j -> j // {tile_j}, k, j % {tile_j}")
    p0, p1 = sch.get_loops(bp)
    _, p11 = sch.split(p1, factors=[None, tile_j])
    sch.vectorize(p11)
    if parallel:
        sch.parallel(p0)
    *batch, i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, tile_i])
    j0, j1 = sch.split(j, factors=[None, tile_j])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0)
    init = sch.decompose_reduction(c, k)
    for blk in (init, cw):
        a, b = sch.get_loops(blk)[-2:]
        sch.unroll(a)
        sch.vectorize(b)
    sch.unroll(i1)
    sch.vectorize(j1)
    if tensorize is not None:
        # The micro-kernel takes the tile with rows tile_j apart: lay the accumulator out in
        # tiles (lowering then shrinks it to one tile per (i0, j0), in registers).
        sch.transform_layout(cw, ("read", 0), f"i, j -> i // {tile_i}, j // {tile_j}, "
                                              f"i % {tile_i}, j % {tile_j}")
        sch.tensorize(i1, tensorize)
    if parallel:
        sch.parallel(sch.fuse(*batch, i0) if batch else i0)
    return sch


def matmul_block(func):
    """The name of the block when the body of prim function ``func`` is one loop nest
    ``for i, j, k`` over a block computing ``C[i, j] += A[i, k] * B[k, j]`` from an init of
    0 -- or ``for b, i, j, k`` over ``C[b, i, j] += A[b, i, k] * B[k, j]`` (a batch of rows
    times one matrix) -- with A, B and C float32 or float64 parameters named so, the loops
    from 0 over the buffers' extents, the block's reads and writes declared (as the parser
    infers them); else None."""
    loops, s = [], func.body
    while isinstance(s, S.For):
        loops.append(s)
        s = s.body
    if len(loops) not in (3, 4) or not isinstance(s, S.BlockRealize):
        return None
    block = s.block
    names = {p.name: p for p in func.params if isinstance(p, E.Buffer)}
    a, b, c = (names.get(x) for x in "ABC")
    rank = len(loops) - 1
    if (a is None or b is None or c is None or len(func.params) != 3
            or c.dtype not in ("float32", "float64")
            or any(x.dtype != c.dtype for x in (a, b))
            or [len(x.shape) for x in (a, b, c)] != [rank, 2, rank] or not _plain(loops, s)
            or [iv.kind for iv in block.iter_vars] != ["S"] * rank + ["R"]
            or block.alloc_buffers
            or {r.buffer for r in block.reads} != {a, b, c}
            or {w.buffer for w in block.writes} != {c}):
        return None
    *rows, vj, vk = (iv.var for iv in block.iter_vars)
    *outer, m, k = (loop.extent for loop in loops)
    if not all(x == y for x, y in zip((*outer, m, *outer, k, k, m),
                                      (*c.shape, *a.shape, *b.shape))):
        return None
    acc = E.BufferLoad(c, (*rows, vj))
    update = S.BufferStore(c, E.Binary("add", acc, E.Binary(
        "mul", E.BufferLoad(a, (*rows, vk)), E.BufferLoad(b, (vk, vj)))), (*rows, vj))
    zero = S.BufferStore(c, E.FloatImm(0.0, c.dtype), (*rows, vj))
    if block.body != update or block.init != zero:
        return None
    return block.name


def _plain(loops, realize):
    """Serial loops from 0 without annotations, bound one to one to the block's iterators
    (no T.where)."""
    return (all(loop.kind == "serial" and not loop.annotations and loop.start == E.IntImm(0)
                for loop in loops)
            and list(realize.iter_values) == [loop.loop_var for loop in loops]
            and realize.predicate == E.IntImm(1, "bool"))
