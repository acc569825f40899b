"""A block's read and write regions: inferred when ``T.reads`` / ``T.writes`` are absent,
checked against the body when they are declared (by the parser, and in IR that no parser
read: `pyir.transform.block_checks`).

Every buffer load and store in the block's body and init is an access. Let variables and
the iterators of nested blocks are replaced by their values, then the loop variables
defined inside the block are relaxed over their ranges with `pyir.arith.relax_region`. The accesses
to one buffer are merged into one region (their hull), listed in order of first access.
Buffers allocated inside the block are not part of its regions; a buffer passed whole to
``T.call_extern`` counts as read and written in full.

`uncovered` finds a declared list that does not cover the accesses. A buffer accessed but
not declared is refused. A region is refused only when it provably misses part of an access
(of the hull of the buffer's declared regions) that is really made: an unconditional point
access, or one relaxed affinely over loops, missing it for every value of the block
iterators, or an unconditional point access in a block without ``T.where`` missing it at the
first or last value of one iterator. What cannot be proven either way is accepted: the
regions found here ignore the conditions guarding accesses, and the schedule declares
regions (predicated tails, relaxed split loops) that the analyzer cannot always prove to
cover them. An element passed to ``T.call_extern`` (a kernel's pointer, as tensorize emits)
is checked only for its buffer, which may be in either list. Declaring more than the body
accesses is legal.
"""

import functools

from pyir import arith
from pyir.ir import (LOGIC_OPS, Allocate, Binary, BlockRealize, Buffer, BufferLoad,
                     BufferRegion, BufferStore, Call, Evaluate, For, IfThenElse, IntImm, LetStmt,
                     Range, Select, SeqStmt, Var, ge, gt, le, lt, substitute)
from pyir.ir.node import rewrite, walk
from pyir.runtime.exprtext import expr_text


def accesses(body, init, allocs, kinds=True):
    """(reads, writes) of a block with these parts: each a dict from buffer to its accesses,
    ``(region, kind)`` pairs. ``kind`` is "exact" for a point access that no condition
    guards, "affine" for one relaxed over loops whose ranges are independent, its indices
    affine in them with constant coefficients (its first and last elements are accessed),
    "pointer" for an element passed to ``T.call_extern`` (the kernel may read or write from
    there on), else "loose" (always, unless ``kinds``)."""
    collector = _Collector(allocs, kinds)
    collector.stmt(init)
    collector.stmt(body)
    return collector.reads, collector.writes


def infer_regions(body, init, allocs):
    """(reads, writes): tuples of BufferRegion for a block with these parts."""
    return tuple(tuple(BufferRegion(buf, hull([r for r, _ in accs]))
                       for buf, accs in table.items())
                 for table in accesses(body, init, allocs, kinds=False))


def uncovered(declared, accessed, facts, elsewhere):
    """The first access of ``accessed`` (a table of `accesses`) that the BufferRegions
    ``declared`` do not cover, as ``(buffer, accessed region, declared region or None)``,
    else None. A buffer only passed by pointer may be declared in ``elsewhere`` (the other
    list's buffers) instead. ``facts()`` gives, once asked, an Analyzer bounding the block
    iterators and the substitutions (one iterator at its first or last value) that may
    witness a miss of an exact access; a region declared as accessed needs neither."""
    by_buffer = {}
    for r in declared:
        by_buffer.setdefault(r.buffer, []).append(r.region)
    for buf, accs in accessed.items():
        if buf not in by_buffer:
            if buf in elsewhere and all(kind == "pointer" for _, kind in accs):
                continue
            return buf, hull([r for r, _ in accs]), None
        outer = hull(by_buffer[buf])
        for region, kind in accs:
            if kind in ("pointer", "loose") or region == outer:
                continue
            analyzer, corners = facts()
            if _covers(outer, region, analyzer):
                continue
            if _misses(outer, region, analyzer) or kind == "exact" and any(
                    _misses(_at(outer, c), _at(region, c), analyzer) for c in corners):
                return buf, region, outer
    return None


def declared_miss(block, analyzer, predicated, attrs=("reads", "writes")):
    """The first ``(attr, miss)`` of Block ``block`` whose declared ``attrs`` (of "reads",
    "writes") do not cover what its body and init access (``miss`` as `uncovered` gives it),
    else None. ``analyzer()`` gives an Analyzer bounding the loops around the block and its
    iterators; ``predicated``: the block's realize has a predicate (no iterator's first or
    last value then witnesses a miss)."""
    @functools.cache
    def facts():
        corners = []
        if not predicated:
            for iv in block.iter_vars:
                corners += [{iv.var: IntImm(0)}, {iv.var: arith.simplify(iv.extent - 1)}]
        return analyzer(), corners

    tables = dict(zip(("reads", "writes"), accesses(block.body, block.init, block.alloc_buffers)))
    for attr in attrs:
        other = block.writes if attr == "reads" else block.reads
        miss = uncovered(getattr(block, attr), tables[attr], facts, {r.buffer for r in other})
        if miss:
            return attr, miss
    return None


def miss_message(name, attr, miss, declarer):
    """``(text, message)`` for a `declared_miss` of block ``name``: the accessed region as
    ``T.reads`` writes it, and what is wrong, ``declarer`` naming the list declared."""
    buf, region, declared = miss
    text = region_text(BufferRegion(buf, region))
    if declared is None:
        return text, f"block {name!r} {attr} {text} but {declarer} does not list {buf.name}"
    return text, (f"block {name!r} {attr} {text} but {declarer} declares only "
                  f"{region_text(BufferRegion(buf, declared))}")


def region_text(region):
    """``A[vi, 0:n]``: a BufferRegion as ``T.reads`` writes it."""
    parts = [expr_text(r.start) if r.extent == IntImm(1)
             else f"{expr_text(r.start)}:{expr_text(arith.simplify(r.start + r.extent))}"
             for r in region.region]
    return f"{region.buffer.name}[{', '.join(parts)}]"


def _covers(outer, inner, analyzer):
    return all(analyzer.can_prove(le(o.start, i.start))
               and analyzer.can_prove(le(i.start + i.extent, o.start + o.extent))
               for o, i in zip(outer, inner))


def _at(region, values):
    return tuple(Range(substitute(r.start, values), substitute(r.extent, values)) for r in region)


def _misses(outer, inner, analyzer):
    return any(analyzer.can_prove(lt(i.start, o.start))
               or analyzer.can_prove(gt(i.start + i.extent, o.start + o.extent))
               for o, i in zip(outer, inner) if analyzer.can_prove(ge(i.extent, 1)))


class _Collector:
    def __init__(self, allocs, kinds):
        self.kinds = kinds
        self.analyzer = arith.Analyzer()
        self.relax = []
        self.ranges = {}
        self.subst = {}
        self.excluded = set(allocs)
        self.guards = 0
        self.reads = {}
        self.writes = {}

    def stmt(self, s):
        if s is None:
            return
        if isinstance(s, SeqStmt):
            for item in s.stmts:
                self.stmt(item)
        elif isinstance(s, For):
            self.exprs(s.start, s.extent)
            self.relaxed(s.loop_var, Range(self.substitute(s.start), self.substitute(s.extent)),
                         lambda: self.stmt(s.body))
        elif isinstance(s, LetStmt):
            self.exprs(s.value)
            self.subst[s.var] = self.substitute(s.value)
            self.stmt(s.body)
        elif isinstance(s, BlockRealize):
            self.exprs(s.predicate, *s.iter_values)
            self.excluded.update(s.block.alloc_buffers)
            for iv, value in zip(s.block.iter_vars, s.iter_values):
                self.subst[iv.var] = self.substitute(value)
            guarded = not (isinstance(s.predicate, IntImm) and s.predicate.value == 1)
            self.guarded(guarded, self.stmt, s.block.init)
            self.guarded(guarded, self.stmt, s.block.body)
        elif isinstance(s, Allocate):
            self.excluded.add(s.buffer)
            self.stmt(s.body)
        elif isinstance(s, BufferStore):
            self.exprs(s.value, *s.indices)
            self.access(self.writes, s.buffer, s.indices)
        elif isinstance(s, IfThenElse):
            self.exprs(s.condition)
            self.guarded(True, self.stmt, s.then_case)
            self.guarded(True, self.stmt, s.else_case)
        elif isinstance(s, Evaluate):
            self.exprs(s.value)

    def guarded(self, guard, fn, *args):
        self.guards += guard
        try:
            fn(*args)
        finally:
            self.guards -= guard

    def relaxed(self, var, rng, fn):
        with self.analyzer.scope():
            self.analyzer.bind(var, rng)
            self.ranges[var] = rng
            self.relax.append(var)
            try:
                fn()
            finally:
                self.relax.pop()

    def substitute(self, e):
        if not self.subst:
            return e
        return rewrite(e, lambda n: self.subst.get(n) if isinstance(n, Var) else None)

    def exprs(self, *values):
        for value in values:
            nodes = list(walk(value))
            guard = any(isinstance(n, Select) or isinstance(n, Binary) and n.op in LOGIC_OPS
                        for n in nodes)
            pointers = {id(a) for n in nodes if isinstance(n, Call) and n.op == "call_extern"
                        for a in n.args if isinstance(a, BufferLoad)}
            for n in nodes:
                if isinstance(n, BufferLoad):
                    self.guarded(guard, self.access, self.reads, n.buffer, n.indices,
                                 id(n) in pointers)
                elif isinstance(n, Call) and n.op == "call_extern":
                    for arg in n.args:
                        if isinstance(arg, Buffer) and arg not in self.excluded:
                            whole = tuple(Range(IntImm(0), d) for d in arg.shape)
                            self.reads.setdefault(arg, []).append((whole, "loose"))
                            self.writes.setdefault(arg, []).append((whole, "loose"))

    def access(self, table, buf, indices, pointer=False):
        if buf in self.excluded:
            return
        indices = tuple(self.substitute(i) for i in indices)
        used = {n for i in indices for n in walk(i) if isinstance(n, Var)}
        relax = [v for v in self.relax if v in used]
        if relax:
            region = arith.relax_region(indices, self.analyzer, relax, shape=buf.shape)
        else:
            region = tuple(Range(i, IntImm(1)) for i in indices)
        if pointer or self.guards or not self.kinds:
            kind = "pointer" if pointer else "loose"
        else:
            kind = "affine" if relax and self.affine(indices, relax) else "loose" if relax \
                else "exact"
        table.setdefault(buf, []).append((region, kind))

    def affine(self, indices, relax):
        if any(n in relax for v in relax for n in walk(self.ranges[v]) if isinstance(n, Var)):
            return False
        for index in indices:
            for v in relax:
                linear = arith.detect_linear(index, v, self.analyzer)
                if linear is None or not isinstance(linear[0], IntImm):
                    return False
                index = linear[1]
        return True


def hull(regions):
    """The smallest region covering every region in ``regions`` (one Range per dim)."""
    out = []
    for ranges in zip(*regions):
        first = ranges[0]
        if all(r == first for r in ranges):
            out.append(first)
            continue
        start = ranges[0].start
        stop = ranges[0].start + ranges[0].extent
        for r in ranges[1:]:
            start = Binary("min", start, r.start)
            stop = Binary("max", stop, r.start + r.extent)
        start = arith.simplify(start)
        out.append(Range(start, arith.simplify(stop - start)))
    return tuple(out)
