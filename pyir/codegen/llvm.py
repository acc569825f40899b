"""LLVM code generation for a lowered IRModule, following `pyir.codegen.abi`.

For each prim function ``f``: an internal ``i32 @"f.impl"`` taking ``noalias`` buffer
pointers, scalars and int64 shape variables, and the exported entry
``i32 @"pyir.entry.f"(ptr %slots)`` (`pyir.codegen.abi.entry_symbol`)
that unpacks the slots, checks the entry conditions (returning ``k`` when condition
``k - 1`` fails) and calls the impl (always inlined there). Graph functions are skipped
(lowered elsewhere).

`codegen_units` cuts the module into compile units, so that LLVM can compile one while
Python still generates the next (`pyir.runtime.engine.JitEngine` compiles them on two
threads). A parallel loop's thunk and body and an outlined version of a split loop
(`FunctionEmitter.outlined`) are generated after the function that calls them: the impls,
wrappers and graph functions are the first unit; each outlined function, once generated,
closes a unit when the unit holds at least `UNIT_INSTRUCTIONS` instructions; the last unit
holds the rest. A unit is a complete module text: it declares what it calls in other
units, and the outlined functions it defines are external, so that the units link into
one program.
"""

import collections
import re

import llvmlite.ir as ir

from ..arith import known_multiple
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import walk
from ..transform.common import shape_vars
from . import types as T
from .abi import Condition, FuncInfo, entry_symbol, param_infos
from .builder import Builder
from .compile import LOOPS_FOR_LLVM
from .emit_expr import index_arithmetic
from .emit_stmt import PARALLEL_FOR, CodegenError, FunctionEmitter, unoptimized
from .target import Target
from .vectorize import vector_plan


#: Instructions (as generated, before LLVM's passes) a compile unit needs before a thunk
#: or an outlined version may close it: LLVM spends ~1 ms on a unit beyond its functions
#: (~0.6 ms each) and instructions (~20 us each). With 100, the bench matmul's static
#: parallel loops (76 instructions: the packing of B and the panel loop's thunk) waited for
#: the register tile's 208 and went to LLVM as one unit of 13-14 ms, the build's last
#: step; with 50 they go ~6 ms sooner, while the background thread is idle, and the tile's
#: unit takes 8 ms (alternating fresh processes on an AMD EPYC, Zen 4: static build 35.4
#: -> 33.8 ms median, symbolic 51.6 -> 49.6, though the session's other changes ran with
#: it). The cores' work stayed the same (286 and 288 M instructions a build, callgrind).
UNIT_INSTRUCTIONS = 50


class ModuleContext:
    """The LLVM module being filled, its declarations and per-module counters, and the
    ``sink`` its compile units go to (one unit unless ``split``: see the module docstring)."""

    def __init__(self, target, externs, sink, split=False):
        self.target = target
        self.module = ir.Module(name="pyir")
        self.module.triple = target.triple
        self.externs = dict(externs or {})
        self._counters = {}
        self._hints = {}
        self._plans = {}
        self._multiples = {}
        self._index = {}
        self._sink = sink
        self._split = split
        self._deferred = collections.deque()   # (emit, functions) in the order deferred
        self._waiting = set()   # ids of the functions deferred and not emitted yet
        self._pending = []   # complete functions of the open unit, in order
        self._sent = set()   # ids of the functions sent in earlier units
        self._loops_for_llvm = set()   # ids of the functions with loops left to LLVM

    def declare(self, name, ret, args):
        """The function ``name`` (declared on first use)."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name)

    def vector_plan(self, body, var):
        """`pyir.codegen.vectorize.vector_plan` of a loop body and whether the body calls
        anything, ``(lanes, maskable, calls)``, once per body (a loop inside an unrolled
        one is emitted many times)."""
        key = (id(body), id(var))
        hit = self._plans.get(key)
        if hit is None:
            calls = any(isinstance(n, E.Call) for n in walk(body))
            hit = self._plans[key] = (body, var,
                                      (*vector_plan(body, var, self.target.vector_bits), calls))
        return hit[2]

    def lane0_multiple(self, index, var):
        """`pyir.arith.known_multiple` of ``index - var``: what the index of a contiguous
        vector access is a multiple of at lane 0, once per index (see `vector_plan`)."""
        key = (id(index), id(var))
        hit = self._multiples.get(key)
        if hit is None:
            hit = self._multiples[key] = (index, var,
                                          known_multiple(E.Binary("sub", index, var)))
        return hit[2]

    def index_arithmetic(self, e):
        """`pyir.codegen.emit_expr.index_arithmetic`, remembered for the module."""
        return index_arithmetic(e, self._index)

    def leave_loops_to_llvm(self, fn):
        """Function ``fn`` holds a loop codegen did not vectorize, innermost: its unit says
        so (`pyir.codegen.compile.LOOPS_FOR_LLVM`), for LLVM's loop passes."""
        self._loops_for_llvm.add(id(fn))

    def extern_symbol(self, kernel_name):
        return self.externs.get(kernel_name, kernel_name)

    def parallel_for(self):
        return self.declare(PARALLEL_FOR, T.I32, [T.PTR, T.PTR, T.I64])

    def heap_alloc(self):
        """``ptr @pyir_alloc(i64 bytes)``: the runtime's heap blocks (pyir/runtime/workspace.ll:
        a large one is kept for the next call)."""
        return self.declare("pyir_alloc", T.PTR, [T.I64])

    def heap_free(self):
        """``void @pyir_free(ptr, i64 bytes)``, the bytes `heap_alloc` was asked for."""
        return self.declare("pyir_free", ir.VoidType(), [T.PTR, T.I64])

    def next_id(self, func_name):
        k = self._counters.get(func_name, 0)
        self._counters[func_name] = k + 1
        return k

    def loop_hint(self, kind, count=None):
        """Loop metadata: "vectorize", "unroll.full", "unroll.enable", "unroll.disable" or
        "unroll.count" (unroll ``count`` times)."""
        if (kind, count) not in self._hints:
            key = {"vectorize": "llvm.loop.vectorize.enable"}.get(kind, f"llvm.loop.{kind}")
            ops = [ir.MetaDataString(self.module, key)]
            if kind == "vectorize":
                ops.append(ir.Constant(T.I1, 1))
            if count is not None:
                ops.append(ir.Constant(T.I32, count))
            option = self.module.add_metadata(ops)
            node = self.module.add_metadata([option, ir.MetaDataString(self.module, kind)])
            node.operands = (node, option)  # a loop ID refers to itself
            self._hints[kind, count] = node
        return self._hints[kind, count]

    def thunk(self, name, body_fn):
        """``i32 @name(i64 begin, i64 end, ptr closure)``: unpack the closure (one 8-byte
        slot per value) and call ``body_fn(begin, end, values...)``."""
        fn = ir.Function(self.module, ir.FunctionType(T.I32, [T.I64, T.I64, T.PTR]), name)
        fn.linkage = "internal"
        b = Builder(fn.append_basic_block("entry"))
        begin, end, closure = fn.args
        fields = [b.load(b.gep(closure, [T.int_const(k)], source_etype=T.I64), typ=a.type)
                  for k, a in enumerate(body_fn.args[2:])]
        b.ret(b.call(body_fn, [begin, end] + fields))
        return fn

    def defer(self, emit, functions):
        """Generate ``functions`` (declared, called from here) later: ``emit()`` fills them
        and returns them. Outlined functions are generated after the functions that call
        them, so that the callers' unit goes to LLVM first (`run_deferred`)."""
        self._deferred.append((emit, functions))
        self._waiting.update(id(f) for f in functions)
        if self._split:
            for f in functions:
                if "alwaysinline" not in f.attributes:
                    f.linkage = ""   # called from another unit

    def run_deferred(self):
        """Generate the deferred functions, in order (what they defer comes after them);
        with ``split``, the functions generated so far are the first unit, and each deferred
        group closes a unit once the unit holds `UNIT_INSTRUCTIONS`."""
        first = [f for f in self.module.functions if f.blocks and id(f) not in self._waiting]
        if self._split and first:
            self.send(first)
        while self._deferred:
            emit, functions = self._deferred.popleft()
            self._pending += emit()
            self._waiting.difference_update(id(f) for f in functions)
            if self._split and sum(len(bb.instructions) for f in self._pending
                                   for bb in f.blocks) >= UNIT_INSTRUCTIONS:
                self.send(self._pending)

    def send(self, functions):
        """Send the unit defining ``functions`` to the sink, and free their instructions."""
        text = _unit_text(self.module, functions, self._sent | self._waiting)
        if any(id(f) in self._loops_for_llvm for f in functions):
            text = f"{LOOPS_FOR_LLVM}\n{text}"
        self._sink(text)
        self._sent.update(id(f) for f in functions)
        self._pending = []
        _release(functions)

    def send_rest(self):
        """Send the last unit: every function defined and not yet sent (if any, or if
        nothing was sent: the units before it are never empty)."""
        rest = [f for f in self.module.functions if f.blocks and id(f) not in self._sent]
        if rest or not self._sent:
            self.send(rest)


def _func_info(func):
    conds = tuple(Condition(c, m) for c, m in (func.attr("entry_conditions") or ()))
    scalars = tuple(p for p in func.params if isinstance(p, E.Var))
    return FuncInfo(func.name, param_infos(func), tuple(shape_vars(func)), conds, scalars,
                    tuple(func.attr("access_checks") or ()))


def _check_lowered(func):
    """Refuse a function that still has blocks (first) or a buffer of more than one
    dimension: codegen takes the flat output of `pyir.transform.lower`."""
    unflat = None
    for n in walk(func.body):
        if isinstance(n, (S.Block, S.BlockRealize)):
            raise CodegenError(f"prim function {func.name} still has blocks; lower it with "
                               "pyir.transform.lower first")
        if unflat is None and isinstance(n, E.Buffer) and len(n.shape) != 1:
            unflat = n
    if unflat is not None:
        raise CodegenError(f"prim function {func.name}: buffer {unflat.name} has "
                           f"{len(unflat.shape)} dimensions; lower it with "
                           "pyir.transform.lower first")


def _emit_impl(ctx, func, info):
    arg_types = [T.PTR if isinstance(p, E.Buffer) else T.memory_type(p.dtype)
                 if p.dtype == "bool" else T.value_type(p.dtype) for p in func.params]
    arg_types += [T.I64] * len(info.shape_vars)
    fn = ir.Function(ctx.module, ir.FunctionType(T.I32, arg_types), f"{func.name}.impl")
    fn.linkage = "internal"
    # Its one caller is the wrapper: inlined there, it is one function less for the machine
    # code generator (each costs ~0.7 ms of fixed work, more than a small kernel's code).
    fn.attributes.add("alwaysinline")
    em = FunctionEmitter(ctx, fn, func.name, dict(func.attr("storage") or ()))
    for p, a in zip(func.params, fn.args):
        a.name = p.name
        if isinstance(p, E.Buffer):
            a.add_attribute("noalias")
            em.bufs[p] = a
        elif p.dtype == "bool":
            em.env[p] = em.from_memory(a, "bool")
        else:
            em.env[p] = a
    for v, a in zip(info.shape_vars, fn.args[len(func.params):]):
        a.name = v.name
        em.env[v] = a
        em.scope.nonnegative(v)
    em.stmt(func.body)
    em.finish()
    return fn, em.computes


def _emit_wrapper(ctx, func, info, impl):
    fn = ir.Function(ctx.module, ir.FunctionType(T.I32, [T.PTR]), entry_symbol(func.name))
    em = FunctionEmitter(ctx, fn, func.name, {})
    slots = fn.args[0]
    slots.name = "slots"
    args = []
    for k, param in enumerate(impl.args):
        slot = em.b.gep(slots, [T.int_const(k)], source_etype=T.I64)
        args.append(em.b.load(slot, typ=param.type, align=8))
    for v, a in zip(info.shape_vars, args[len(func.params):]):
        em.env[v] = a
    for p, a in zip(func.params, args):
        if isinstance(p, E.Var):
            em.env[p] = em.from_memory(a, "bool") if p.dtype == "bool" else a
    for k, cond in enumerate(info.conditions):
        em.return_if(em.b.not_(em.holds(cond.expr)), T.int_const(k + 1, 32))
    em.allocas.branch(fn.blocks[1])
    em.b.ret(em.b.call(impl, args))
    return fn


def codegen(mod, target="llvm", externs=None, extra=None):
    """LLVM IR text (one module) and one `FuncInfo` per prim function of a lowered module.

    ``externs`` maps kernel names used by ``call_extern`` to the symbols to call
    (default: the kernel name itself). ``extra(ctx, infos)``, if given, emits more
    functions into the module after the prim functions (graph functions use it).
    """
    texts = []
    infos = _generate(mod, target, externs, extra, texts.append, split=False)
    return texts[0], infos


def codegen_units(mod, sink, target="llvm", externs=None, extra=None):
    """Like `codegen`, with the module cut into compile units: ``sink(text)`` receives
    each unit's IR text as soon as it is generated. Returns the `FuncInfo`s."""
    return _generate(mod, target, externs, extra, sink, split=True)


def _generate(mod, target, externs, extra, sink, split):
    target = Target.from_string(target)
    ctx = ModuleContext(target, externs, sink, split)
    infos = []
    for _, func in mod.functions:
        if not isinstance(func, S.PrimFunc):
            continue
        _check_lowered(func)
        info = _func_info(func)
        impl, computes = _emit_impl(ctx, func, info)
        wrapper = _emit_wrapper(ctx, func, info, impl)
        if not computes:
            unoptimized(wrapper)    # the impl is inlined there
        infos.append(info)
    if extra is not None:
        extra(ctx, infos)
    ctx.run_deferred()
    ctx.send_rest()
    return infos


def _unit_text(module, functions, sent):
    """The IR text of a module that defines ``functions`` of ``module``, declares the
    external functions defined in other units (``sent``: their ids, or still being
    generated) that it calls, and leaves out their internal ones: llvmlite's module printer,
    unit by unit. (Declaring every function of the other units made each unit as long as
    the module: a long function's hundreds of outlined parallel loops cost LLVM time
    quadratic in their number.)"""
    own = {id(f) for f in functions}
    texts = {id(v): str(v) for v in module.globals.values()
             if id(v) in own or not (v.blocks or id(v) in sent)}
    code = "".join(texts.values())
    used = {_referred(r) for r in _REFERENCE.findall(code)}
    lines = [f'; ModuleID = "{module.name}"', f'target triple = "{module.triple}"',
             f'target datalayout = "{module.data_layout}"', ""]
    for v in module.globals.values():
        if id(v) in texts:
            lines.append(texts[id(v)])
        elif v.linkage != "internal" and _referred(v.get_reference()) in used:
            args = ", ".join(str(a) for a in v.ftype.args)
            lines.append(f"declare {v.ftype.return_type} {v.get_reference()}({args})\n")
    metadata = _metadata_used(module.metadata, code)
    lines += [str(md) for md in module.metadata if md.get_reference() in metadata]
    return "\n".join(lines)


def _metadata_used(nodes, text):
    """The references (``!4``) of the metadata ``nodes`` that ``text`` refers to, directly
    or through other nodes: a unit carries its own loops' hints only, so that another
    unit's unroll hint does not bring it LLVM's loop unroller (`pyir.codegen.compile`),
    which unrolls unasked loops too (the symbolic matmul's last unit took 4.4 -> 9.0 ms)."""
    texts = {md.get_reference(): str(md) for md in nodes}
    used, todo = set(), _METADATA_REF.findall(text)
    while todo:
        ref = todo.pop()
        if ref in texts and ref not in used:
            used.add(ref)
            todo += _METADATA_REF.findall(texts[ref])
    return used


#: Where LLVM IR text refers to a global: ``@name`` or ``@"name"``.
_REFERENCE = re.compile(r'@(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)')
#: Where LLVM IR text refers to a metadata node: ``!4``.
_METADATA_REF = re.compile(r"!\d+")


def _referred(reference):
    """The name in a `_REFERENCE` (as written: quoted or not, the same name)."""
    return reference[1:].strip('"')


def _release(functions):
    """Break the reference cycles of llvmlite's IR objects (a block and its instructions or
    terminator, a loop's phi and its increment) once ``functions`` are printed, so that
    reference counting frees the instructions at once: left to the cyclic collector, the
    first collection after a build spent 1.5 ms (4 % of the bench matmul's build) on them."""
    for fn in functions:
        for bb in fn.blocks:
            for instr in bb.instructions:
                if isinstance(instr, ir.PhiInstr):
                    instr.incomings.clear()
            bb.instructions.clear()
            bb.terminator = None
        fn.blocks.clear()
