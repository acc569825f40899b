"""LLVM code for a graph function's `GraphPlan` (`pyir.transform.graph_plan`).

The function is ``i32 @"pyir.entry.name"(ptr %frame)`` (`pyir.codegen.abi.entry_symbol`):
the frame holds one 8-byte slot per leaf and shape variable (filled by the caller for
inputs, input shape variables and outputs), the Python callback's address, and two slots
describing a failed call. The code allocates the planned storages (sizes computed from the
shape variables), runs the steps (prim functions are called through their slot-array entry,
which checks their entry conditions; Python steps call ``i32 callback(i64 site, ptr
frame)``), frees everything and returns 0. Statuses: `STATUS_NO_MEMORY`;
`STATUS_CALLBACK_FAILED` (the Python side holds the exception); `STATUS_CALL_FAILED` (a
prim function returned the status stored in the status slot, at the step stored in the step
slot); ``k > 0``: graph condition ``k - 1`` of `GraphPlan.conditions` failed.
"""

from llvmlite import ir

from ..transform.graph_plan import nbytes
from . import types as T
from .abi import STATUS_CALL_FAILED, STATUS_CALLBACK_FAILED, entry_symbol
from .emit_stmt import FunctionEmitter


def graph_emitter(plans):
    """An ``extra`` hook for `pyir.codegen.llvm.codegen` emitting ``plans``; it fills
    each plan's ``conditions`` (the run-time shape checks, in status order)."""
    def emit(ctx, infos):
        by_name = {i.name: i for i in infos}
        for plan in plans:
            _GraphEmitter(ctx, plan, by_name).run()
    return emit


class _GraphEmitter:
    def __init__(self, ctx, plan, infos):
        self.ctx, self.plan, self.infos = ctx, plan, infos
        self.fn = ir.Function(ctx.module, ir.FunctionType(T.I32, [T.PTR]),
                              entry_symbol(plan.name))
        self.em = FunctionEmitter(ctx, self.fn, plan.name, {})
        self.b = self.em.b
        self.frame = self.fn.args[0]
        self.frame.name = "frame"
        plan.conditions = []

    def slot(self, k):
        return self.b.gep(self.frame, [T.int_const(k)], source_etype=T.I64)

    def load_var(self, v):
        self.em.env[v] = self.b.load(self.slot(self.plan.var_slot[v]), typ=T.I64)

    def run(self):
        plan, em = self.plan, self.em
        for v in plan.input_vars:
            self.load_var(v)
        for leaf in plan.leaves:
            if leaf.kind == "dynamic":
                self.b.store(ir.Constant(T.PTR, None), self.slot(plan.slot[leaf.id]))
        for s, size in enumerate(plan.storages):
            ptr = self.alloc(size)
            for leaf in plan.leaves:
                if leaf.storage == s:
                    self.b.store(ptr, self.slot(plan.slot[leaf.id]))
        for k, step in enumerate(plan.steps):
            for cond, message in step.checks:
                plan.conditions.append((cond, f"binding {step.binding}: {message}"))
                em.return_if(self.b.not_(em.holds(cond)), T.int_const(len(plan.conditions), 32))
            getattr(self, "_" + step.kind)(k, step)
        for ptr in reversed(em.heaps):
            em.heap_free(ptr)
        em.finish()

    def alloc(self, size):
        ptr = self.em.heap_alloc(size)
        self.em.heaps.append(ptr)
        return ptr

    def _alloc(self, k, step):
        leaf = self.plan.leaves[step.outs[0]]
        self.b.store(self.alloc(nbytes(leaf.sinfo)), self.slot(self.plan.slot[leaf.id]))

    def _prim(self, k, step):
        em, plan = self.em, self.plan
        info = self.infos[step.func]
        values = list(step.args) + list(step.outs)
        slots = em.stack(ir.ArrayType(T.I64, max(1, info.num_slots)), f"slots{k}", 8)

        def dest(j):
            return self.b.gep(slots, [T.int_const(j)], source_etype=T.I64)

        for j, (p, v) in enumerate(zip(info.params, values)):
            if isinstance(v, int):
                self.b.store(self.b.load(self.slot(plan.slot[v]), typ=T.I64), dest(j))
            else:
                self.b.store(em.to_memory(em.expr(v), p.dtype), dest(j))
        for j, e in enumerate(step.shape_args):
            self.b.store(em.expr(e), dest(len(info.params) + j))
        callee = self.ctx.declare(entry_symbol(step.func), T.I32, [T.PTR])
        status = self.b.call(callee, [slots])
        failed = self.b.icmp_signed("!=", status, T.int_const(0, 32))
        with self.b.if_then(failed, likely=False):
            self.b.store(self.b.sext(status, T.I64), self.slot(plan.status_slot))
            self.b.store(T.int_const(k), self.slot(plan.step_slot))
        em.return_if(failed, T.int_const(STATUS_CALL_FAILED, 32))

    def _callback(self, k, step):
        fnty = ir.FunctionType(T.I32, [T.I64, T.PTR])
        address = self.b.load(self.slot(self.plan.callback_slot), typ=fnty.as_pointer())
        status = self.b.call(address, [T.int_const(step.site), self.frame])
        self.em.return_if(self.b.icmp_signed("!=", status, T.int_const(0, 32)),
                          T.int_const(STATUS_CALLBACK_FAILED, 32))
        for v in step.info.get("defines", ()):
            self.load_var(v)
