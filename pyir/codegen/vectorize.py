"""Whether a vectorized loop body can become LLVM vector code directly (and as masked
vectors), how many lanes to use, and how vectors cover a constant extent.

Lanes vary only through the loop variable (and lets of varying values). Direct vector
code needs: ``if`` conditions and inner loop bounds that do not vary, no allocation or
extern call, no memory read that only one side of a varying choice may perform unless
it is contiguous (a masked load then reads only the lanes that choose that side), and no
element written in one iteration and touched in another (`iterations_apart`); else the
loop stays a scalar loop, whose order is the loop's.
"""

import math

from ..arith import known_multiple, simplify, vars_of
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import substitute, walk
from ..transform.linear import coefficient
from .emit_expr import has_side_reads

MAX_LANES = 64


def _lanes(widest, vector_bits):
    """Lanes filling the widest register for elements of ``widest`` bits, or None."""
    lanes = min(MAX_LANES, vector_bits // widest)
    return lanes if lanes >= 2 else None


def _survey(body, var):
    """``(widest, maskable)``: the bits of the widest element ``body`` touches (at least 8)
    and whether it may run as masked vectors over ``var`` (see `can_mask`), in one walk."""
    widest, maskable = 8, True
    for n in walk(body):
        if isinstance(n, (E.BufferLoad, S.BufferStore)):
            widest = max(widest, dt.bits(n.buffer.dtype))
            if maskable:
                (index,) = n.indices
                varies = var in vars_of(index)
                maskable = not ((varies and coefficient(index, var) != 1) or (
                    isinstance(n, S.BufferStore) and not varies))
        elif isinstance(n, E.Cast):
            widest = max(widest, dt.bits(n.dtype))
        elif maskable and isinstance(n, S.LetStmt) and var in vars_of(n.value):
            maskable = False
        elif maskable and isinstance(n, E.Binary) and n.op in ("floordiv", "floormod") and \
                dt.is_integer(n.dtype) and not isinstance(n.b, E.IntImm):
            maskable = False
    return widest, maskable


def vector_chunks(extent, lanes):
    """``(offset, width)`` of the vectors that cover ``range(extent)`` exactly, in the order
    to emit them: whole vectors of ``lanes`` (a power of two), then the rest in narrower
    powers of two, each at a multiple of its width; the narrower ones go first. Over 8
    lanes, 20 is ``(16, 4), (0, 8), (8, 8)`` and 7 is ``(6, 1), (4, 2), (0, 4)``.

    The order is free (the iterations of a vectorized loop are independent), and narrow
    first keeps a register tile in registers: with a row's ``<4 x float>`` accumulator
    updated after its ``<8 x float>`` one (the last use of the row's broadcast of A), LLVM
    rotated accumulators through the broadcast's register and spilled some in the k loop
    of a 6 x 12 tile at O3 (AVX2: 50 GFLOPS against 70 narrow first)."""
    chunks, offset, width = [], 0, lanes
    while offset < extent:
        while offset + width > extent:
            width //= 2
        chunks.append((offset, width))
        offset += width
    return sorted(chunks, key=lambda chunk: chunk[1])


def _varies(e, varying):
    return not vars_of(e).isdisjoint(varying)


def _reads_under_mask(e, var, varying):
    """Whether vector code for ``e`` reads memory only in the lanes of a mask: every load
    is contiguous in ``var`` (a masked load), and nothing calls out or checks an index."""
    for n in walk(e):
        if isinstance(n, E.BufferLoad):
            (index,) = n.indices
            if coefficient(index, var) != 1 or _varies(index, varying - {var}):
                return False
        elif isinstance(n, E.Call) and n.op in ("call_extern", "checked_index"):
            return False
    return True


def _expr_ok(e, var, varying):
    for n in walk(e):
        if isinstance(n, E.Call) and n.op == "call_extern":
            return False
        if isinstance(n, E.Select) and _varies(n.cond, varying) and not (
                _reads_under_mask(n.true_value, var, varying)
                and _reads_under_mask(n.false_value, var, varying)):
            return False
        if isinstance(n, E.Binary) and n.op in ("and", "or") and has_side_reads(n.b) and (
                _varies(n.a, varying) or _varies(n.b, varying)):
            return False
    return True


def beyond_llvm(body):
    """Whether LLVM's vectorizer fails on ``body`` (which `can_vectorize` refused): it
    calls native code, or chooses between values that read memory."""
    return any((isinstance(n, E.Call) and n.op == "call_extern")
               or (isinstance(n, E.Select) and (has_side_reads(n.true_value)
                                                or has_side_reads(n.false_value)))
               or (isinstance(n, E.Binary) and n.op in ("and", "or") and has_side_reads(n.b))
               for n in walk(body))


def can_vectorize(body, var):
    varying = {var}

    def ok(s):
        return S.follow_tails(s, step)

    def step(s):
        if isinstance(s, S.SeqStmt):
            if not all(ok(x) for x in s.stmts[:-1]):
                return False
            return S.Tail(s.stmts[-1]) if s.stmts else True
        if isinstance(s, S.BufferStore):
            return all(_expr_ok(e, var, varying) for e in (s.value,) + s.indices)
        if isinstance(s, S.LetStmt):
            if not _expr_ok(s.value, var, varying):
                return False
            if _varies(s.value, varying):
                varying.add(s.var)
            return S.Tail(s.body)
        if isinstance(s, S.IfThenElse):
            return (not _varies(s.condition, varying) and _expr_ok(s.condition, var, varying)
                    and ok(s.then_case) and (s.else_case is None or ok(s.else_case)))
        if isinstance(s, S.For):
            return (not _varies(s.start, varying) and not _varies(s.extent, varying)
                    and ok(s.body))
        return False

    return ok(body) and iterations_apart(body, var)


def iterations_apart(body, var):
    """Whether no element the body writes is touched by two iterations of the loop over
    ``var``: vector code runs each statement for all lanes at once, so a write one
    iteration makes and another reads or writes (``A[0] = A[0] + B[i]``, ``A[i + 1] =
    A[i] + B[i]``) would not be seen in the loop's order (``T.vectorized`` in a script
    is not checked as ``Schedule.vectorize`` is). Each store's index must move with
    ``var`` by a constant step, and each other access to that buffer be the same index or
    one a constant apart that no other iteration reaches (not a multiple of the step)."""
    writes = {}
    for n in S.walk_stmts(body):
        if isinstance(n, S.BufferStore):
            (index,) = n.indices
            if not coefficient(index, var):   # 0 (one element for every lane) or unknown
                return False
            writes.setdefault(n.buffer, []).append(index)
    if not writes:
        return True
    accesses = [n for n in walk(body) if isinstance(n, (E.BufferLoad, S.BufferStore))
                and n.buffer in writes]
    for n in accesses:
        (index,) = n.indices
        for written in writes[n.buffer]:
            if index == written:
                continue
            step = coefficient(written, var)
            apart = simplify(E.Binary("sub", written, index))
            if coefficient(index, var) != step or not isinstance(apart, E.IntImm) \
                    or apart.value % step == 0:
                return False
    return True


def can_mask(body, var):
    """Whether ``body`` (vectorizable) may run as masked vectors over ``var``: every access
    whose index varies is contiguous (coefficient 1, so masked loads and stores cover it),
    every store varies, no let varies, and no integer division could trap on the lanes
    masked off."""
    return _survey(body, var)[1]


def vector_plan(body, var, vector_bits):
    """``(lanes, maskable)`` for a vectorized loop over ``var``: the lanes of direct vector
    code (None when the body cannot become vector code directly) and whether it may also
    run as masked vectors (`can_mask`)."""
    widest, maskable = _survey(body, var)
    lanes = _lanes(widest, vector_bits)
    if lanes is None or not can_vectorize(body, var):
        return None, False
    return lanes, maskable


def padded_rows(alloc, upper_bound):
    """The row width ``w`` of the constant-size buffer ``alloc`` allocates when masked
    vector code may load and store whole rows of it, else None.

    That holds when every access to it is ``L[r + v]`` inside a vectorized loop over ``v``
    from 0, with ``r`` a multiple of ``w`` that does not vary with ``v``, and every such
    loop has the same extent ``e``, at most ``w`` (``upper_bound(e)``) and unchanged inside
    the allocation (the tile of a split's tail: ``for j in T.vectorized(T.min(16, n -
    j0 * 16))`` over ``C_local[i * 16 + j]``). Element ``(r, c)`` is then touched only by
    lane ``c``, and an element at ``c >= e`` only by lanes masked off: what a whole-row
    store leaves there is never read by a lane that counts, and the tile needs no masked
    stores (slow: a fifth of a symbolic matmul's time at n = 999).
    """
    buf = alloc.buffer
    (size,) = buf.shape
    if not isinstance(size, E.IntImm):
        return None
    lets, inner, extents, rows = {}, set(), [], []

    def accesses_ok(e, lane):
        for n in walk(e):
            if isinstance(n, E.BufferLoad) and n.buffer == buf and not access_ok(n, lane):
                return False
        return True

    def access_ok(access, lane):
        if lane is None:
            return False
        var, extent = lane
        (index,) = access.indices
        index = substitute(index, lets)
        if coefficient(index, var) != 1:
            return False
        # Coefficient 1: the index is var plus terms without it, and r is what that is.
        rows.append(known_multiple(E.Binary("sub", index, var)))
        extents.append(extent)
        return True

    def ok(s, lane):
        return S.follow_tails(s, lambda s: step(s, lane))

    def step(s, lane):
        if isinstance(s, S.SeqStmt):
            if not all(ok(x, lane) for x in s.stmts[:-1]):
                return False
            return S.Tail(s.stmts[-1]) if s.stmts else True
        if isinstance(s, S.LetStmt):
            inner.add(s.var)
            lets[s.var] = substitute(s.value, lets)
            return accesses_ok(s.value, lane) and S.Tail(s.body)
        if isinstance(s, S.For):
            inner.add(s.loop_var)
            if s.kind == "parallel" or not (accesses_ok(s.start, lane)
                                            and accesses_ok(s.extent, lane)):
                return False
            if s.kind == "vectorized" and lane is None:
                if not (isinstance(s.start, E.IntImm) and s.start.value == 0):
                    return False
                lane = (s.loop_var, substitute(s.extent, lets))
            return ok(s.body, lane)
        if isinstance(s, S.BufferStore):
            return ((s.buffer != buf or access_ok(s, lane)) and accesses_ok(s.value, lane)
                    and all(accesses_ok(i, lane) for i in s.indices))
        if isinstance(s, S.IfThenElse):
            return (accesses_ok(s.condition, lane) and ok(s.then_case, lane)
                    and (s.else_case is None or ok(s.else_case, lane)))
        return not any(isinstance(n, (E.BufferLoad, S.BufferStore)) and n.buffer == buf
                       for n in walk(s))

    if not ok(alloc.body, None) or not extents:
        return None
    extent = extents[0]
    if any(e != extent for e in extents) or not vars_of(extent).isdisjoint(inner):
        return None
    width = math.gcd(*rows) or size.value
    most = upper_bound(extent)
    if most is None or most > width or size.value % width:
        return None
    return width
