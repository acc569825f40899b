"""The packed-B register-tile schedule of a matmul block.

``C[i, j] += A[i, k] * B[k, j]``: B is packed into panels of ``cols`` columns
(``B_global[j // cols, k, j % cols]``, contiguous along each panel's rows); C is computed in
tiles of ``rows x cols`` kept in vector registers across the whole ``k`` loop, the tile's
rows unrolled and its columns vectorized. The panels are the outer loop and the row tiles
the inner one, so that one panel (``k x cols`` floats: 128 KiB for k = 1024) stays in the
core's L2 cache while every row tile reads it, and only A streams from memory: with the
row tiles outside, all of packed B streamed through for every row tile, which ran at 40 %
of the FMA peak on an Intel Xeon (emeraldrapids, 2 MiB L2) and at about 80 % with the
panels outside. With enough groups of `PANEL_GROUP` panels (`grouped_panels`), each row
tile runs over the panels of one group in turn, so that A streams once per group. The
panels (or groups) run in parallel when there are `MIN_PARALLEL_PANELS` or more of them
(or their number is known only when called), else the row tiles. Partial tiles of
a split tail keep the same loops, masked. With ``pack_b=False`` the tiles read B in place
(for so few row tiles that packing costs more: `reads_b_in_place`, `MIN_PACKED_ROW_TILES`);
with ``pack_a=True`` they read A from a copy laid out k-major (``A_global[k, i]``), for a
tile whose rows of A would all fall in one set of the L1 data cache (`packs_a`). A batch of
row blocks times one matrix, ``C[b, i, j] += A[b, i, k] * B[k, j]`` (activations times
weights), is tiled the same way under the panel loop, whose panel every batch reads; with
few panels the batch and row-tile loops are fused into one parallel loop. bench/matmul.py
measures the schedule, and the default schedule gives it to an unscheduled function that
is one float matmul (`pyir.transform.default_schedule.matmul_block`).
"""

from ..codegen.target import Target
from ..ir import dtype as dt
from ..ir import expr as E

#: The fewest column panels (a constant count) that run in parallel themselves; with fewer,
#: the row tiles do (two panels would keep only two cores busy).
MIN_PARALLEL_PANELS = 8
#: Column panels in a group: each row tile of A is read once per group and stays in L1
#: while it multiplies the group's panels one after another (``PANEL_GROUP`` x k x cols
#: floats of packed B: 512 KiB for k = 1024, in L2), where with every panel a loop of its own
#: all of A streamed from L3 once per panel. 1024 x 1024 x 1024 on an Intel Xeon (rocketlake,
#: 2 MiB L2), against one panel at a time: groups of 2, 4, 8 ran 1.03x, 1.05x, 1.04x as
#: fast with 2 threads and 1.03x, 1.06x, 1.06x with one; 16 (2 MiB of B) 0.7x with two.
#: With n known only when called (groups of 4, 2 threads): 1.04-1.08x at n = 1024, 1.05x
#: at 999, 1.15x at 900 (whose last group has one partial panel and three past the last
#: column), for 2-3 ms more of schedule and build (37-38 ms against 34-36; 1 thread:
#: 1.06-1.07x). `grouped_panels` says when the schedule groups them.
PANEL_GROUP = 4


def grouped_panels(cols, tile_cols):
    """Whether `schedule_matmul` groups the column panels (`PANEL_GROUP`) of a matmul of
    ``cols`` columns (an expression) in tiles of ``tile_cols``: when ``cols`` is known only
    when called, or is a constant of at least `MIN_PARALLEL_PANELS` groups (the groups run
    in parallel). A partial last group is tested tile by tile
    (`pyir.transform.split_tail_loops`): its whole tiles run the guard-free code, and its
    panels past the last column nothing. With the columns known only when called, the
    parallel loop has one iteration per group: a matmul of at most 128 columns (with the
    AVX-512 tile) runs on one thread."""
    return not isinstance(cols, E.IntImm) or \
        cols.value >= tile_cols * PANEL_GROUP * MIN_PARALLEL_PANELS


#: With the rows known only when called, the fewest row tiles (of `register_tile`'s rows)
#: for which packing B pays: each panel is packed once and read by every row tile, where
#: reading it in place strides through B a row at a time. With the
#: 7-row tile on an Intel Xeon (emeraldrapids), 8 rows times 1024x1024 took 402 us in
#: place and 497 packed, 16 rows 1085 and 856; 8 rows times 4096x4096 14 ms and 31 ms, 16
#: rows 20 and 28, 32 rows 37 and 31. Those packed times were mostly page faults: the
#: runtime now keeps large heap blocks for the next call, and with `few_rows_tile` 8 rows
#: times 4096x4096 took 7.2 ms in place and 10.3 packed, 14 rows 11.3 and 9.9, 28 rows 24.6
#: and 12.7; 14 rows times 1024x1024 0.27 and 0.36.
MIN_PACKED_ROW_TILES = 3
#: With the rows known, the most `few_rows_tile` tiles that read B in place (`packs_a`
#: made tall tiles fast): on an AMD EPYC (Zen 4, 2 threads), 16 and 28 rows times
#: 1024x1024 took 193 and 344-354 us in place against 275-279 and 393-400 packed, times
#: 4096x4096 8.2-8.4 and 7.0-9.2 ms against 9.5-10.3 and 10.0-10.7, times 784x512 63 and
#: 106-116 us against 111 and 153; three tiles (32 rows) were 9-10 % faster in place, five
#: (64 rows) no faster. (The Intel figures above predate `packs_a`: its 14-row tiles missed
#: in L1 there too, 14 rows being more than its 12 ways.)
MAX_IN_PLACE_TILES = 2


def register_tile(dtype="float32", target="llvm"):
    """(rows, columns) of the register tile for ``dtype`` on ``target``: 7 rows of 2 vectors
    with 32 vector registers (AVX-512: 14 accumulators, 2 vectors of B, one of A), 6 rows
    with 16 (AVX2: 12 + 2 + 1; 7 rows would spill)."""
    bits = Target.from_string(target).vector_bits
    lanes = max(bits // dt.bits(dtype), 1)
    return (7, 2 * lanes) if bits >= 512 else (6, 2 * lanes)


def few_rows_tile(rows, dtype="float32", target="llvm"):
    """The register tile for ``rows`` (a constant) read with B in place: the fewest tiles the
    vector registers allow (two accumulators a row beside two vectors of B and one of A: 14
    rows with AVX-512, 6 with AVX2), of equal rows, so that B streams through once per tile
    and no tile is a thin tail. 8 rows are one tile of 8, not one of 7 and one of 1 that read
    all of B again (8 x 784 x 512: 1.5-1.7x faster on an Intel Xeon, emeraldrapids; 11 rows
    1.7x)."""
    cols = register_tile(dtype, target)[1]
    registers = 32 if Target.from_string(target).vector_bits >= 512 else 16
    most = (registers - 3) // 2
    tiles = max(-(-rows // most), 1)
    return max(-(-rows // tiles), 1), cols


#: The bytes of one way of an x86 L1 data cache (64 sets of 64-byte lines, AMD Zen and
#: Intel cores alike): addresses this far apart fall in the same set.
L1_WAY_BYTES = 4096
#: The fewest ways of those caches (32 KiB in 8 ways: AMD Zen 4, Intel before Ice Lake;
#: Intel's 48 KiB caches have 12).
L1_WAYS = 8


def reads_b_in_place(batches, rows, dtype="float32", target="llvm"):
    """Whether ``batches`` blocks of ``rows`` rows (constants) read B in place: in at most
    `MAX_IN_PLACE_TILES` tiles of `few_rows_tile`, each of which streams all of B."""
    tile_rows = few_rows_tile(rows, dtype, target)[0]
    return batches * -(-rows // tile_rows) <= MAX_IN_PLACE_TILES


def packs_a(rows, k, dtype="float32"):
    """Whether a register tile of ``rows`` rows (a constant) should read A packed
    (`schedule_matmul`'s ``pack_a``) when A's rows are ``k`` elements apart (an int, or None
    when known only when called): when its rows fall in one set of the L1 data cache (``k``
    elements a multiple of `L1_WAY_BYTES`) and outnumber the set's `L1_WAYS` ways, the
    loads of each k step evict lines of A that the next steps read again. On an AMD EPYC
    (Zen 4, 2 threads, default schedule, in place against packed A): 9, 11 and 14 rows
    times 4096 x 4096 took 11.2, 12.1 and 14.0 ms against 7.8, 8.7 and 8.4; 14 times 1024 x
    4096 3.3 against 1.6 ms; 11 times 1024 x 1024 154 against 138 us. With k = 784 (rows
    spread over the sets) packing cost 6-9 us in 33-54. With ``k`` unknown, such a tile
    packs: the copy is rows x k elements, against rows x k x columns multiply-adds."""
    if rows <= L1_WAYS:
        return False
    return k is None or k * dt.nbytes(dtype) % L1_WAY_BYTES == 0


def schedule_matmul(sch, block, tile, parallel=True, tensorize=None, pack_b=True, b="B",
                    pack_a=False, a="A"):
    """Apply the register-tile schedule (see the module docstring) to the matmul ``block``
    of ``sch`` (a BlockRV or its name), whose A and B operands are the buffers named ``a``
    and ``b``. With ``tensorize`` (a registered tensor intrinsic's name) the tile update of
    one k step is that micro-kernel in whole tiles; partial tiles keep the unrolled,
    vectorized loops. ``pack_b=False`` reads the tiles' columns of B where they are, for a
    matmul of so few rows that packing B costs more than it saves (`reads_b_in_place`);
    ``pack_a=True`` first copies A k-major, batch first (``A_global[b, k, i]``), so that
    each k step's elements of a tile's rows share one cache line (`packs_a`)."""
    tile_i, tile_j = tile
    c = sch.get_block(block) if isinstance(block, str) else block
    if pack_a:
        lead = "".join(f"b{d}, " for d in range(len(sch.get_loops(c)) - 3))   # batch
        ap = sch.cache_read(c, a, "global")
        sch.transform_layout(ap, ("write", 0), f"{lead}i, k -> {lead}k, i")
    if pack_b:
        bp = sch.cache_read(c, b, "global")
        sch.transform_layout(bp, ("write", 0), lambda k, j: (j // tile_j, k, j % tile_j))
        p0, p1 = sch.get_loops(bp)
        _, p11 = sch.split(p1, factors=[None, tile_j])
        sch.vectorize(p11)
        if parallel:
            sch.parallel(p0)
    *batch, i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, tile_i])
    # Not with a micro-kernel: in a partial last group, the accumulator address it would be
    # passed for a panel past the last column is one the entry conditions cannot bound (the
    # tile's guard bounds 32 times the panel's index), and calls with n = 900 were refused.
    grouped = tensorize is None and grouped_panels(sch.get(j).extent, tile_j)
    if grouped:
        outer, j0, j1 = sch.split(j, factors=[None, PANEL_GROUP, tile_j])
        sch.reorder(outer, *batch, i0, j0, k, i1, j1)
    else:
        j0, j1 = sch.split(j, factors=[None, tile_j])
        outer = j0
        sch.reorder(j0, *batch, i0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0 if grouped else i0)
    init = sch.decompose_reduction(c, k)
    for blk in (init, cw):
        rows_loop, cols_loop = sch.get_loops(blk)[-2:]
        sch.unroll(rows_loop)
        sch.vectorize(cols_loop)
    sch.unroll(i1)
    sch.vectorize(j1)
    if tensorize is not None:
        # The micro-kernel takes the tile with rows tile_j apart: lay the accumulator out in
        # tiles (lowering then shrinks it to one tile per (i0, j0), in registers).
        sch.transform_layout(cw, ("read", 0), lambda i, j: (i // tile_i, j // tile_j,
                                                             i % tile_i, j % tile_j))
        sch.tensorize(i1, tensorize)
    if parallel:
        count = sch.get(outer).extent
        if not isinstance(count, E.IntImm) or count.value >= MIN_PARALLEL_PANELS:
            sch.parallel(outer)
        else:
            sch.parallel(sch.fuse(*batch, i0) if batch else i0)
    return sch
