"""The default schedule for prim functions that no one scheduled.

An unscheduled function (attribute "scheduled" not set) that still has blocks and is one
float matmul (``C[i, j] += A[i, k] * B[k, j]``, or a batch of them times one matrix:
`matmul_block`) gets the packed-B register-tile schedule that
bench/matmul.py measures (`pyir.schedule.gemm`), with the tiles of the target the build is
for (`pyir.transform.lower`'s ``target``): 2.5-7x the speed of the rules below.
With few rows the tiles read B in place (1.1-2.9x the speed of the rules below for 1 to 8
rows times 784x512): with the rows known, up to two tiles as tall as the registers allow
(`gemm.reads_b_in_place`, `gemm.few_rows_tile`; 1.1-1.8x packing B for 16-28 rows), A
copied k-major first when such a tile's rows would share one L1 cache set
(`gemm.packs_a`: 1.4-1.7x for 9-14 rows times 4096x4096); with the rows known only when
called, fewer than three 7-row tiles, the function holding both nests and choosing when
called. Any other such function gets:
- consecutive loop nests over the same rows fused into one row loop (softmax, layernorm:
  a row reduction, then elementwise work with its result), when every access to a buffer
  that the nests write indexes its first dimension by exactly the row variable, so that
  each row stays in cache between the nests, and the fused row loop may run in parallel;
- a spatial loop swapped with the innermost reduction loop right inside it when the
  block's accesses are then contiguous in it or do not move with it (matmul's ``i, j, k``
  becomes ``i, k, j``: ``j`` vectorizes along rows of B and C);
- its outermost spatial loop(s) parallel: a serial loop whose variable feeds a spatial
  iterator of every block below it and no reduce iterator;
- its innermost spatial loops vectorized when every store of the block below is
  contiguous in the loop (last index moves by 1, other indices do not move);
- its innermost reduction loops annotated ``("reassociate", 1)`` when their variable feeds
  only reduce iterators: codegen lets LLVM reassociate the float additions and
  multiplications in them, so that a row sum becomes vector partial sums (what numpy's
  pairwise sums do too) instead of one chain of dependent additions.
A loop that is both parallel and vectorized becomes parallel with annotation
``("vectorize", 1)``: codegen vectorizes the chunk each worker runs.

Whether a loop *may* run in parallel or vectorized is not decided here: a loop changes
kind (and nests fuse) only where `Schedule.parallel` / `Schedule.vectorize` would accept
the loop, by their rule, `pyir.transform.dependence.iteration_conflict` (from the blocks'
``reads``/``writes``: no iteration may touch what another one writes). An in-place scan
``A[i + 1] += A[i]`` stays serial. Those rules read blocks only: a function with a store or
a kernel call in a loop outside any block in it (`block_checks.loose_statement`) keeps its
loops as written (a parallel loop of ``s[0] = s[0] + 1`` beside a block raced).
"""

import dataclasses
import functools
import math

from ..arith import vars_of
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import substitute, walk, with_fields
from .block_checks import block_fault, loose_statement
from .common import LowerError, fresh_copy, has_blocks, prim_func_pass, replace_func
from .dependence import iteration_conflict
from .linear import coefficient

#: Constant extents below this are not worth vectorizing.
MIN_VECTOR_EXTENT = 4
#: The annotation of a loop whose float additions and multiplications may be reassociated.
REASSOCIATE = ("reassociate", 1)


def _register_tiled(func, target):
    """``func`` under the register-tile schedule if it is one float matmul
    (`matmul_block`), else None. With the rows known, B is read in place where
    `gemm.reads_b_in_place` says (in `gemm.few_rows_tile` tiles, A packed as `gemm.packs_a`
    says), else packed; rows known only when called choose between the packed nest and one
    reading B in place, for `gemm.MIN_PACKED_ROW_TILES` row tiles or more (batch
    included)."""
    found = _matmul(func)
    if found is None:
        return None
    from ..schedule import Schedule, ScheduleError, gemm   # built on these passes
    name, a, b, c = found
    tile = gemm.register_tile(c.dtype, target)
    rows = _rows(c)

    def tiled(pack_b, tile=tile, pack_a=False):
        return gemm.schedule_matmul(Schedule(func), name, tile, pack_b=pack_b, b=b.name,
                                    pack_a=pack_a, a=a.name).mod[func.name]

    try:
        if isinstance(rows, E.IntImm):
            per_batch = c.shape[-2].value
            batches = rows.value // per_batch if per_batch else 0
            if not gemm.reads_b_in_place(batches, per_batch, c.dtype, target):
                return tiled(True)
            few = gemm.few_rows_tile(per_batch, c.dtype, target)
            k = a.shape[-1]
            return tiled(False, few, gemm.packs_a(
                few[0], k.value if isinstance(k, E.IntImm) else None, c.dtype))
        packed, in_place = tiled(True), tiled(False)
    except ScheduleError:
        return None   # the generic rules apply
    packed_from = (gemm.MIN_PACKED_ROW_TILES - 1) * tile[0] + 1
    return replace_func(packed, body=S.IfThenElse(
        E.Binary("ge", rows, E.IntImm(packed_from)), packed.body,
        _renamed_blocks(fresh_copy(in_place.body), "_few_rows")))


def _rows(c):
    """The rows of the matmul's output ``c``, batch included: an expression (constant if
    known)."""
    rows = c.shape[:-1]
    if all(isinstance(r, E.IntImm) for r in rows):
        return E.IntImm(math.prod(r.value for r in rows))
    return functools.reduce(lambda x, y: E.Binary("mul", x, y), rows)


def matmul_block(func):
    """The name of the block when the body of prim function ``func`` is one loop nest
    ``for i, j, k`` over a block computing ``C[i, j] += A[i, k] * B[k, j]`` from an init of
    0 -- or ``for b, i, j, k`` over ``C[b, i, j] += A[b, i, k] * B[k, j]`` (a batch of rows
    times one matrix) -- with A, B and C its three parameters (whatever their names), float32
    or float64, the loops from 0 over the buffers' extents, the block's reads and writes
    declared (as the parser infers them); else None."""
    found = _matmul(func)
    return None if found is None else found[0]


def _matmul(func):
    """(block name, A, B, C) of the matmul `matmul_block` describes, or None."""
    loops, s = [], func.body
    while isinstance(s, S.For):
        loops.append(s)
        s = s.body
    if len(loops) not in (3, 4) or not isinstance(s, S.BlockRealize):
        return None
    block = s.block
    rank = len(loops) - 1
    body = block.body
    if not (isinstance(body, S.BufferStore) and isinstance(body.value, E.Binary)
            and body.value.op == "add" and isinstance(body.value.b, E.Binary)
            and body.value.b.op == "mul"
            and all(isinstance(x, E.BufferLoad) for x in (body.value.b.a, body.value.b.b))):
        return None
    c, a, b = body.buffer, body.value.b.a.buffer, body.value.b.b.buffer
    if (len({a, b, c}) != 3 or set(func.params) != {a, b, c}
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
    return block.name, a, b, c


def _plain(loops, realize):
    """Serial loops from 0 without annotations, bound one to one to the block's iterators
    (no T.where)."""
    return (all(loop.kind == "serial" and not loop.annotations and loop.start == E.IntImm(0)
                for loop in loops)
            and list(realize.iter_values) == [loop.loop_var for loop in loops]
            and realize.predicate == E.IntImm(1, "bool"))


def _independent(loop, outer):
    """Whether the iterations of ``loop`` may run at the same time (parallel or vectorized):
    the check of `Schedule.parallel` and `Schedule.vectorize`, ``outer`` being the loops
    around ``loop`` inside its block (their ranges)."""
    return iteration_conflict(loop, outer, [loop.loop_var], allow_reduce_reorder=False) is None


def _along_tails(visit):
    """``visit(stmt, *context)`` run by `S.follow_tails`: a sequence, let or allocation
    (which leave the context as it is) hands its last statement or body back as a `S.Tail`
    (see `_map_children`) instead of recursing into it."""
    @functools.wraps(visit)
    def run(stmt, *context):
        return S.follow_tails(stmt, lambda s: visit(s, *context))
    return run


def _inner(stmt, outer):
    """The loops around the children of ``stmt`` (a block starts a new scope)."""
    if isinstance(stmt, S.For):
        return outer + (stmt,)
    return () if isinstance(stmt, (S.Block, S.BlockRealize)) else outer


def _realizes(stmt):
    return [n for n in walk(stmt) if isinstance(n, S.BlockRealize)]


def _only_drives(loop, kind):
    """The loop variable binds an iterator of ``kind`` ("S" spatial, "R" reduce) of every
    block below, and none of the other kind."""
    realizes = _realizes(loop.body)
    return bool(realizes) and all(
        {iv.kind for iv, value in zip(r.block.iter_vars, r.iter_values)
         if any(n is loop.loop_var for n in walk(value))} == {kind} for r in realizes)


def _spatial_only(loop):
    return _only_drives(loop, "S")


@_along_tails
def _reassociate(stmt, outer):
    """Annotate innermost reduction loops whose iterations may be reordered (see the module
    docstring)."""
    if isinstance(stmt, S.For):
        if stmt.kind == "serial" and not _has_loop(stmt.body) and _only_drives(stmt, "R") \
                and iteration_conflict(stmt, outer, [stmt.loop_var],
                                       allow_reduce_reorder=True) is None:
            return dataclasses.replace(stmt, annotations=stmt.annotations + (REASSOCIATE,))
        return dataclasses.replace(stmt, body=_reassociate(stmt.body, outer + (stmt,)))
    return _map_children(stmt, lambda s: _reassociate(s, _inner(stmt, outer)))


@_along_tails
def _reduction_outward(stmt, outer):
    """Swap a spatial loop with the reduction loop right inside it, the innermost, when
    every access of the block is then contiguous in the spatial loop or does not move with
    it, and the swap is legal (the check of `Schedule.reorder`): matmul's ``i, j, k``
    becomes ``i, k, j``, whose ``j`` vectorizes along rows of B and C, where ``k``
    innermost read B down a column. A row sum stays as it is (its rows are the strided
    side)."""
    if not isinstance(stmt, S.For):
        return _map_children(stmt, lambda s: _reduction_outward(s, _inner(stmt, outer)))
    inner = stmt.body
    if not (stmt.kind == "serial" and isinstance(inner, S.For) and inner.kind == "serial"
            and isinstance(inner.body, S.BlockRealize)):
        return dataclasses.replace(stmt, body=_reduction_outward(stmt.body, outer + (stmt,)))
    swapped = dataclasses.replace(stmt, body=inner.body)
    inner_range = vars_of(inner.start) | vars_of(inner.extent)
    if not (_spatial_only(stmt) and _only_drives(inner, "R") and _contiguous(swapped)
            and _loads_follow(swapped) and stmt.loop_var not in inner_range):
        return stmt
    moved = [stmt.loop_var, inner.loop_var]
    if iteration_conflict(stmt, outer, moved, allow_reduce_reorder=True) is not None:
        return stmt
    return dataclasses.replace(inner, body=swapped)


def _loads_follow(loop):
    """Every load of the block below ``loop`` is contiguous in the loop variable (last
    index moving by 1, the others not) or does not move with it."""
    return all(_step(ld.indices, loop.loop_var) in (0, 1)
               for ld in walk(_bound_body(loop.body)) if isinstance(ld, E.BufferLoad))


def _bound_body(realize):
    """The block's body with its iterators replaced by their bindings."""
    block = realize.block
    return substitute(block.body, dict(zip((iv.var for iv in block.iter_vars),
                                           realize.iter_values)))


def _step(indices, var):
    """How far an access at ``indices`` moves along its last dimension per step of ``var``
    when no other index moves with it (0 for no index), else None."""
    moves = [coefficient(i, var) for i in indices]
    if None in moves or any(moves[:-1]):
        return None
    return moves[-1] if moves else 0


def _contiguous(loop):
    body = loop.body
    if not isinstance(body, S.BlockRealize):
        return False
    if isinstance(loop.extent, E.IntImm) and loop.extent.value < MIN_VECTOR_EXTENT:
        return False
    stores = [n for n in walk(_bound_body(body)) if isinstance(n, S.BufferStore)]
    if not stores or any(isinstance(n, (S.For, S.BlockRealize)) for n in walk(body.block.body)):
        return False
    return all(_step(st.indices, loop.loop_var) == 1 for st in stores)


def _accesses(loop):
    """(buffer, is a store, first index is the row variable) for every access in the
    blocks below ``loop``."""
    for r in _realizes(loop.body):
        binding = {iv.var: v for iv, v in zip(r.block.iter_vars, r.iter_values)}
        for n in walk(substitute(r.block, binding)):
            if isinstance(n, (E.BufferLoad, S.BufferStore)):
                yield (n.buffer, isinstance(n, S.BufferStore),
                       bool(n.indices) and n.indices[0] is loop.loop_var)


def _fused(a, b):
    """``a`` and ``b`` (``a`` maybe already fused) as one row loop, or None when they are not
    row nests (see the module docstring)."""
    if not (isinstance(a, S.For) and isinstance(b, S.For) and a.kind == b.kind == "serial"
            and a.start == b.start and a.extent == b.extent
            and _spatial_only(a) and _spatial_only(b)):
        return None
    accesses = list(_accesses(a)) + list(_accesses(b))
    written = {buf for buf, store, _ in accesses if store}
    if not all(row for buf, _, row in accesses if buf in written):
        return None
    body = substitute(b.body, {b.loop_var: a.loop_var})
    return dataclasses.replace(a, body=S.seq(a.body, body))


def _fuse_run(nests, whole, outer, proven):
    """The loops for a run of row nests, ``whole`` being all of them fused (`_fused`): fused
    where the fused loop's iterations are independent, since they may then run in any
    order, the fused one (each row's first nest, then its second) included; each such loop
    goes to ``proven``. The whole run is asked first (one check in the usual case), then
    nest by nest."""
    if _independent(whole, outer):
        proven[id(whole)] = whole
        return [whole]
    out = [nests[0]]
    for b in nests[1:]:
        fused = _fused(out[-1], b)
        if fused is not None and _independent(fused, outer):
            out[-1] = proven[id(fused)] = fused
        else:
            out.append(b)
    return out


@_along_tails
def _fuse_rows(stmt, outer, proven):
    """Fuse runs of consecutive row loops (see the module docstring)."""
    if not isinstance(stmt, S.SeqStmt):
        return _map_children(stmt, lambda s: _fuse_rows(s, _inner(stmt, outer), proven))
    tail = stmt.stmts[-1] if stmt.stmts and isinstance(stmt.stmts[-1], (S.LetStmt, S.Allocate)) \
        else None
    runs = []   # [nests, the nests fused]
    for s in (_fuse_rows(x, outer, proven) for x in stmt.stmts[:-1 if tail else None]):
        fused = _fused(runs[-1][1], s) if runs else None
        if fused is not None:
            runs[-1] = [runs[-1][0] + [s], fused]
        else:
            runs.append([[s], s])
    out = []
    for nests, whole in runs:
        out += _fuse_run(nests, whole, outer, proven) if len(nests) > 1 else nests
    if tail is not None:   # a let or allocation is no row loop: it fuses with nothing
        return S.Tail(tail, lambda last: S.seq(*out, last))
    return S.seq(*out)


def _has_loop(stmt):
    return any(isinstance(n, S.For) for n in walk(stmt))


@_along_tails
def _vectorize(stmt, outer, proven):
    """Mark innermost contiguous spatial loops whose iterations are independent vectorized
    (a rebuilt statement); such loops go to ``proven``, and so does the rebuilt copy of a
    loop there (loop kinds below it do not change what its iterations access)."""
    if isinstance(stmt, S.For):
        if not _has_loop(stmt.body) and stmt.kind == "serial":
            if _spatial_only(stmt) and _contiguous(stmt) and _independent(stmt, outer):
                stmt = dataclasses.replace(stmt, kind="vectorized")
                proven[id(stmt)] = stmt
            return stmt
        new = dataclasses.replace(stmt, body=_vectorize(stmt.body, outer + (stmt,), proven))
        if proven.get(id(stmt)) is stmt:
            proven[id(new)] = new
        return new
    return _map_children(stmt, lambda s: _vectorize(s, _inner(stmt, outer), proven))


@_along_tails
def _parallelize(stmt, outer, proven):
    """Mark the outermost spatial loop of each loop nest parallel when its iterations are
    independent (known for the loops in ``proven``)."""
    if isinstance(stmt, S.For):
        if stmt.kind == "vectorized" and _spatial_only(stmt):
            if not _known_independent(stmt, outer, proven):
                return stmt
            return dataclasses.replace(stmt, kind="parallel",
                                       annotations=stmt.annotations + (("vectorize", 1),))
        if stmt.kind != "serial" or not _spatial_only(stmt):
            return stmt
        if any(isinstance(n, S.For) and n.kind == "parallel" for n in walk(stmt.body)):
            return stmt
        if isinstance(stmt.extent, E.IntImm) and stmt.extent.value < 2:
            return stmt
        if not _known_independent(stmt, outer, proven):
            return stmt
        return dataclasses.replace(stmt, kind="parallel")
    return _map_children(stmt, lambda s: _parallelize(s, _inner(stmt, outer), proven))


def _known_independent(loop, outer, proven):
    return proven.get(id(loop)) is loop or _independent(loop, outer)


def _map_children(stmt, fn):
    """``stmt`` with ``fn`` applied to the statements in it; for a sequence, let or
    allocation, a `S.Tail` for `_along_tails` to visit the last of them."""
    if isinstance(stmt, S.SeqStmt) and stmt.stmts:
        head = tuple(fn(s) for s in stmt.stmts[:-1])
        return S.Tail(stmt.stmts[-1], lambda last: S.SeqStmt(head + (last,)))
    if isinstance(stmt, S.BlockRealize):
        return dataclasses.replace(stmt, block=_map_children(stmt.block, fn))
    if isinstance(stmt, (S.Allocate, S.LetStmt)):
        return S.Tail(stmt.body, lambda body: dataclasses.replace(stmt, body=body))
    if isinstance(stmt, S.Block):
        return dataclasses.replace(stmt, body=fn(stmt.body))
    if isinstance(stmt, S.IfThenElse):
        return dataclasses.replace(stmt, then_case=fn(stmt.then_case),
                                   else_case=None if stmt.else_case is None
                                   else fn(stmt.else_case))
    return stmt


@prim_func_pass
def default_schedule(func, target="llvm"):
    """Parallelize and vectorize an unscheduled function (see the module docstring); a
    matmul gets the register tile of ``target``."""
    if func.attr("scheduled") or not has_blocks(func):
        return func
    wrong = block_fault(func)
    if wrong:
        raise LowerError(f"prim function {func.name}: {wrong}; the default schedule trusts what "
                         "a block states")
    tiled = _register_tiled(func, target)
    if tiled is not None:
        return tiled
    if loose_statement(func.body, in_loop=True) is not None:
        return func
    proven = {}   # id -> loop whose iterations `_independent` found independent
    body = _reduction_outward(_fuse_rows(func.body, (), proven), ())
    body = _vectorize(body, (), proven)
    body = _reassociate(_parallelize(body, (), proven), ())
    return replace_func(func, body=body)


def _renamed_blocks(stmt, suffix):
    """``stmt`` with ``suffix`` added to the name of every block in it (a second copy of a
    nest in one function: blocks are found by name, each needs its own)."""
    return S.rewrite_stmts(stmt, lambda n: with_fields(n, name=n.name + suffix)
                           if isinstance(n, S.Block) else None)
