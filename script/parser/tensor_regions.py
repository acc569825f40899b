"""Inference of a block's read and write regions when ``T.reads`` / ``T.writes`` are absent.

Every buffer load and store in the block's body and init is an access. Let variables and
the iterators of nested blocks are replaced by their values, then the loop variables
defined inside the block are relaxed over their ranges with `pyir.arith.relax_region`. The accesses
to one buffer are merged into one region (their hull), listed in order of first access.
Buffers allocated inside the block are not part of its regions; a buffer passed whole to
``T.call_extern`` counts as read and written in full.
"""

from pyir import arith
from pyir.ir import (Allocate, Binary, BlockRealize, Buffer, BufferLoad, BufferRegion,
                     BufferStore, Call, Evaluate, For, IfThenElse, IntImm, LetStmt, Range,
                     SeqStmt, Var)
from pyir.ir.node import rewrite, walk


def infer_regions(iter_vars, body, init, allocs):
    """(reads, writes): tuples of BufferRegion for a block with these parts."""
    collector = _Collector(allocs)
    collector.stmt(init)
    collector.stmt(body)
    return collector.regions(collector.reads), collector.regions(collector.writes)


class _Collector:
    def __init__(self, allocs):
        self.analyzer = arith.Analyzer()
        self.relax = []
        self.subst = {}
        self.excluded = set(allocs)
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
            self.stmt(s.block.init)
            self.stmt(s.block.body)
        elif isinstance(s, Allocate):
            self.excluded.add(s.buffer)
            self.stmt(s.body)
        elif isinstance(s, BufferStore):
            self.exprs(s.value, *s.indices)
            self.access(self.writes, s.buffer, s.indices)
        elif isinstance(s, IfThenElse):
            self.exprs(s.condition)
            self.stmt(s.then_case)
            self.stmt(s.else_case)
        elif isinstance(s, Evaluate):
            self.exprs(s.value)

    def relaxed(self, var, rng, fn):
        with self.analyzer.scope():
            self.analyzer.bind(var, rng)
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
            for n in walk(value):
                if isinstance(n, BufferLoad):
                    self.access(self.reads, n.buffer, n.indices)
                elif isinstance(n, Call) and n.op == "call_extern":
                    for arg in n.args:
                        if isinstance(arg, Buffer) and arg not in self.excluded:
                            whole = tuple(Range(IntImm(0), d) for d in arg.shape)
                            self.reads.setdefault(arg, []).append(whole)
                            self.writes.setdefault(arg, []).append(whole)

    def access(self, table, buf, indices):
        if buf in self.excluded:
            return
        indices = tuple(self.substitute(i) for i in indices)
        used = {n for i in indices for n in walk(i) if isinstance(n, Var)}
        relax = [v for v in self.relax if v in used]
        if relax:
            region = arith.relax_region(indices, self.analyzer, relax, shape=buf.shape)
        else:
            region = tuple(Range(i, IntImm(1)) for i in indices)
        table.setdefault(buf, []).append(region)

    @staticmethod
    def regions(table):
        return tuple(BufferRegion(buf, _hull(regions)) for buf, regions in table.items())


def _hull(regions):
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
