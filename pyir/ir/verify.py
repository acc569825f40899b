"""Well-formedness checks: definitions before uses, buffers in scope, consistent dtypes.

`verify(node)` raises IRError naming the function and the offending variable, buffer or
binding; it returns the node unchanged when everything is well formed, so it can sit in a
pass pipeline.
"""

from ..errors import IRError, kind_of
from . import dtype as dt
from .expr import BufferLoad, PrimExpr, Var
from .graph import (CallPacked, CallTIR, DataflowBlock, DataflowVar, Function, GlobalVar,
                    GraphVar, MatchCast)
from .module import IRModule
from .node import Node, children, walk
from .stmt import (Allocate, Block, BlockRealize, BufferStore, For, IfThenElse, LetStmt,
                   PrimFunc)


def verify(node):
    """Check ``node`` (IRModule, PrimFunc or Function); return it or raise IRError."""
    if isinstance(node, IRModule):
        for _, func in node.functions:
            _verify_func(func, node)
    else:
        _verify_func(node, None)
    return node


def _verify_func(func, mod):
    if isinstance(func, PrimFunc):
        _PrimChecker(func).run()
    elif isinstance(func, Function):
        _GraphChecker(func, mod).run()
    else:
        raise IRError(f"cannot verify {kind_of(func)}")


class _PrimChecker:
    def __init__(self, func):
        self.func = func
        self.vars = set()
        self.buffers = set()
        self.ever_defined = set()

    def fail(self, msg):
        raise IRError(f"prim function {self.func.name}: {msg}")

    def define_var(self, v):
        if v in self.ever_defined:
            self.fail(f"variable {v.name} is defined twice")
        self.ever_defined.add(v)
        self.vars.add(v)

    def define_buffer(self, b):
        if b in self.buffers:
            self.fail(f"buffer {b.name} is defined twice")
        for s in b.shape:
            self.expr(s, f"the shape of buffer {b.name}")
        self.buffers.add(b)

    def run(self):
        for p in self.func.params:
            if isinstance(p, Var):
                self.define_var(p)
        # Shape variables come with the buffer parameters, and once buffers are flattened
        # also with the declared shapes in the "param_shapes" attribute (a flattened shape
        # may have lost one: (0, n) becomes (0,)).
        declared = [d for shape in self.func.attr("param_shapes") or () for d in shape]
        for node in tuple(self.func.buffer_params) + tuple(declared):
            for n in walk(node):
                if isinstance(n, Var) and n not in self.vars:
                    self.define_var(n)
        self.buffers.update(self.func.buffer_params)
        self.stmt(self.func.body)

    def expr(self, e, where):
        for n in walk(e):
            if isinstance(n, Var) and n not in self.vars:
                self.fail(f"variable {n.name} is used in {where} but not defined there")
            if isinstance(n, BufferLoad) and n.buffer not in self.buffers:
                self.fail(f"buffer {n.buffer.name} is read in {where} but not in scope")
            if isinstance(n, BufferLoad):
                for i in n.indices:
                    if i.dtype != dt.INDEX:
                        self.fail(f"index of {n.buffer.name} in {where} is {i.dtype}, not int64")

    def scoped(self, defs_vars, defs_bufs, body):
        """Define ``defs_vars`` and ``defs_bufs``; return ``body`` (statements and callables
        to run) followed by the callable that takes the definitions out of scope again."""
        for v in defs_vars:
            self.define_var(v)
        for b in defs_bufs:
            self.define_buffer(b)

        def leave():
            self.vars.difference_update(defs_vars)
            self.buffers.difference_update(defs_bufs)
            return ()
        return [*body, leave]

    def stmt(self, s):
        """Check statement ``s`` and everything in it, with an explicit stack of what is left
        to do (a sequence of thousands of lets nests as deep as it is long)."""
        todo = [s]
        while todo:
            item = todo.pop()
            todo.extend(reversed(item() if callable(item) else self.step(item)))

    def step(self, s):
        """Check ``s`` itself; return what to check after it, in order: the statements inside
        it and callables (checks that need their scope, the end of a scope)."""
        if s is None:
            return ()
        if isinstance(s, For):
            self.expr(s.start, f"the bounds of loop {s.loop_var.name}")
            self.expr(s.extent, f"the bounds of loop {s.loop_var.name}")
            for e, what in ((s.start, "start"), (s.extent, "extent")):
                if e.dtype != dt.INDEX:
                    self.fail(f"loop {s.loop_var.name}: {what} is {e.dtype}, not int64")
            return self.scoped([s.loop_var], [], [s.body])
        if isinstance(s, BlockRealize):
            where = f"the bindings of block {s.block.name}"
            for v in s.iter_values:
                self.expr(v, where)
                if v.dtype != dt.INDEX:
                    self.fail(f"block {s.block.name}: binding {v!r} is {v.dtype}, not int64")
            self.expr(s.predicate, f"the predicate of block {s.block.name}")
            if s.predicate.dtype != "bool":
                self.fail(f"block {s.block.name}: predicate is {s.predicate.dtype}, not bool")
            return [s.block]
        if isinstance(s, Block):
            def regions():
                for region in s.reads + s.writes:
                    if region.buffer not in self.buffers:
                        self.fail(f"block {s.name} names buffer {region.buffer.name} in its "
                                  "reads/writes but it is not in scope")
                    for r in region.region:
                        self.expr(r.start, f"the regions of block {s.name}")
                        self.expr(r.extent, f"the regions of block {s.name}")
                return ()
            for iv in s.iter_vars:
                self.expr(iv.extent, f"the iterator domains of block {s.name}")
            return self.scoped([iv.var for iv in s.iter_vars], s.alloc_buffers,
                               [regions, s.init, s.body])
        if isinstance(s, BufferStore):
            where = f"a store to {s.buffer.name}"
            if s.buffer not in self.buffers:
                self.fail(f"buffer {s.buffer.name} is written but not in scope")
            for i in s.indices:
                self.expr(i, where)
                if i.dtype != dt.INDEX:
                    self.fail(f"index of {s.buffer.name} in {where} is {i.dtype}, not int64")
            self.expr(s.value, where)
            if s.value.dtype != s.buffer.dtype:
                self.fail(f"storing {dt.a(s.value.dtype)} value into {s.buffer.dtype} buffer "
                          f"{s.buffer.name}")
            return ()
        if isinstance(s, IfThenElse):
            self.expr(s.condition, "an if condition")
            if s.condition.dtype != "bool":
                self.fail(f"if condition is {s.condition.dtype}, not bool")
            return [s.then_case, s.else_case]
        if isinstance(s, LetStmt):
            self.expr(s.value, f"the value of {s.var.name}")
            if s.var.dtype != s.value.dtype:
                self.fail(f"let {s.var.name}: variable is {s.var.dtype} but value is "
                          f"{s.value.dtype}")
            return self.scoped([s.var], [], [s.body])
        if isinstance(s, Allocate):
            return self.scoped([], [s.buffer], [s.body])
        if isinstance(s, Node) and not isinstance(s, PrimExpr):
            rest = []
            for c in children(s):
                if isinstance(c, PrimExpr):
                    self.expr(c, f"{kind_of(s)} statement")
                else:
                    rest.append(c)
            return rest
        self.fail(f"unexpected {type(s).__name__} where a statement belongs")


class _GraphChecker:
    def __init__(self, func, mod):
        self.func, self.mod = func, mod
        self.defined = set()
        self.sym = set()

    def fail(self, msg):
        raise IRError(f"graph function {self.func.name}: {msg}")

    def run(self):
        for p in self.func.params:
            self.defined.add(p)
            self.sym.update(n for n in walk(p.struct_info) if isinstance(n, Var))
        for block in self.func.body.blocks:
            in_dataflow = isinstance(block, DataflowBlock)
            local = []
            for b in block.bindings:
                self.uses(b.value, b.var.name, in_dataflow)
                if isinstance(b, MatchCast):
                    self.sym.update(n for n in walk(b.struct_info) if isinstance(n, Var))
                self.sinfo(b.var.struct_info, b.var.name)
                if isinstance(b.var, DataflowVar):
                    if not in_dataflow:
                        self.fail(f"dataflow variable {b.var.name} is bound outside a "
                                  "dataflow block")
                    local.append(b.var)
                if b.var in self.defined:
                    self.fail(f"variable {b.var.name} is bound twice")
                self.defined.add(b.var)
            self.defined.difference_update(local)
        self.uses(self.func.body.body, "the return value", False)

    def sinfo(self, sinfo, where):
        for n in walk(sinfo):
            if isinstance(n, Var) and n not in self.sym:
                self.fail(f"symbolic variable {n.name} in the struct info of {where} is not "
                          "defined by a parameter or an earlier match_cast")

    def uses(self, value, where, in_dataflow):
        for n in walk(value):
            if isinstance(n, GraphVar) and n not in self.defined:
                self.fail(f"variable {n.name} is used in {where} but not defined there")
            if isinstance(n, Var) and n not in self.sym:
                self.fail(f"symbolic variable {n.name} is used in {where} but not defined")
            if isinstance(n, CallPacked) and in_dataflow:
                self.fail(f"R.call_packed({n.name!r}) in {where} is inside a dataflow block; "
                          "it may have effects, so move it outside")
            if isinstance(n, CallTIR):
                self.callee(n.func, where)
            if isinstance(n, GlobalVar) and self.mod is not None and n.name not in self.mod:
                self.fail(f"{where} refers to {n.name}, which is not in the module")

    def callee(self, gv, where):
        if self.mod is None or gv.name not in self.mod:
            return
        if not isinstance(self.mod[gv.name], PrimFunc):
            self.fail(f"R.call_tir in {where} calls {gv.name}, which is not a prim function")
