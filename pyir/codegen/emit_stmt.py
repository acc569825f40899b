"""Statements to LLVM: loops of every kind, allocations, ifs, stores and extern calls.

`FunctionEmitter` fills one LLVM function from a lowered (block-free, flat) body. Parallel
loops are outlined into ``i32 @<f>.par<k>(i64 begin, i64 end, ptr closure)`` and run
through ``@pyir_parallel_for``; vectorized loops of a constant extent become vectors that
cover it exactly (whole vectors and narrower power-of-two ones: 12 lanes are 8 + 4), of a
symbolic extent a vector main loop plus a scalar tail, or masked vectors when the extent is
at most a few vectors (split tails), and, when the body cannot be vectorized directly, a
scalar loop carrying LLVM's vectorize hint; unrolled loops with a small constant extent are
unrolled here. The main side of a split loop is weighted as the likely branch; vector
accesses to buffers allocated here carry the alignment their index proves.
"""

import contextlib
import math
import operator
import typing

import llvmlite.ir as ir

from ..arith import known_multiple, vars_of
from ..errors import Error, kind_of
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import children, walk
from ..transform._arith import Scope
from ..transform.default_schedule import REASSOCIATE
from ..transform.linear import coefficient
from ..transform.register_tiles import TAIL_KEY as SPLIT_TAIL, VERSIONED_KEY
from ..transform.storage import HEAP_ALIGNMENT
from . import types as T
from .abi import STATUS_EXTERN_FAILED, STATUS_NO_MEMORY
from .builder import Builder, int_value
from .emit_expr import ExprEmitter
from .vectorize import beyond_llvm, iterations_apart, padded_rows, vector_chunks

#: Unrolled loops with a constant extent up to this are unrolled by codegen; longer ones
#: get LLVM's full-unroll hint when they hold no loop.
MAX_UNROLL = 64
#: An unrolled loop of symbolic extent gets LLVM's hint to unroll it this many times (with
#: a remainder loop), and its function LLVM's loop passes.
SYMBOLIC_UNROLL = 4
#: A serial loop whose body updates a register tile -- straight code that reads and writes
#: a stack buffer, as the k loop of a matmul's tile does -- in at most `MAX_TILE_LOOP_BODY`
#: instructions gets LLVM's hint to unroll it `TILE_LOOP_UNROLL` times (a remainder loop
#: takes the steps left of a symbolic extent): four steps' multiply-adds then share one
#: loop test and one offset of the row of B. On the bench matmul's 7 x 32 tiles (Intel
#: Xeon, rocketlake) the kernel ran 5-8 % faster at n = 1024 with one and two threads,
#: static and symbolic, and 1-4 % at n = 999 (unrolled twice: 1-4 % at 1024; 8 times: 2 %);
#: LLVM took 4.6 -> 8.3 ms over the tile's unit, and schedule + build 1-1.5 ms longer.
TILE_LOOP_UNROLL = 4
#: (The 7 x 32 tile's k loop body is 94 instructions, a 14 x 32 one's about twice that; the
#: bound keeps the unrolled copies of a larger tile from multiplying LLVM's time.)
MAX_TILE_LOOP_BODY = 256
#: Copies of a body that nested unrolling may make (codegen's and LLVM's together); past
#: it, a loop asked to unroll stays a plain loop (LLVM's own heuristics): unrolled loops of
#: 64, 96 and 48 nested made 300,000 instructions and a build that never finished.
MAX_UNROLLED_COPIES = 512
#: Copies of a body that holds loops (a serial, parallel or symbolic one) that unrolling may
#: make; past it, the loop asked to unroll stays a loop. LLVM optimizes each copy of each
#: loop on its own, and unrolls a short constant loop around a vectorized one itself: a
#: split j of [64, 8, None] with j_0 unrolled made 512 vectorized loops in one function, and
#: a build of minutes (at 16 copies: 5 s, at 4: 0.6 s).
MAX_UNROLLED_NESTS = 4
#: Vectorized loops of at most this many whole vectors (constant extent) are unrolled.
MAX_VECTOR_UNROLL = 4

PARALLEL_FOR = "pyir_parallel_for"
#: Parallel loop nests with fewer iterations than this run inline: waking the thread pool
#: costs more than such work. A nest known to be that small is not outlined at all.
PARALLEL_MIN_WORK = 4096
#: Branch weight of the main part of a split loop against its tail.
LIKELY_WEIGHT = 1000
#: Target features under which a masked vector load or store costs what a plain one does
#: (AVX-512 mask registers for every element size and vector width).
FREE_MASKS = ("avx512f", "avx512bw", "avx512vl")


#: The int64 operations `FunctionEmitter.overflows` checks, and their exact values.
_EXACT = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


class CodegenError(Error):
    """The LLVM backend cannot compile a construct (names the function and construct)."""


class LazyScope:
    """The `pyir.transform._arith.Scope` of a function being emitted, recording the loops
    and lets around the current statement (and that its shape variables are never
    negative) only when a question is asked inside them: binding a loop simplifies its
    range, and most loops (all those of a static matmul's main part) hold no question. A
    loop or let variable appears in no question outside its statement, so each answer is
    the one that recording every loop and let at its start gives."""

    def __init__(self):
        self._scope = Scope()
        self._open = []   # [what enters its fact into a Scope, that context once entered]

    @contextlib.contextmanager
    def _pending(self, enter):
        """Inside: a loop or let whose fact ``enter()`` (a context) records when asked."""
        frame = [enter, None]
        self._open.append(frame)
        try:
            yield
        finally:
            self._open.pop()
            if frame[1] is not None:
                frame[1].__exit__(None, None, None)

    def loop(self, var, start, extent):
        """A context: inside, ``var`` in ``[start, start + extent)`` as `Scope.loop` says."""
        return self._pending(lambda scope: scope.loop(var, start, extent))

    def let(self, var, value):
        """A context: inside, what `Scope.bind_let` records of ``var = value`` (nothing is
        kept for a let it records nothing of: a float let opens no frame that every later
        question and `snapshot` would go through)."""
        if not Scope.knows_of_let(var, value):
            return contextlib.nullcontext()
        return self._pending(lambda scope: _fact(scope.bind_let, var, value))

    def nonnegative(self, var):
        """``var >= 0`` in the whole function (`Scope.nonnegative`) and in the snapshots
        taken: said at its start, before any loop or let is open."""
        self._open.append([lambda scope: _fact(scope.nonnegative, var), None])

    def snapshot(self):
        """A LazyScope of the loops and lets open here, for a function emitted later."""
        copy = LazyScope()
        copy._open = [[enter, None] for enter, _ in self._open]
        return copy

    def const_bound(self, expr):
        """`Scope.const_bound` under the open loops and lets (which say nothing of an
        expression without variables: a constant extent)."""
        if vars_of(expr):
            for frame in self._open:
                if frame[1] is None:
                    frame[1] = frame[0](self._scope)
                    frame[1].__enter__()
        return self._scope.const_bound(expr)


@contextlib.contextmanager
def _fact(record, *args):
    """``record(*args)`` (a `Scope` method that binds a fact) as a context: the fact
    outlives it (a let's variable is not used after its statement, a shape variable is
    never negative)."""
    record(*args)
    yield


def _holds_loop_nest(s):
    """Whether ``s`` holds a loop with a loop inside (worth a function of its own)."""
    return any(isinstance(n, S.For) and any(isinstance(m, S.For) for m in S.walk_stmts(n.body))
               for n in S.walk_stmts(s))


def _updates_tile(body, storage):
    """Whether the straight vector code ``body`` (of a loop: no loop stays in it, and
    codegen vectorizes one inside) updates a register tile: stores into a stack buffer
    (``storage``, the plan of `pyir.transform`) a value read from it, ``C_local[i] =
    C_local[i] + A[...] * B[...]``. (Scalar loops are LLVM's to unroll, `_o3_may_help`;
    a loop of calls of a micro-kernel is the kernel's: with the hint, the tensorized bench
    matmul ran 8 % faster and built 3 ms slower.)"""
    return any(isinstance(n, S.BufferStore) and storage.get(n.buffer.name) == "stack"
               and any(isinstance(m, E.BufferLoad) and m.buffer is n.buffer
                       for m in walk(n.value))
               for n in S.walk_stmts(body))


def _holds_loops(s):
    """Whether ``s`` holds a loop that stays one: serial, parallel or of a symbolic extent
    (codegen turns constant unrolled and vectorized loops into straight code)."""
    return any(isinstance(n, S.For) and (n.kind in ("serial", "parallel")
                                         or not isinstance(n.extent, E.IntImm))
               for n in S.walk_stmts(s))


def _versions_tiles(loop):
    """Whether ``loop`` is a split loop or one whose body lowering versioned per tile
    (`pyir.transform.register_tiles.VERSIONED_KEY`): its body may be ``if main: ... else:
    tail`` (`serial`'s ``split``)."""
    return bool({SPLIT_TAIL, VERSIONED_KEY} & set(dict(loop.annotations)))


def _o3_may_help(body):
    """Whether LLVM's O3 passes may make more of the innermost scalar loop ``body``:
    vectorize it (unless `beyond_llvm`), or inline a kernel it calls that only O3 inlines
    (`pyir.ffi.extern.ExternKernel.needs_inliner`). A loop of calls of native kernels or of
    ``alwaysinline`` ones gains little there: O3 took 11 of the 47 ms build of the bench's
    tensorized matmul, a loop of micro-kernel calls, which then ran 2-4 % faster on two
    threads and 1-3 % slower on one (Intel Xeon, rocketlake)."""
    if not beyond_llvm(body):
        return True
    from pyir.ffi import get_global_func
    return any(isinstance(n, E.Call) and n.op == "call_extern" and getattr(
        get_global_func(n.args[0].value, allow_missing=True), "needs_inliner", False)
               for n in walk(body))


def unoptimized(fn):
    """Mark ``fn`` to be compiled without optimization (LLVM's ``optnone``, which needs
    ``noinline``): for a function that touches no buffer element, only unpacks arguments,
    checks, allocates and calls or launches the outlined loops that do the work. Such glue
    runs once per call or per parallel chunk, and optimized machine code for it cost more
    than the kernel's hot loop: the bench matmul's entry took ~5 ms of LLVM's time, ~1.5 ms
    without optimization. (Functions it must inline, ``alwaysinline``, still are.)"""
    fn.attributes.add("optnone")
    fn.attributes.add("noinline")


def _unrolls_big(s):
    """Whether LLVM must be told not to unroll loop ``s``: of a constant extent, it holds
    a loop nest of more than `MAX_UNROLL` copies, and unrolling it would make more than
    `MAX_UNROLLED_COPIES` (see `_unrolled_copies`). LLVM fully unrolls short constant
    loops, then the constant loops around them, and such loops around loops it keeps: a
    33 x 1000 fill became 2,000 vector stores in one block and 12 s of machine code, 17
    copies of a row loop over n and its tail 200 loops and 2 s. (Loops around a short nest
    stay LLVM's to unroll: they become innermost loops that it vectorizes, which the hint
    would prevent.)"""
    if not (isinstance(s.extent, E.IntImm) and _holds_loops(s.body)):
        return False
    inside = _unrolled_copies(s.body)
    return inside > MAX_UNROLL and s.extent.value * inside > MAX_UNROLLED_COPIES


def _unrolled_copies(s):
    """How many copies of its innermost statements loop nest ``s`` would make if every
    loop in it were unrolled, a loop of symbolic extent counting as `MAX_UNROLL` + 1 (a
    loop LLVM keeps); a sequence or an if counts all its parts. (With a stack: a sequence
    of lets nests as deep as it is long.)"""
    total, todo = 0, [(s, 1)]
    while todo:
        node, times = todo.pop()
        if isinstance(node, S.For):
            extent = node.extent.value if isinstance(node.extent, E.IntImm) else MAX_UNROLL + 1
            todo.append((node.body, times * extent))
            continue
        inside = [c for c in children(node) if isinstance(c, S.Stmt)]
        if inside:
            todo.extend((c, times) for c in inside)
        else:
            total += times
    return total


class _Count(typing.NamedTuple):
    """An iteration count of `FunctionEmitter._work`: a float, or an LLVM double that is at
    least ``least`` (so that ``max(count, 1)`` or ``count * 1`` costs no instruction)."""
    value: object
    least: float

    @staticmethod
    def of(x):
        return _Count(x, x)

    def double(self):
        """The count as an LLVM value."""
        v = self.value
        return ir.Constant(ir.DoubleType(), v) if isinstance(v, float) else v


_ONE = _Count.of(1.0)


class FunctionEmitter(ExprEmitter):
    def __init__(self, ctx, fn, func_name, storage, scope=None, in_parallel=False):
        """``scope``: the `LazyScope` of the enclosing emitter (an outlined loop body's)."""
        self.ctx, self.fn, self.name = ctx, fn, func_name
        self.storage, self.in_parallel = storage, in_parallel
        self.scope = LazyScope() if scope is None else scope
        entry = fn.append_basic_block("entry")
        self.allocas = Builder(entry)
        self.b = Builder(fn.append_basic_block("body"))
        self.env, self.bufs, self.heaps = {}, {}, []
        self.aligned = set()  # buffers allocated here: HEAP_ALIGNMENT-aligned
        self.padded = {}      # local buffers masked vectors access in whole rows (width)
        self.lanes, self.vvar, self.vbase, self.vmult = 1, None, None, 1
        self.mask = None  # the active lanes of a masked vector chunk
        self.copies = 1   # copies of the current statement the enclosing unrolling makes
        self.float_flags = ("contract",)   # of float + - *; "reassoc" in loops that allow it
        self.sums = {}    # index sums emitted: see ExprEmitter.expr
        self.computes = False   # whether it touches buffer elements (see `unoptimized`)

    def error(self, msg):
        return CodegenError(f"prim function {self.name}: {msg}")

    def finish(self):
        """Close the entry block and return 0 from the current block."""
        self.allocas.branch(self.fn.blocks[1])
        self.b.ret(T.int_const(0, 32))

    def nonneg(self, e):
        lo, _ = self.scope.const_bound(e)
        return lo is not None and lo >= 0

    # ------------------------------------------------------------ statements
    def stmt(self, s):
        """Emit ``s``; the body of a let or allocation and the last of a sequence are
        emitted in a loop (`S.follow_tails`), not by recursion."""
        S.follow_tails(s, self._emit)

    def _emit(self, s):
        method = getattr(self, "_s_" + type(s).__name__, None)
        if method is None:
            raise self.error(f"cannot compile {kind_of(s)} statement; lower the "
                             "function with pyir.transform.lower first")
        return method(s)

    def _s_SeqStmt(self, s):
        if not s.stmts:
            return None
        for x in s.stmts[:-1]:
            self.stmt(x)
        return S.Tail(s.stmts[-1])

    def _s_BufferStore(self, s):
        (index,) = s.indices
        buf = s.buffer
        value = self.expr(s.value)
        if self.vvar is not None and self.varying(index):
            if coefficient(index, self.vvar) == 1 and not self._varying_besides_vvar(index):
                value = self.to_memory(self.broadcast(value, self.lanes), buf.dtype)
                ptr = self.lane0_address(buf, index)
                align = self.vector_align(buf, index)
                mask = self.mask_for(buf)
                if mask is None:
                    self.b.store(value, ptr, align=align)
                else:
                    fn = self.ctx.declare(f"llvm.masked.store.{T.suffix(value.type)}.p0",
                                          ir.VoidType(), [value.type, T.PTR, T.I32, mask.type])
                    self.b.call(fn, [value, ptr, T.int_const(align, 32), mask])
                return
            idx = self.expr(index)
            value = self.broadcast(value, self.lanes)
            for lane in range(self.lanes):
                li = T.int_const(lane, 32)
                v = self.b.extract_element(value, li)
                self.b.store(self.to_memory(v, buf.dtype),
                             self.address(buf, self.b.extract_element(idx, li)),
                             align=dt.nbytes(buf.dtype))
            return
        if isinstance(value.type, ir.VectorType):
            value = self.b.extract_element(value, T.int_const(self.lanes - 1, 32))
        self.b.store(self.to_memory(value, buf.dtype), self.index_address(buf, index),
                     align=dt.nbytes(buf.dtype))

    def _s_LetStmt(self, s):
        self.env[s.var] = self.expr(s.value)
        scope = self.scope.let(s.var, s.value)
        scope.__enter__()
        return S.Tail(s.body, lambda _: scope.__exit__(None, None, None))

    def _s_IfThenElse(self, s, likely=False):
        """``likely``: the then-branch is the hot path (the main part of a split loop), and
        each branch that holds a loop nest may become a function of its own (`_outlinable`,
        `outlined`)."""
        cond = self.expr(s.condition)
        if isinstance(cond.type, ir.VectorType):
            raise self.error("an if whose condition varies across a vectorized loop")
        then_bb = self.b.append_basic_block("if.then")
        end_bb = self.b.append_basic_block("if.end")
        else_bb = self.b.append_basic_block("if.else") if s.else_case is not None else end_bb
        br = self.b.cbranch(cond, then_bb, else_bb)
        if likely:
            br.set_weights([LIKELY_WEIGHT, 1])
        k = None
        for bb, case, part in ((then_bb, s.then_case, "main"), (else_bb, s.else_case, "tail")):
            if case is None:
                continue
            self.b.position_at_end(bb)
            captures = self._outlinable(case) if likely and self.vvar is None else None
            if captures is not None:
                k = self.ctx.next_id(f"{self.name}.split") if k is None else k
                self.outlined(case, f"split{k}.{part}", captures)
            else:
                self.stmt(case)
            self.b.branch(end_bb)
        self.b.position_at_end(end_bb)

    def _outlinable(self, case):
        """The captures (`_captures`) of ``case``, a version of a split loop, when it becomes
        a function of its own; None for one that holds no loop nest, and for one that uses a
        stack buffer allocated around it: a register tile updated by a split reduction loop
        inside the tile would be passed by address and live in memory (the symbolic matmul
        with k split by 4 in its 7 x 32 tiles ran 2.5x slower)."""
        if not _holds_loop_nest(case):
            return None
        captures = self._captures(case, set())
        if any(self.storage.get(b.name) == "stack" for b in captures[1]):
            return None
        return captures

    def outlined(self, s, suffix, captures):
        """Call ``s`` as ``i32 @<f>.<suffix>`` taking the variables and buffers it uses
        (``captures``, `_captures`), and return its status if not 0; the function is
        emitted later (`ModuleContext.defer`).
        A split loop's versions are outlined so that LLVM allocates registers for each on
        its own and compiles them in separate compile units (`pyir.codegen.llvm`), on two
        threads."""
        cap_vars, cap_bufs = captures
        values = [self.env[v] for v in cap_vars] + [self.bufs[b] for b in cap_bufs]
        fn = ir.Function(self.ctx.module, ir.FunctionType(T.I32, [v.type for v in values]),
                         f"{self.name}.{suffix}")
        fn.linkage = "internal"
        sub = self._sub_emitter(fn, cap_vars, fn.args[:len(cap_vars)], cap_bufs,
                                fn.args[len(cap_vars):])
        sub.in_parallel = self.in_parallel
        sub.float_flags = self.float_flags
        sub.padded = {b: w for b, w in self.padded.items() if b in sub.bufs}

        def emit():
            sub.stmt(s)
            sub.finish()
            if not sub.computes:
                unoptimized(fn)
            return [fn]

        self.ctx.defer(emit, [fn])
        status = self.b.call(fn, values)
        self.return_if(self.b.icmp_signed("!=", status, T.int_const(0, 32)), status)

    def _s_Evaluate(self, s):
        if isinstance(s.value, E.Call) and s.value.op == "call_extern":
            result = self.call_extern(s.value)
            if s.value.dtype == "int32":
                failed = self.b.icmp_signed("!=", result, T.int_const(0, 32))
                self.return_if(failed, T.int_const(STATUS_EXTERN_FAILED, 32))
            return
        self.expr(s.value)

    def call_extern(self, call):
        name = call.args[0].value
        args = []
        for a in call.args[1:]:
            if isinstance(a, E.BufferLoad):
                args.append(self.index_address(a.buffer, a.indices[0]))
            elif isinstance(a, E.Buffer):
                args.append(self.address(a, T.int_const(0)))
            else:
                v = self.expr(a)
                if isinstance(v.type, ir.VectorType):
                    raise self.error(f"call_extern({name!r}) inside a vectorized loop")
                args.append(self.to_memory(v, a.dtype))
        ret = T.value_type(call.dtype) if call.dtype in dt.DTYPES else ir.VoidType()
        fn = self.ctx.declare(self.ctx.extern_symbol(name), ret, [a.type for a in args])
        wanted = ir.FunctionType(ret, [a.type for a in args])
        if str(fn.ftype) != str(wanted):
            raise self.error(f"T.call_extern({name!r}, ...) is called as {wanted} here and as "
                             f"{fn.ftype} elsewhere in the module: a native function has one "
                             "signature")
        result = self.b.call(fn, args)
        return result if call.dtype in dt.DTYPES else T.int_const(0, 32)

    def return_if(self, cond, status):
        """Return ``status`` (freeing live heap buffers) when ``cond`` holds."""
        fail = self.b.append_basic_block("fail")
        cont = self.b.append_basic_block("cont")
        self.b.cbranch(cond, fail, cont)
        self.b.position_at_end(fail)
        for ptr in reversed(self.heaps):
            self.heap_free(ptr)
        self.b.ret(status)
        self.b.position_at_end(cont)

    # ------------------------------------------------------------ allocation
    def _s_Allocate(self, s):
        buf = s.buffer
        kind = self.storage.get(buf.name)
        if kind is None:
            raise self.error(f"allocated buffer {buf.name} has no storage plan; lower the "
                             "function with pyir.transform.lower first")
        (extent,) = buf.shape
        mem_t = T.memory_type(buf.dtype)
        if kind == "stack":
            self.bufs[buf] = self.stack(ir.ArrayType(mem_t, max(1, extent.value)), buf.name,
                                        HEAP_ALIGNMENT)
            self.aligned.add(buf)
            width = padded_rows(s, lambda e: self.scope.const_bound(e)[1])
            if width is not None:
                self.padded[buf] = width
            return S.Tail(s.body)
        ptr = self.heap_alloc(E.Binary("mul", extent, E.IntImm(dt.nbytes(buf.dtype))), buf.name)
        self.bufs[buf] = ptr
        self.aligned.add(buf)
        self.heaps.append(ptr)

        def free(_):
            self.heaps.pop()
            self.heap_free(ptr)
        return S.Tail(s.body, free)

    def heap_alloc(self, size, name=""):
        """A heap block of ``size`` bytes (an int64 expression) aligned to `HEAP_ALIGNMENT`.
        The function returns `STATUS_NO_MEMORY` (freeing the blocks it holds) when the
        allocation fails, and before it when computing ``size`` overflows int64 (a wrapped
        size would be a small block the code then overruns) or the size rounded up to the
        alignment does not fit in int64. (A negative size, of a graph intermediate whose
        shape check comes later, asks for no bytes.)"""
        nbytes = self.expr(size)
        limit = dt.int_range(dt.INDEX)[1] - HEAP_ALIGNMENT
        bad = self.b.icmp_signed(">", nbytes, T.int_const(limit))
        for flag in self.overflows(size):
            bad = self.b.or_(bad, flag)
        if int_value(bad) != 0:   # not a constant size that fits
            self.return_if(bad, T.int_const(STATUS_NO_MEMORY, 32))
        rounded = self.b.add(self.b.or_(nbytes, T.int_const(HEAP_ALIGNMENT - 1)), T.int_const(1))
        ptr = self.b.call(self.ctx.heap_alloc(), [rounded], name=name)
        self.return_if(self.b.icmp_unsigned("==", ptr, ir.Constant(T.PTR, None)),
                       T.int_const(STATUS_NO_MEMORY, 32))
        return ptr

    def heap_free(self, ptr):
        """Give back the block ``ptr`` of `heap_alloc` (the call that made it holds the bytes
        it asked for)."""
        self.b.call(self.ctx.heap_free(), [ptr, ptr.args[0]])

    def overflows(self, e):
        """One i1 per int64 add, sub or mul in ``e``: true when the operation overflows for
        the values its operands have here (decided at once for constants). When none does,
        every part of ``e`` has its exact value, and so has ``expr(e)``."""
        lo, hi = dt.int_range(dt.INDEX)
        flags = []
        for n in walk(e):
            if type(n) is not E.Binary or n.op not in _EXACT or n.dtype != dt.INDEX:
                continue
            a, b = self.expr(n.a), self.expr(n.b)
            ka, kb = int_value(a), int_value(b)
            if ka is not None and kb is not None:
                if not lo <= _EXACT[n.op](ka, kb) <= hi:
                    flags.append(T.constant("bool", 1))
                continue
            checked = self.ctx.declare(f"llvm.s{n.op}.with.overflow.i64",
                                       ir.LiteralStructType([T.I64, T.I1]), [T.I64, T.I64])
            flags.append(self.b.extract_value(self.b.call(checked, [a, b]), 1))
        return flags

    def stack(self, ty, name, align):
        """An opaque pointer to ``ty`` allocated once in the entry block."""
        slot = self.allocas.alloca(ty, name=name)
        slot.align = align
        slot.type = T.PTR  # llvmlite types allocas with typed pointers; LLVM reads `ptr`
        return slot

    # ------------------------------------------------------------ loops
    def loop(self, begin, end, body_fn, step=1, hint=None, tile=False):
        """``for i in range(begin, end, step): body_fn(i)`` as a rotated loop; ``tile``: the
        body updates a register tile (`_updates_tile`), and one of at most
        `MAX_TILE_LOOP_BODY` instructions gets LLVM's hint to unroll `TILE_LOOP_UNROLL`
        times."""
        pre = self.b.block
        body_bb = self.b.append_basic_block("for.body")
        exit_bb = self.b.append_basic_block("for.end")
        self.b.cbranch(self.b.icmp_signed("<", begin, end), body_bb, exit_bb)
        self.b.position_at_end(body_bb)
        i = self.b.phi(T.I64, name="i")
        i.add_incoming(begin, pre)
        with self.b.loop_frame(pre, body_bb):
            body_fn(i)
            nxt = self.b.add(i, T.int_const(step))
        br = self.b.cbranch(self.b.icmp_signed("<", nxt, end), body_bb, exit_bb)
        if hint is None and tile and sum(len(bb.instructions) for bb in self.fn.blocks[
                self.fn.blocks.index(body_bb):]) <= MAX_TILE_LOOP_BODY:
            br.set_metadata("llvm.loop", self.ctx.loop_hint("unroll.count", TILE_LOOP_UNROLL))
        elif hint is not None:
            br.set_metadata("llvm.loop", self.ctx.loop_hint(*(
                hint if isinstance(hint, tuple) else (hint,))))
        i.add_incoming(nxt, self.b.block)
        self.b.position_at_end(exit_bb)

    def _s_For(self, s):
        with self.scope.loop(s.loop_var, s.start, s.extent):
            self._loop_stmt(s)

    def _loop_stmt(self, s):
        kind = s.kind
        if kind == "parallel" and (self.in_parallel or self.vvar is not None):
            kind = "serial"
        if kind == "vectorized" and self.vvar is not None:
            kind = "serial"
        start = self.expr(s.start)
        extent = self.expr(s.extent)
        if kind == "parallel":
            work = self._work(s, extent)
            if not isinstance(work, float) or work >= PARALLEL_MIN_WORK:
                self.parallel(s, start, extent, work)
                return
            # Known to be too little work for the pool: the loop runs here, not outlined.
            kind = "vectorized" if dict(s.annotations).get("vectorize") else "serial"
        if isinstance(extent.type, ir.VectorType) or isinstance(start.type, ir.VectorType):
            raise self.error(f"loop {s.loop_var.name} has bounds that vary across a "
                             "vectorized loop")
        if kind == "vectorized":
            most = None if isinstance(s.extent, E.IntImm) else self.scope.const_bound(s.extent)[1]
            self.vectorized(s.loop_var, start, extent, s.body, known_multiple(s.start), most)
        elif kind == "unroll" and isinstance(s.extent, E.IntImm) and s.extent.value <= MAX_UNROLL \
                and self.copies * s.extent.value <= (
                    MAX_UNROLLED_NESTS if _holds_loops(s.body) else MAX_UNROLLED_COPIES):
            saved, self.copies = self.copies, self.copies * s.extent.value
            for k in range(s.extent.value):
                self.env[s.loop_var] = self.b.add(start, T.int_const(k))
                self.stmt(s.body)
            self.copies = saved
        else:
            hint = None
            if kind == "unroll" and not isinstance(s.extent, E.IntImm):
                # (without LLVM's loop passes, LLVM warned on stderr that it did not unroll)
                hint = ("unroll.count", SYMBOLIC_UNROLL)
                self.ctx.leave_loops_to_llvm(self.fn)
            elif _unrolls_big(s):
                hint = "unroll.disable"
            elif kind == "unroll" and self.copies * s.extent.value <= MAX_UNROLLED_COPIES \
                    and not any(isinstance(n, S.For) for n in S.walk_stmts(s.body)):
                # An innermost loop: LLVM makes the copies (copies of loop nests would each
                # be optimized on their own, which is where compile time went).
                self.serial(s.loop_var, start, self.b.add(start, extent), s.body, "unroll.full")
                return
            saved = self.float_flags
            if dict(s.annotations).get(REASSOCIATE[0]):
                self.float_flags = ("contract", "reassoc")
            straight = self.vvar is None and not _holds_loops(s.body)
            vector = straight and any(isinstance(n, S.For) and n.kind == "vectorized"
                                      for n in S.walk_stmts(s.body))
            if straight and not vector and _o3_may_help(s.body):
                self.ctx.leave_loops_to_llvm(self.fn)   # an innermost loop of scalar code
            self.serial(s.loop_var, start, self.b.add(start, extent), s.body, hint,
                        split=_versions_tiles(s), tile=kind == "serial" and vector
                        and _updates_tile(s.body, self.storage))
            self.float_flags = saved

    def serial(self, var, begin, end, body, hint=None, split=False, tile=False):
        """``split``: ``body`` is a split loop's ``if main: ... else: tail`` (see
        `pyir.transform.split_tail_loops`); the main part is marked as the likely branch so
        that register allocation favours it. ``tile``: as for `loop`."""
        def run(i):
            self.env[var] = i
            if split and isinstance(body, S.IfThenElse):
                self._s_IfThenElse(body, likely=True)
            else:
                self.stmt(body)
        self.loop(begin, end, run, hint=hint, tile=tile)

    def vectorized(self, var, start, extent, body, start_multiple=1, most=None):
        """A vectorized loop: a constant extent as `constant_vectors`; a symbolic one of at
        most ``most`` (a few vectors) as masked vectors, else as a vector loop over whole
        vectors and a scalar loop for the rest; a body that cannot become vector code
        directly as a scalar loop with LLVM's vectorize hint. ``start_multiple``: what
        ``start`` is known to be a multiple of (for the alignment of vector accesses)."""
        lanes, maskable, calls = self.ctx.vector_plan(body, var)
        if lanes is None or calls:
            # LLVM's loop passes interleave vector math (exp: 10 % faster), or vectorize
            # what codegen could not.
            self.ctx.leave_loops_to_llvm(self.fn)
        if lanes is None:
            # No hint over a call of native code, a choice between reads that vector code
            # could not mask, or iterations that touch one another's elements: LLVM cannot
            # vectorize them either, and says so on stderr ("loop not vectorized").
            self.serial(var, start, self.b.add(start, extent), body,
                        hint=None if beyond_llvm(body) or not iterations_apart(body, var)
                        else "vectorize")
            return
        if int_value(start) is not None:
            start_multiple = int_value(start)

        def vector_body(i, width=lanes):
            self.vector_chunk(var, body, width, i, start_multiple)

        if isinstance(extent, ir.Constant):
            self.constant_vectors(start, extent.constant, lanes, vector_body)
        elif most is not None and 0 < most <= MAX_VECTOR_UNROLL * lanes and maskable:
            self.masked_vectors(start, extent, -(-most // lanes), lanes, vector_body)
        else:
            whole = self.b.mul(self.b.sdiv(extent, T.int_const(lanes)), T.int_const(lanes))
            main_end = self.b.add(start, whole)
            self.loop(start, main_end, vector_body, step=lanes)
            self.serial(var, main_end, self.b.add(start, extent), body)

    def constant_vectors(self, start, extent, lanes, vector_body):
        """A vectorized loop from ``start`` of constant ``extent`` as the vectors of
        `vector_chunks`, unrolled (``vector_body(base, width)`` emits one): with 8 lanes,
        ``for j in T.vectorized(12): L[i * 12 + j] = L[i * 12 + j] + a * P[k * 12 + j]``
        becomes::

            %n = load <4 x float>, ptr L + (i * 12 + 8)      ; lanes 8..11
            ... fmul, fadd <4 x float> ...
            store <4 x float> %n2, ptr L + (i * 12 + 8)
            %w = load <8 x float>, ptr L + i * 12            ; lanes 0..7
            ... fmul, fadd <8 x float> ...
            store <8 x float> %w2, ptr L + i * 12

        so a register tile indexed by the loop has constant offsets, which SROA/mem2reg turn
        into vector registers, and only the last lane of an odd extent is scalar code. Past
        `MAX_VECTOR_UNROLL` whole vectors, the whole vectors run in a loop first, then the
        rest as above."""
        looped = 0 if extent // lanes <= MAX_VECTOR_UNROLL else extent // lanes * lanes
        if looped:
            self.loop(start, self.b.add(start, T.int_const(looped)), vector_body, step=lanes)
        for offset, width in vector_chunks(extent - looped, lanes):
            vector_body(self.b.add(start, T.int_const(looped + offset)), width)

    def vector_chunk(self, var, body, lanes, base, start_multiple):
        """``body`` once for ``var`` in ``base .. base + lanes - 1`` as ``lanes``-wide vector
        code (scalar code for one lane). ``base`` is the loop's start, a multiple of
        ``start_multiple``, plus a multiple of ``lanes``: lane 0 is a multiple of their gcd
        (the alignment `vector_align` proves)."""
        if lanes == 1:
            self.env[var] = base
            self.stmt(body)
            return
        saved = (self.lanes, self.vvar, self.vbase, self.vmult)
        self.lanes, self.vvar, self.vbase = lanes, var, base
        self.vmult = math.gcd(lanes, start_multiple)
        self.env[var] = self.ramp(base, lanes)
        self.stmt(body)
        self.lanes, self.vvar, self.vbase, self.vmult = saved

    def masked_vectors(self, start, extent, count, lanes, vector_body):
        """``count`` vectors from ``start`` with the lanes below ``extent`` active -- a
        split's tail in a few vector instructions, no scalar loop. With `FREE_MASKS` they
        all run masked under one ``if extent > 0``; where masks cost something, vector ``k``
        runs under ``if extent > k * lanes``, unmasked when its lanes are all below
        ``extent``. Uniform reads stay under the condition of the loop's first iteration."""
        # The masks compare 32-bit lane numbers (half the vector registers of 64-bit ones):
        # where one is used, 0 < extent <= count * lanes, so the truncation is exact.
        extent_v = self.broadcast(self.b.trunc(extent, T.I32), lanes)

        def masked(k):
            saved = self.mask
            self.mask = self.b.icmp_signed("<", T.lane_numbers(lanes, k * lanes, T.I32),
                                           extent_v)
            vector_body(self.b.add(start, T.int_const(k * lanes)))
            self.mask = saved

        if all(self.ctx.target.has_feature(f) for f in FREE_MASKS):
            # One branch for all the vectors: a vector with no lane below ``extent`` changes
            # nothing (`can_mask`: its stores are masked off or land in the padding of a
            # padded row, its uniform reads are the first vector's). Each branch left out
            # is two basic blocks less for LLVM's instruction selection, which costs per
            # block: machine code for the symbolic matmul's tail tile took 28.5 M
            # instructions with a branch per vector, 25.8 M with one (callgrind).
            with self.b.if_then(self.b.icmp_signed(">", extent, T.int_const(0))):
                for k in range(count):
                    masked(k)
            return
        for k in range(count):
            first = T.int_const(k * lanes)
            whole = self.b.icmp_signed(">=", extent, T.int_const((k + 1) * lanes))
            with self.b.if_else(whole) as (plain, partial):
                with plain:
                    vector_body(self.b.add(start, first))
                with partial:
                    with self.b.if_then(self.b.icmp_signed(">", extent, first)):
                        masked(k)

    # ------------------------------------------------------------ parallel
    def parallel(self, s, start, extent, work):
        """Outline the loop (from ``start``, ``extent`` iterations, ``work`` iterations of
        its nest: see `_work`) into ``@<f>.par<k>`` and run it through pyir_parallel_for,
        or inline where ``work`` is below `PARALLEL_MIN_WORK` at run time."""
        cap_vars, cap_bufs = self._captures(s, {s.loop_var})
        values = [start] + [self.env[v] for v in cap_vars] + [self.bufs[b] for b in cap_bufs]
        k = self.ctx.next_id(self.name)
        body_fn, emit = self._outline_body(s, k, values, cap_vars, cap_bufs)
        thunk = self.ctx.thunk(f"{self.name}.par{k}", body_fn)

        def emit_both():
            body, computes = emit()
            if not computes:
                unoptimized(thunk)    # the body is inlined there
            return [body, thunk]

        self.ctx.defer(emit_both, [body_fn, thunk])
        closure = self.stack(ir.ArrayType(T.I64, len(values)), f"closure{k}", 8)
        for idx, v in enumerate(values):
            self.b.store(v, self.b.gep(closure, [T.int_const(idx)], source_etype=T.I64))
        run_bb = self.b.append_basic_block("par.run")
        done_bb = self.b.append_basic_block("par.done")
        self.b.cbranch(self.b.icmp_signed(">", extent, T.int_const(0)), run_bb, done_bb)
        self.b.position_at_end(run_bb)
        if isinstance(work, float):
            status = self.b.call(self.ctx.parallel_for(), [self.b.bitcast(thunk, T.PTR),
                                                           closure, extent])
        else:
            small = self.b.fcmp_ordered("<", work, ir.Constant(ir.DoubleType(),
                                                               PARALLEL_MIN_WORK))
            with self.b.if_else(small, likely=False) as (serial, pooled):
                with serial:
                    inline_status = self.b.call(thunk, [T.int_const(0), extent, closure])
                    inline_bb = self.b.block
                with pooled:
                    pool_status = self.b.call(self.ctx.parallel_for(),
                                              [self.b.bitcast(thunk, T.PTR), closure, extent])
                    pool_bb = self.b.block
            status = self.b.phi(T.I32)
            status.add_incoming(inline_status, inline_bb)
            status.add_incoming(pool_status, pool_bb)
        self.return_if(self.b.icmp_signed("!=", status, T.int_const(0, 32)), status)
        self.b.branch(done_bb)
        self.b.position_at_end(done_bb)

    def _work(self, s, extent):
        """Iterations of the loop nest ``s``: its extent times the most iterations of any
        one path through its body (a sequence or an if counts its largest part, a loop
        whose extent depends on enclosing loop variables counts once, an empty loop once).
        Counted in double precision -- a product over every loop of a body with several
        versions of a loop nest (split tails) overflowed int64 and sent big loops down the
        serial path -- and in Python where the extents are constants: a float, or an LLVM
        double."""
        return self._times(self._count(extent), self._path_work(s.body, {s.loop_var})).value

    def _path_work(self, node, inner):
        """The most iterations of one path through ``node`` (see `_work`); ``inner``: the
        loop variables bound inside the parallel loop."""
        inner = set(inner)   # grows by the lets along the chain `S.follow_tails` follows

        def visit(node):
            if isinstance(node, S.For):
                body = self._path_work(node.body, inner | {node.loop_var})
                names = [v for v in walk(node.extent) if isinstance(v, E.Var)]
                if not all(v in self.env and v not in inner for v in names):
                    return body
                return self._times(self._count(self.expr(node.extent)), body)
            if isinstance(node, S.SeqStmt) and node.stmts:
                out = _ONE
                for x in node.stmts[:-1]:
                    out = self._most(out, self._path_work(x, inner))
                return S.Tail(node.stmts[-1], lambda last: self._most(out, last))
            if isinstance(node, S.IfThenElse):
                then = self._path_work(node.then_case, inner)
                if node.else_case is None:
                    return then
                return self._most(then, self._path_work(node.else_case, inner))
            if isinstance(node, (S.LetStmt, S.Allocate)):
                if isinstance(node, S.LetStmt):
                    inner.add(node.var)
                return S.Tail(node.body)
            return _ONE
        return S.follow_tails(node, visit)

    def _count(self, value):
        """An extent as a `_Count` of at least one."""
        known = int_value(value)
        if known is not None:
            return _Count.of(float(max(known, 1)))
        return self._most(_Count(self.b.sitofp(value, ir.DoubleType()), -math.inf), _ONE)

    def _times(self, a, b):
        if isinstance(a.value, float) and isinstance(b.value, float):
            return _Count.of(a.value * b.value)
        if isinstance(a.value, float) and a.value == 1.0:
            return b
        if isinstance(b.value, float) and b.value == 1.0:
            return a
        return _Count(self.b.fmul(a.double(), b.double()), a.least * b.least)

    def _most(self, a, b):
        if isinstance(a.value, float) and isinstance(b.value, float):
            return _Count.of(max(a.value, b.value))
        if isinstance(a.value, float) and a.value <= b.least:
            return b
        if isinstance(b.value, float) and b.value <= a.least:
            return a
        x, y = a.double(), b.double()
        return _Count(self.b.select(self.b.fcmp_ordered(">", x, y), x, y),
                      max(a.least, b.least))

    def _captures(self, s, inner):
        """The variables (defined here, ``inner`` aside) and the buffers ``s`` uses."""
        inner, used, bufs = set(inner), {}, {}
        for n in walk(s):
            if isinstance(n, S.For):
                inner.add(n.loop_var)
            elif isinstance(n, S.LetStmt):
                inner.add(n.var)
            elif isinstance(n, E.Var):
                used[n] = None
            elif isinstance(n, E.Buffer):
                bufs[n] = None
        return ([v for v in used if v not in inner and v in self.env],
                [b for b in bufs if b in self.bufs])

    def _sub_emitter(self, fn, cap_vars, var_args, cap_bufs, buf_args):
        """The emitter of outlined function ``fn``, whose arguments ``var_args`` and
        ``buf_args`` (``noalias``) stand for ``cap_vars`` and ``cap_bufs``."""
        for a in buf_args:
            a.add_attribute("noalias")
        sub = FunctionEmitter(self.ctx, fn, self.name, self.storage, self.scope.snapshot())
        sub.copies = self.copies
        sub.env = dict(zip(cap_vars, var_args))
        sub.bufs = dict(zip(cap_bufs, buf_args))
        sub.aligned = self.aligned & set(cap_bufs)
        return sub

    def _outline_body(self, s, k, values, cap_vars, cap_bufs):
        arg_types = [T.I64, T.I64] + [v.type for v in values]
        fn = ir.Function(self.ctx.module, ir.FunctionType(T.I32, arg_types),
                         f"{self.name}.par{k}.body")
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        n_fixed = 3 + len(cap_vars)
        sub = self._sub_emitter(fn, cap_vars, fn.args[3:n_fixed], cap_bufs, fn.args[n_fixed:])
        sub.in_parallel = True
        begin, end, start = fn.args[:3]

        def emit():
            first = sub.b.add(start, begin)
            if dict(s.annotations).get("vectorize"):
                sub.vectorized(s.loop_var, first, sub.b.sub(end, begin), s.body)
            else:
                sub.serial(s.loop_var, first, sub.b.add(start, end), s.body,
                           split=_versions_tiles(s))
            sub.finish()
            return fn, sub.computes

        return fn, emit
