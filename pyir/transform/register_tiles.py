"""Register tiles and guard-free split tails (runs right after `lower_blocks`).

`compact_buffers`: an allocated buffer (e.g. from ``cache_write(..., "local")``, or a
``cache_read`` stage placed by ``compute_at``) whose every access lies under one statement,
with indices ``base + sum(c * v)`` where ``base`` is the same for all accesses and the ``v``
are loops below that statement with constant bounds, shrinks to the tile those loops span
and is allocated at that statement, when one tile can serve every execution of it
(`_one_tile_serves`). `entry_conditions` runs before, on the buffer as declared, so no
access out of its bounds disappears with the shrinking.
A small tile then lives on the stack, and once codegen unrolls the loops over it (unrolled
and short vectorized loops) every access has a constant offset, so LLVM's SROA/mem2reg keep
it in vector registers.

`split_tail_loops`: a loop ``i_0`` annotated ``{"pyir.split_tail": f}`` (``split`` with a
non-dividing or symbolic extent ``E``; the loop extent is ``(E + f - 1) // f``) guards its
body with ``i_0 * f + i_1 < E``. The body becomes::

    if i_0 < E // f:   body with those guards dropped (always true there)
    else:              body as it was (the last, partial tile)

so the hot path carries no guard per iteration, also for symbolic ``E``. For a constant
``E`` the else branch is one iteration, ``i_0 = E // f``: with that constant the guards
become constant loop bounds, and the last tile is a smaller register tile (its unrolled
loops stay unrolled). A split loop whose body is another one (the rows and columns of a
register tile) is versioned once, inside both loops, on both tests (`_split_nest`): one
copy of the partial tile serves the last row and the last column of tiles. A loop fused
from split loops (annotated ``{"pyir.fused_tails": 1}``) binds its ``f // J`` and
``f % J`` once per iteration and tests its tails' guards there, ``if i_0 * 6 + 5 < n and
j_0 * 16 + 15 < m``, the same way. So does the loop over the panels of a group of column
panels (`_split_panels`: groups split by 128, row tiles, then 4 panels of 32 columns each),
so that a partial last group runs its whole tiles guard-free, and its partial-tile copy
runs only where a tile has an element at all. Variables and buffers defined inside the
guard-free copy are renamed so every definition stays unique.
"""

import math
from functools import reduce

from .. import arith
from ..arith import vars_of
from ..ffi.extern import footprint
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.expr import conjuncts
from ..ir.node import node_fields, rewrite, rewrite_top_down, substitute, walk, with_fields
from .common import fresh_copy, kernel_addresses, prim_func_pass, replace_func
from .linear import coefficient

TAIL_KEY = "pyir.split_tail"
FUSED_TAILS_KEY = "pyir.fused_tails"
#: Set by `split_tail_loops` on a loop whose body it versioned once per iteration (the
#: panels of a group, `_split_panels`): codegen weighs the main version as the likely one.
VERSIONED_KEY = "pyir.versioned"
MAX_TILE_BYTES = 16 * 1024


# ---------------------------------------------------------------- helpers
def _contents(stmt, buf=None):
    """One walk over ``stmt``: the variables it binds (loops and lets), its loops by
    variable, and the accesses of ``buf`` in it (none without ``buf``)."""
    inner, loops, accesses = set(), {}, []
    for n in walk(stmt):
        if isinstance(n, S.For):
            inner.add(n.loop_var)
            loops[n.loop_var] = n
        elif isinstance(n, S.LetStmt):
            inner.add(n.var)
        elif isinstance(n, (E.BufferLoad, S.BufferStore)) and n.buffer is buf:
            accesses.append(n)
    return inner, loops, accesses


def _bound_inside(stmt):
    return _contents(stmt)[0]


def _touches(stmt, buf):
    return any(isinstance(n, (E.BufferLoad, S.BufferStore)) and n.buffer is buf
               for n in walk(stmt))


# ---------------------------------------------------------------- buffer compaction
def _find_site(stmt, buf):
    """The innermost statement under ``stmt`` that holds every access of ``buf``, with
    nothing but loops, sequences and lets between (a path of statements)."""
    path = [stmt]
    while True:
        node = path[-1]
        if isinstance(node, (S.For, S.Allocate)) or (
                isinstance(node, S.LetStmt) and not any(n is buf for n in walk(node.value))):
            path.append(node.body)
        elif isinstance(node, S.SeqStmt):
            holders = [s for s in node.stmts if _touches(s, buf)]
            if len(holders) != 1:
                return path
            path.append(holders[0])
        else:
            return path


def _tile(buf, site):
    """(new shape, index rewriter) for ``buf`` accessed only under ``site``, or None."""
    inner, loops, accesses = _contents(site, buf)
    if not accesses:
        return None
    ana = arith.Analyzer()
    for lp in loops.values():
        ana.bind(lp.loop_var, S.Range(lp.start, lp.extent))
    dims = len(buf.shape)
    bases, lo, hi = [None] * dims, [None] * dims, [None] * dims
    forms = {}
    for acc in accesses:
        form = []
        for d, index in enumerate(acc.indices):
            if not all(isinstance(n, (E.Var, E.IntImm)) or (isinstance(n, E.Binary) and n.op in
                       ("add", "sub", "mul")) for n in walk(index)):
                index = ana.simplify(index)  # (i_0 * 7 + i_1) // 7 -> i_0 for i_1 in [0, 7)
            used = vars_of(index) & inner
            terms = []
            for v in used:
                lp = loops.get(v)
                c = coefficient(index, v)
                if lp is None or c is None or not isinstance(lp.start, E.IntImm) \
                        or not isinstance(lp.extent, E.IntImm):
                    return None
                terms.append((v, c, lp.start.value, lp.extent.value))
            base = ana.simplify(substitute(index, {v: E.IntImm(0) for v in used}))
            if vars_of(base) & inner:
                return None
            if bases[d] is None:
                bases[d] = base
            elif bases[d] != base:
                return None
            a = sum(c * s if c >= 0 else c * (s + e - 1) for _, c, s, e in terms)
            b = sum(c * (s + e - 1) if c >= 0 else c * s for _, c, s, e in terms)
            lo[d] = a if lo[d] is None else min(lo[d], a)
            hi[d] = b if hi[d] is None else max(hi[d], b)
            form.append(terms)
        forms[id(acc)] = form
    shape = tuple(E.IntImm(h - l + 1) for l, h in zip(lo, hi))
    size = 1
    for s in shape:
        size *= s.value
    if size * dt.nbytes(buf.dtype) > MAX_TILE_BYTES or size == 0:
        return None

    def index_of(terms, d):
        e = E.IntImm(-lo[d]) if lo[d] else None
        for v, c, _, _ in sorted(terms, key=lambda t: -abs(t[1])):
            t = v if c == 1 else E.binary("mul", v, E.IntImm(c))
            e = t if e is None else E.binary("add", e, t)
        return e if e is not None else E.IntImm(0)

    return shape, forms, index_of, bases


def _one_tile_serves(bases, shape, path):
    """Whether one tile can hold the buffer for every execution of the site (the end of
    ``path``): no value may flow from one execution to a later one through another tile.
    So the loops between the allocation and the site that move the tile (appear in its
    ``bases``) must be the outermost ones, each of their values with a tile of its own
    (`pyir.arith.tiles_apart`): the executions on one tile then come one after another. A
    running sum ``Tmp[j]`` under ``for i, j`` revisits tile ``j`` after the others; so
    does ``Tmp[i % 2]``."""
    loops, lets, extents = [], set(), {}
    for node in path[:-1]:
        if isinstance(node, S.For):
            loops.append(node.loop_var)
            if isinstance(node.extent, E.IntImm):
                extents[node.loop_var] = node.extent.value
        elif isinstance(node, S.LetStmt):
            lets.add(node.var)
    used = set().union(*(vars_of(b) for b in bases))
    moving = [v for v in loops if v in used]
    if used & lets or loops[:len(moving)] != moving:
        return False
    return arith.tiles_apart(bases, [s.value for s in shape], set(moving), extents,
                             one_to_one=True)


def _kernel_views_kept(site, buf, shape):
    """Whether shrinking ``buf`` to ``shape`` keeps what the extern kernels that ``site``
    passes it to see: a kernel takes an element's address and steps through memory with the
    strides of the shape it was matched with. So the leading dimensions may shrink to one
    element, the others must keep their extents (the slab a kernel steps through keeps its
    strides), and each address passed must start a run of the kernel's declared size within
    that slab."""
    p = next((d for d, e in enumerate(shape) if e.value != 1), len(shape))
    slab = None
    for call, k, arg in kernel_addresses(site, buf):
        if arg is buf:
            return False   # the whole buffer
        if slab is None:
            if shape[p:] != buf.shape[p:]:
                return False
            slab = math.prod(e.value for e in shape[p:])
        size = footprint(call, k)
        if not (isinstance(size, E.IntImm) and size.value <= slab and all(
                isinstance(i, E.IntImm) and i.value == 0 for i in arg.indices[p:])):
            return False
    return True


def _compact_one(alloc):
    buf = alloc.buffer
    path = _find_site(alloc.body, buf)
    site = path[-1]
    found = _tile(buf, site)
    if found is None:
        return None
    shape, forms, index_of, bases = found
    if not _one_tile_serves(bases, shape, path) or not _kernel_views_kept(site, buf, shape):
        return None
    if all(isinstance(a, E.IntImm) and a.value == b.value for a, b in zip(buf.shape, shape)) \
            and site is alloc.body:
        return None
    new = with_fields(buf, shape=shape)
    new_site = _rewrite_site(site, buf, new, forms, index_of)
    new_site = S.Allocate(new, new_site)
    return _replace_path(path, new_site)


def _rewrite_site(site, buf, new, forms, index_of):
    def visit(node):
        if isinstance(node, E.BufferLoad) and node.buffer is buf:
            return E.BufferLoad(new, tuple(index_of(t, d) for d, t in enumerate(forms[id(node)])))
        if isinstance(node, S.BufferStore) and node.buffer is buf:
            value = _rewrite_site(node.value, buf, new, forms, index_of)
            return S.BufferStore(new, value,
                                 tuple(index_of(t, d) for d, t in enumerate(forms[id(node)])))
        return None
    return rewrite_top_down(site, visit)


def _replace_path(path, new_leaf):
    """Rebuild the statements of ``path`` (outermost first) with its last one replaced."""
    node = new_leaf
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if isinstance(parent, S.SeqStmt):
            node = S.SeqStmt(tuple(node if s is child else s for s in parent.stmts))
        else:
            node = with_fields(parent, body=node)
    return node


def _compact(stmt):
    def visit(node):
        if not isinstance(node, S.Stmt):
            return node   # no allocation inside an expression: not looked into
        if isinstance(node, S.Allocate):
            out = _compact_one(node)
            if out is not None:
                return rewrite_top_down(out, lambda n: visit(n) if n is not out else None)
        return None
    return rewrite_top_down(stmt, visit)


@prim_func_pass
def compact_buffers(func):
    """Shrink allocated buffers to the tile they are used in (see the module docstring)."""
    if not any(isinstance(n, S.Allocate) for n in S.walk_stmts(func.body)):
        return func
    body = _compact(func.body)
    return func if body is func.body else replace_func(func, body=body)


# ---------------------------------------------------------------- split tails
def _tail_extent(loop, f):
    """``E`` when the loop extent is ``(E + f - 1) // f``, else None. For a constant
    extent, ``E`` is the constant bound of a guard ``loop_var * f + r < E`` below with
    ``ceil(E / f)`` equal to the extent."""
    ext = loop.extent
    if isinstance(ext, E.IntImm):
        for n in walk(loop.body):
            if isinstance(n, S.IfThenElse):
                for c in conjuncts(n.condition):
                    if isinstance(c, E.Binary) and c.op == "lt" and isinstance(c.b, E.IntImm) \
                            and coefficient(c.a, loop.loop_var) == f \
                            and -(-c.b.value // f) == ext.value and c.b.value % f:
                        return c.b
        return None
    if isinstance(ext, E.Binary) and ext.op == "floordiv" and isinstance(ext.b, E.IntImm) \
            and ext.b.value == f and isinstance(ext.a, E.Binary) and ext.a.op == "add" \
            and isinstance(ext.a.b, E.IntImm) and ext.a.b.value == f - 1:
        return ext.a.a
    return None


def _edit_ifs(stmt, edit):
    """``stmt`` with each ``if`` replaced by ``edit(s, then, other, ana, inner)``, given its
    branches already edited (``ana`` knows the ranges of the loops between, ``inner``
    their variables)."""
    ana = arith.Analyzer()
    inner = set()

    def go(s):
        return S.follow_tails(s, step)

    def step(s):
        if isinstance(s, S.For):
            ana.bind(s.loop_var, S.Range(s.start, s.extent))
            inner.add(s.loop_var)
            body = go(s.body)
            return s if body is s.body else with_fields(s, body=body)
        if isinstance(s, S.SeqStmt) and s.stmts:
            head = tuple(go(x) for x in s.stmts[:-1])

            def finish(last):
                new = head + (last,)
                return s if all(a is b for a, b in zip(new, s.stmts)) else S.SeqStmt(new)
            return S.Tail(s.stmts[-1], finish)
        if isinstance(s, (S.LetStmt, S.Allocate)):
            return S.Tail(s.body, lambda body: s if body is s.body else with_fields(s, body=body))
        if isinstance(s, S.IfThenElse):
            other = go(s.else_case) if s.else_case is not None else None
            return edit(s, go(s.then_case), other, ana, inner)
        return s

    return go(stmt)


def _drop_guards(stmt, accept):
    """``stmt`` with each guard conjunct ``c`` for which ``accept(c, ana, inner)`` holds
    removed (see `_edit_ifs`); returns (new stmt, how many were removed)."""
    removed = [0]

    def edit(s, then, other, ana, inner):
        parts = conjuncts(s.condition)
        keep = [c for c in parts if not accept(c, ana, inner)]
        removed[0] += len(parts) - len(keep)
        return S.IfThenElse(reduce(E.and_, keep), then, other) if keep else then

    return _edit_ifs(stmt, edit), removed[0]


def _split_guard(c, var, f, extent):
    """Whether the guard ``c`` reads ``var * f + r < extent`` (for some ``r``)."""
    return isinstance(c, E.Binary) and c.op == "lt" and c.b == extent \
        and coefficient(c.a, var) == f


def _tile_offset(c, var, f, extent, ana):
    """The constant bounds of ``r`` when the guard ``c`` is ``var * f + r < extent``
    (over the loops between), else None."""
    if not _split_guard(c, var, f, extent):
        return None
    return ana.const_int_bound(ana.simplify(substitute(c.a, {var: E.IntImm(0)})))


def _tail_guard(var, f, extent):
    """Accepts ``var * f + r < extent`` with ``r`` in ``[0, f)`` over the loops between."""
    def accept(c, ana, inner):
        bounds = _tile_offset(c, var, f, extent, ana)
        return bounds is not None and bounds[0] is not None and bounds[1] is not None \
            and bounds[0] >= 0 and bounds[1] <= f - 1
    return accept


def _drop_whole_tiles(tail, levels):
    """The partial tile ``tail`` (where ``var < E // f`` fails for some split ``(var, f,
    E)`` of ``levels``) without the branches only a whole tile takes: an ``if`` testing,
    for every level, ``var * f + r < E`` with ``r >= f - 1`` (so ``(var + 1) * f <= E``,
    ``var < E // f``) runs its else branch -- a tensorized tile's micro-kernel call,
    dead there."""
    def whole_only(c, level, ana):
        bounds = _tile_offset(c, *level, ana)
        return bounds is not None and bounds[0] is not None and bounds[0] >= level[1] - 1

    def edit(s, then, other, ana, inner):
        parts = conjuncts(s.condition)
        if all(any(whole_only(c, level, ana) for c in parts) for level in levels):
            return S.seq() if other is None else other
        return S.IfThenElse(s.condition, then, other)

    return _edit_ifs(tail, edit)


def _tail_split(loop):
    """``(f, E, E // f)`` of a loop split by ``f`` from an extent ``E`` with a tail (see
    `_tail_extent`), else None."""
    f = dict(loop.annotations).get(TAIL_KEY)
    if not isinstance(f, int) or f < 2:
        return None
    extent = _tail_extent(loop, f)
    if extent is None:
        return None
    full = (E.IntImm(extent.value // f) if isinstance(extent, E.IntImm)
            else E.binary("floordiv", extent, E.IntImm(f)))
    return f, extent, full


def _split_loop(loop):
    split = _tail_split(loop)
    if split is None:
        return None
    f, extent, full = split
    panels = _split_panels(loop, f, extent)
    if panels is not None:
        return panels
    main, removed = _drop_guards(loop.body, _tail_guard(loop.loop_var, f, extent))
    if not removed:
        return None
    whole = E.lt(loop.loop_var, full)
    level = (loop.loop_var, f, extent)
    return _split_nest(loop, whole, main, level) or _versioned(loop, whole, main, [level])


def _split_panels(loop, f, extent):
    """A split loop over groups of column panels, around loops over row tiles (split or
    not; a batch's too), around a loop over the panels of a group (a constant number of
    them, each ``f // extent`` columns of the group's ``f``, in the groups' guards with
    that coefficient)::

        for j_0: for i_0: for j_1 in range(4):
            if tiles j_0 * 4 + j_1 and i_0 are whole: main  else: the partial tile

    -- versioned once per tile (`_per_iteration`): versioned per group, a partial last
    group would run all its tiles, whole ones too, in the partial-tile copy. None when
    ``loop`` (split by ``f`` from ``extent``) is not such a nest."""
    rows, node = [], loop.body
    while isinstance(node, S.For) and not (rows and _is_panel_loop(node, loop, f, extent)):
        rows.append(node)
        node = node.body
    if not rows or not isinstance(node, S.For):
        return None
    own = {loop.loop_var, node.loop_var} | {lp.loop_var for lp in rows}
    versioned = _per_iteration(node, node.body, own)
    if versioned is None:
        return None
    body = with_fields(versioned, annotations=((VERSIONED_KEY, 1),))
    for lp in reversed(rows):
        body = with_fields(lp, body=body)
    return with_fields(loop, body=body)


def _is_panel_loop(panels, loop, f, extent):
    """Whether ``panels`` runs over the panels of a group of ``loop`` (see
    `_split_panels`)."""
    if not (panels.kind == "serial" and not panels.annotations
            and isinstance(panels.extent, E.IntImm) and panels.extent.value >= 2):
        return False
    width = f // panels.extent.value    # the columns of a panel
    return width >= 2 and width * panels.extent.value == f and any(
        _split_guard(c, loop.loop_var, f, extent) and coefficient(c.a, panels.loop_var) == width
        for n in walk(panels.body) if isinstance(n, S.IfThenElse)
        for c in conjuncts(n.condition))


def _split_nest(loop, whole, main, level):
    """A split loop whose body is another split loop (the rows and columns of a tile),
    versioned once, inside both::

        for i_0: for j_0: if i_0 < n // 7 and j_0 < m // 32: main  else: body as it was

    -- one partial-tile copy of the body for the last row of tiles and the last column,
    not one each (the symbolic matmul's LLVM IR: a fifth smaller). None when ``loop`` is
    not such a nest; ``whole``, ``main`` and ``level`` are ``loop``'s test, guard-free body
    and split (see `_drop_whole_tiles`)."""
    inner = loop.body
    split = _tail_split(inner) if isinstance(inner, S.For) else None
    if split is None or not isinstance(main, S.For):
        return None
    f, extent, full = split
    main_body, removed = _drop_guards(main.body, _tail_guard(inner.loop_var, f, extent))
    if not removed:
        return None
    both = E.and_(whole, E.lt(inner.loop_var, full))
    levels = [level, (inner.loop_var, f, extent)]
    return with_fields(loop, body=_versioned(inner, both, main_body, levels))


def _versioned(loop, whole, main, levels=()):
    """``loop`` running ``main`` (its body without the tail guards) where ``whole`` holds,
    its body as it was elsewhere (less the branches only whole tiles of the splits
    ``levels`` take, `_drop_whole_tiles`)."""
    main = _split_outside_in(fresh_copy(main))
    last = _last_iteration(loop, whole)
    if last is not None:
        # The partial tile is the loop's last iteration, a known constant: its guards
        # become constant bounds (`_clamp`) and its unrolled loops stay unrolled, so it is
        # a smaller register tile (n = 1024 in tiles of 7 rows: one of 2 rows).
        tail = _constant_bounds(substitute(loop.body, {loop.loop_var: last}))
    else:
        # The partial tile runs once per loop: the split loops inside it stay whole (their
        # guards become clamped loop bounds, `_clamp`: a guarded unrolled loop becomes a
        # loop, short vectors run masked), one copy of code for a path that is rarely
        # taken, not one per combination of inner tails. Unrolled loops without a guard
        # stay unrolled: the rows of a register tile around the last step of a split
        # reduction loop (k split by 4 in the 7 x 32 tiles of a symbolic matmul: made
        # loops, they put the tile in memory and the kernel ran 2.3x slower).
        tail = loop.body
        if levels:
            tail = _drop_whole_tiles(tail, levels)
    return with_fields(loop, body=S.IfThenElse(whole, main, tail))


def _constant_bounds(stmt):
    """``stmt`` with the bounds of its loops simplified: a constant put in place of a loop
    variable leaves them as canonical as every loop's are (``range(2 * 3 // 2 + 1)`` reads
    back as ``range(4)``)."""
    def fold(s):
        if not isinstance(s, S.For):
            return None
        start, extent = arith.simplify(s.start), arith.simplify(s.extent)
        if start is s.start and extent is s.extent:
            return None
        return with_fields(s, start=start, extent=extent)
    return S.rewrite_stmts(stmt, fold)


def _last_iteration(loop, whole):
    """The value of ``loop``'s variable where ``whole`` (``v < c``) fails, when that is
    a single constant (a constant extent split with a tail); else None."""
    if not (isinstance(whole, E.Binary) and whole.op == "lt" and whole.a is loop.loop_var
            and isinstance(whole.b, E.IntImm) and isinstance(loop.start, E.IntImm)
            and isinstance(loop.extent, E.IntImm)):
        return None
    c = whole.b.value
    return whole.b if loop.start.value <= c == loop.start.value + loop.extent.value - 1 \
        else None


def _bind_divisions(loop):
    """The divisions ``v // d`` and ``v % d`` of the loop variable (``d`` set outside the
    loop) in ``loop.body``, as variables bound once per iteration: [(var, value)] and the
    body using them. Left in the body, a division by a symbolic ``d`` (what fused tile loops
    bind) would be computed in every iteration of the innermost loop."""
    inside = _bound_inside(loop.body)
    found = {}
    for n in walk(loop.body):
        if isinstance(n, E.Binary) and n.op in ("floordiv", "floormod") \
                and n.a is loop.loop_var and not vars_of(n.b) & inside and n not in found:
            kind = "div" if n.op == "floordiv" else "mod"
            found[n] = E.Var(f"{loop.loop_var.name}_{kind}{len(found)}", n.dtype)
    if not found:
        return [], loop.body
    body = rewrite(loop.body, lambda n: found.get(n) if isinstance(n, E.Binary) else None)
    return [(v, e) for e, v in found.items()], body


def _split_fused(loop):
    """A loop annotated `FUSED_TAILS_KEY`: its divisions are bound once per iteration
    (`_bind_divisions`), then its body is versioned once per iteration on the guards of
    its tails (`_per_iteration`)."""
    if not dict(loop.annotations).get(FUSED_TAILS_KEY):
        return None
    lets, body = _bind_divisions(loop)
    out = _per_iteration(loop, body, {loop.loop_var} | {v for v, _ in lets})
    if out is None:
        return None
    body = out.body
    for var, value in reversed(lets):
        body = S.LetStmt(var, value, body)
    return with_fields(out, body=body)


def _per_iteration(loop, body, own):
    """``loop`` with ``body`` versioned once per iteration: each guard ``base + r < E``
    below that mentions a variable of ``own`` (``base`` and ``E`` free of the loops
    between, ``r`` at most ``h`` over them) holds in the whole iteration when ``base + h <
    E``, and the body runs without those guards where they all do; elsewhere it runs as
    it was, where it does anything at all (`_any_point`). None without such guards."""
    inside = _bound_inside(body)
    tests = {}
    some = {}   # guard -> the test that it holds for some point of the iteration

    def accept(c, ana, inner):
        if not (isinstance(c, E.Binary) and c.op == "lt") or not vars_of(c.a) & own \
                or vars_of(c.b) & inside:
            return False
        base = ana.simplify(substitute(c.a, {v: E.IntImm(0) for v in vars_of(c.a) & inner}))
        if vars_of(base) & inside:
            return False
        lo, hi = ana.const_int_bound(ana.simplify(c.a - base))
        if hi is None:
            return False
        test = E.lt(ana.simplify(base + hi), c.b)
        tests.setdefault(test, test)
        found = E.lt(ana.simplify(base + lo), c.b) if lo is not None else None
        # The same guard under other loops may be met at other points: then none.
        some[c] = found if some.get(c, found) == found else None
        return True

    main, removed = _drop_guards(body, accept)
    if not removed:
        return None
    out = _versioned(with_fields(loop, body=body), reduce(E.and_, tests), main)
    live = _any_point(body, some)
    if live is not None:
        out = with_fields(out, body=with_fields(out.body, else_case=S.IfThenElse(
            live, out.body.else_case)))
    return out


def _any_point(body, some):
    """The test that an iteration of the loop ``body`` does anything, or None when it
    always may: each statement with an effect in ``body`` runs only where the guards it is
    under (in their then-branches) hold, and ``some`` maps guards to the test that the
    guard holds for some point of the iteration (None: not known); the iteration does
    something only if, for some statement, all its guards' tests pass. (The last group of
    column panels reaching past the matrix's last column would otherwise run a k loop of
    empty tiles.)"""
    found = set()
    for path in S.find_paths(body, lambda x: isinstance(x, (S.BufferStore, S.Evaluate))):
        mine = frozenset(some[c] for x, below in zip(path, path[1:])
                         if isinstance(x, S.IfThenElse) and below is x.then_case
                         for c in conjuncts(x.condition) if some.get(c) is not None)
        if not mine:
            return None
        found.add(mine)
    if not found:
        return None
    return reduce(E.or_, sorted((reduce(E.and_, sorted(tests, key=str)) for tests in found),
                                key=str))


def _bound(c, v):
    """``b`` such that the test ``c`` holds exactly when ``v < b``, for ``c`` of the form
    ``k * v + r < E`` or ``k * (v // d) + r < E`` (``k`` and ``d`` positive constants, ``r``
    and ``E`` free of ``v``; splits of split or fused loops write such guards); else None."""
    if not (isinstance(c, E.Binary) and c.op == "lt") or v in vars_of(c.b):
        return None
    x, unit, scale = c.a, v, 1
    if coefficient(x, v) is None:
        x = arith.simplify(x)  # ``(v // 100) * 100 + v % 100`` is ``v``
    if coefficient(x, v) is None:
        divs = {n for n in walk(x) if isinstance(n, E.Binary) and n.op == "floordiv"
                and n.a is v and isinstance(n.b, E.IntImm) and n.b.value > 0}
        if len(divs) != 1:
            return None
        div = divs.pop()
        unit, scale = E.Var(f"{v.name}_div", v.dtype), div.b.value
        x = rewrite(x, lambda n: unit if n == div else None)
    k = coefficient(x, unit)
    rest = substitute(x, {unit: E.IntImm(0)})
    if not k or k < 0 or v in vars_of(rest):
        return None
    bound = E.binary("sub", c.b, rest)
    if k > 1:
        bound = E.binary("floordiv", E.binary("add", bound, E.IntImm(k - 1)), E.IntImm(k))
    return bound if scale == 1 else E.binary("mul", bound, E.IntImm(scale))


def _one_test(body):
    """``body``, with a sequence of statements under one and the same test (a reduction's
    init run first and its update, each under the block's guards) as that test around the
    sequence."""
    if not isinstance(body, S.SeqStmt) or not all(
            isinstance(s, S.IfThenElse) and s.else_case is None
            and s.condition == body.stmts[0].condition for s in body.stmts):
        return body
    return S.IfThenElse(body.stmts[0].condition, S.seq(*(s.then_case for s in body.stmts)))


def _clamp(loop):
    """``for v: if v + r < E and c: body`` (``r`` and ``c`` free of ``v``) as
    ``if c: for v in [start, min(start + extent, E - r)): body``: the guard becomes the
    loop bound, so the last tile runs short loops instead of a test per element. Each test
    of ``v`` `_bound` reads bounds it (the least of them is the loop's end); the others stay
    in the loop: guards of factors beyond the extent, ``(i_0 * 1000 + i_1 // 100) * 100 +
    i_1 % 100 < 7 and i_0 * 1000 + i_1 // 100 < 16``, do not leave ``i_1`` running over all
    its 100000 values, nor does a test of an outer loop (``j < 1``) that another test of
    ``i_1`` comes with. A parallel loop keeps its extent; only tests of other loops move
    out of it."""
    body = _one_test(loop.body)
    if not isinstance(body, S.IfThenElse) or body.else_case is not None:
        return None
    if any(isinstance(n, (E.BufferLoad, E.Call)) for n in walk(body.condition)):
        return None  # a test that reads memory the body may write stays where it is
    v = loop.loop_var
    bound, keep, inner = None, [], []
    for c in conjuncts(body.condition):
        b = _bound(c, v) if v in vars_of(c) and loop.kind != "parallel" else None
        if v not in vars_of(c):
            keep.append(c)
        elif b is None:
            inner.append(c)
        else:
            bound = b if bound is None else E.min_(bound, b)
    if not keep and bound is None:
        return None
    end = None
    if bound is not None and not vars_of(bound) and isinstance(loop.extent, E.IntImm):
        end = arith.simplify(E.binary("sub", bound, loop.start))
    let = None
    if bound is None:  # a test that does not depend on v: hoisted out of the loop
        extent, kind = loop.extent, loop.kind
    elif isinstance(end, E.IntImm):
        # A constant bound (a last tile known at compile time): a constant extent, and an
        # unrolled loop stays unrolled.
        extent, kind = E.IntImm(max(0, min(loop.extent.value, end.value))), loop.kind
    else:
        # The clamped extent is bound to a variable: a min() in a loop bound makes every
        # later range analysis under the loop expensive, and nothing needs its value.
        extent = E.Var(f"{v.name}_end")
        kind = "serial" if loop.kind == "unroll" else loop.kind
        let = E.min_(loop.extent, E.binary("sub", bound, loop.start))
    inside = S.IfThenElse(reduce(E.and_, inner), body.then_case) if inner else body.then_case
    out = with_fields(loop, extent=extent, kind=kind, body=inside)
    if let is not None:
        out = S.LetStmt(extent, let, out)
    if keep:
        out = S.IfThenElse(reduce(E.and_, keep), out)
    return out


def _split_outside_in(stmt):
    """``stmt`` with its split loops split, outer loops first (`_split_loop` splits the
    loops inside the main path of each)."""
    if isinstance(stmt, S.For):
        split = _split_loop(stmt) or _split_fused(stmt)
        if split is not None:
            return split
    changes = {}
    for name, value in node_fields(stmt):
        if isinstance(value, S.Stmt):
            new = _split_outside_in(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, S.Stmt) for v in value):
            new = tuple(_split_outside_in(v) for v in value)
            new = value if all(a is b for a, b in zip(new, value)) else new
        else:
            continue
        if new is not value:
            changes[name] = new
    return with_fields(stmt, **changes) if changes else stmt


@prim_func_pass
def split_tail_loops(func):
    """A guard-free main path plus the guarded last tile (see the module docstring)."""
    if not any(isinstance(n, S.For) and {TAIL_KEY, FUSED_TAILS_KEY} & set(dict(n.annotations))
               for n in walk(func.body)):
        return func

    def clamp(node):
        if isinstance(node, S.For):
            return _clamp(node)
        return None
    body = S.rewrite_stmts(_split_outside_in(func.body), clamp)
    return func if body is func.body else replace_func(func, body=body)
