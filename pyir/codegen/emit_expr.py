"""Expressions to LLVM values, scalar or vector.

A value is a vector exactly when it varies across the lanes of the vectorized loop being
emitted; uniform values stay scalar and are broadcast where they meet vectors. Loads
and stores find their address once per vector when the index moves by one per lane.
"""

import math

import llvmlite.ir as ir

from ..arith import vars_of
from ..errors import kind_of
from ..arith.canonical import wrap
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir.node import walk
from ..transform.linear import coefficient
from ..transform.storage import HEAP_ALIGNMENT
from . import types as T
from . import vecmath
from .abi import BINARY_OPS
from .builder import int_value

_ICMP_SIGNED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_FCMP = {"eq": ("==", True), "ne": ("!=", False), "lt": ("<", True), "le": ("<=", True),
         "gt": (">", True), "ge": (">=", True)}
_SIMPLE_INTRINSICS = {"sqrt": "sqrt", "sin": "sin", "cos": "cos", "floor": "floor",
                      "ceil": "ceil", "pow": "pow"}
_LIBM = {"erf": {"float32": "erff", "float64": "erf"}}


def has_side_reads(e):
    """True when evaluating ``e`` may touch memory or call out (so it must not run
    speculatively)."""
    return any(isinstance(n, (E.BufferLoad, E.Call)) for n in walk(e))


_INDEX_OPS = frozenset(("add", "sub", "mul", "floordiv", "floormod", "min", "max"))


def index_arithmetic(e, memo):
    """Whether ``e`` is integer arithmetic (+ - * // % min max) on variables and constants
    only: nothing that reads memory, calls, or branches. ``memo``: id(expr) -> (expr,
    answer), kept by the caller for one module."""
    hit = memo.get(id(e))
    if hit is None or hit[0] is not e:
        kind = type(e)
        ok = kind is E.Var or kind is E.IntImm or (
            kind is E.Binary and e.op in _INDEX_OPS and index_arithmetic(e.a, memo)
            and index_arithmetic(e.b, memo))
        hit = memo[id(e)] = (e, ok)
    return hit[1]


def fold_index(e, values):
    """The int64 value of the index arithmetic ``e`` (`index_arithmetic`) with the values
    ``values`` (Var -> int) of its variables, wrapping as the machine does; None where a
    division is by 0 or -1 (whose results codegen chooses as numpy does)."""
    kind = type(e)
    if kind is E.IntImm:
        return e.value
    if kind is E.Var:
        return values[e]
    a = fold_index(e.a, values)
    b = None if a is None else fold_index(e.b, values)
    if b is None or (e.op in ("floordiv", "floormod") and b in (0, -1)):
        return None
    return wrap(BINARY_OPS[e.op](a, b), "int64")


class ExprEmitter:
    """Mixin for the function emitter: needs ``b`` (builder), ``env`` (Var -> value),
    ``bufs`` (Buffer -> pointer), ``aligned`` (the buffers allocated here), ``padded``
    (buffer -> row width, see `pyir.codegen.vectorize.padded_rows`), ``ctx`` (module
    context), ``lanes``, ``vvar`` (the vectorized loop variable or None), ``vmult`` (what
    its value at lane 0 is a multiple of), ``mask`` (the active lanes of a masked vector, or
    None), ``sums`` (a dict: see `expr`), ``float_flags`` (LLVM's fast-math flags for float
    arithmetic), ``computes`` (set by `buffer_data`), ``nonneg(expr)`` and
    ``return_if(cond, status)``."""

    def mask_for(self, buf):
        """The mask a contiguous vector access to ``buf`` needs: none in a padded buffer
        whose rows hold whole vectors."""
        width = self.padded.get(buf)
        return None if width is not None and width % self.lanes == 0 else self.mask

    # ------------------------------------------------------------ vector helpers
    def broadcast(self, v, lanes):
        if lanes == 1 or isinstance(v.type, ir.VectorType):
            return v
        vt = T.vector_of(v.type, lanes)
        if isinstance(v, ir.Constant) and not isinstance(v.constant, (list, tuple)):
            return ir.Constant(vt, [v] * lanes)
        one = self.b.insert_element(T.undef(vt), v, T.int_const(0, 32))
        return self.b.shuffle_vector(one, T.undef(vt), T.splat_mask(lanes))

    def unify(self, *vals):
        lanes = max(T.lanes_of(v) for v in vals)
        return [self.broadcast(v, lanes) for v in vals]

    def ramp(self, base, lanes):
        first = int_value(base)
        if first is not None:
            return T.lane_numbers(lanes, first)
        return self.b.add(self.broadcast(base, lanes), T.lane_numbers(lanes))

    def varying(self, e):
        return any(n in self.env and isinstance(self.env[n].type, ir.VectorType)
                   for n in vars_of(e))

    # ------------------------------------------------------------ entry point
    def expr(self, e):
        """The value of ``e``. Integer arithmetic on variables (indices) is emitted once per
        block and set of variable values: unrolled copies of a body ask for the same index
        sums many times, and instruction numbering alone would still walk them each time."""
        if type(e) is E.Binary and e.dtype == "int64" and self.ctx.index_arithmetic(e):
            value = self.constant_index(e)
            if value is not None:
                return T.int_const(value)
            env = self.env
            key = (id(e), self.lanes, id(self.b.block), *[env.get(v) for v in vars_of(e)])
            hit = self.sums.get(key)
            if hit is None or hit[0] is not e:
                hit = self.sums[key] = (e, self._e_Binary(e))
            return hit[1]
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"cannot compile {kind_of(e)} expression")
        return method(e)

    def constant_index(self, e):
        """The value of the int64 index arithmetic ``e`` where each of its variables has a
        constant value here (the row of an unrolled copy, a vector's first lane), folded in
        Python (`fold_index`), not instruction by instruction in the builder: in an
        unrolled register tile most addresses are constant offsets (the bench matmul's code
        generation, static n: 81 -> 77 M instructions; the IR is the same). Else None."""
        values = {}
        for v in vars_of(e):
            c = int_value(self.env.get(v))
            if c is None:
                return None
            values[v] = c
        return fold_index(e, values)

    def _e_IntImm(self, e):
        return T.constant(e.dtype, e.value)

    def _e_FloatImm(self, e):
        return T.constant(e.dtype, e.value)

    def _e_Var(self, e):
        if e not in self.env:
            raise self.error(f"variable {e.name} is used but has no value here")
        return self.env[e]

    def _e_Not(self, e):
        v = self.expr(e.a)
        return self.b.xor(v, T.constant("bool", 1, T.lanes_of(v)))

    # ------------------------------------------------------------ memory
    def buffer_data(self, buf):
        """The pointer to ``buf``'s elements: every access to them goes through here, so
        the function is known to compute (see `pyir.codegen.emit_stmt.unoptimized`)."""
        self.computes = True
        try:
            return self.bufs[buf]
        except KeyError:   # IR built by hand: another Buffer of the same name, say
            raise self.error(f"buffer {buf.name} is accessed but is neither a parameter of "
                             "the function nor allocated in it") from None

    def address(self, buf, index):
        return self.b.gep(self.buffer_data(buf), [index], inbounds=True,
                          source_etype=T.memory_type(buf.dtype))

    def index_address(self, buf, index):
        """The address of ``buf[index]`` for the index expression ``index``. Inside a loop,
        a sum whose terms are partly invariant in the innermost loop is split: a row
        pointer ``buf + invariant`` (computed before the loop, see `Builder.loop_frame`)
        plus the varying rest (``A + (i * 6 + r) * n`` then ``+ k``), what loop strength
        reduction would have found. The two steps are not ``inbounds``: the row pointer
        alone may lie outside the buffer."""
        inner = self.b.innermost_loop()
        if inner is None or not (isinstance(index, E.Binary) and index.op in ("add", "sub")
                                 and dt.is_int(index.dtype)):
            return self.address(buf, self.expr(index))
        if index.dtype == "int64" and self.ctx.index_arithmetic(index):
            value = self.constant_index(index)
            if value is not None:
                return self.address(buf, T.int_const(value))
        terms, const = self._sum_terms(index)
        outside, rest = [], []
        for t in terms:
            (outside if self.b.defined_in(t[0]) < inner else rest).append(t)
        if not (outside and rest) or any(isinstance(v.type, ir.VectorType) for v, _ in terms):
            return self.address(buf, self._add_terms(terms, index.dtype, const))
        etype = T.memory_type(buf.dtype)
        row = self.b.gep(self.buffer_data(buf), [self._add_terms(outside, index.dtype)],
                         source_etype=etype)
        return self.b.gep(row, [self._add_terms(rest, index.dtype, const)], source_etype=etype)

    def _e_BufferLoad(self, e):
        (index,) = e.indices
        buf = e.buffer
        if self.vvar is not None and self.varying(index):
            c = coefficient(index, self.vvar)
            if c == 1 and not self._varying_besides_vvar(index):
                ptr = self.lane0_address(buf, index)
                vt = T.memory_type(buf.dtype, self.lanes)
                align = self.vector_align(buf, index)
                mask = self.mask_for(buf)
                if mask is None:
                    v = self.b.load(ptr, typ=vt, align=align)
                else:
                    fn = self.ctx.declare(f"llvm.masked.load.{T.suffix(vt)}.p0", vt,
                                          [T.PTR, T.I32, mask.type, vt])
                    v = self.b.call(fn, [ptr, T.int_const(align, 32), mask, T.undef(vt)])
                return self.from_memory(v, buf.dtype)
            idx = self.expr(index)
            out = ir.Constant(T.value_type(buf.dtype, self.lanes), ir.Undefined)
            for lane in range(self.lanes):
                i = self.b.extract_element(idx, T.int_const(lane, 32))
                out = self.b.insert_element(out, self._scalar_load(self.address(buf, i), buf),
                                             T.int_const(lane, 32))
            return out
        return self._scalar_load(self.index_address(buf, index), buf)

    def _scalar_load(self, ptr, buf):
        v = self.b.load(ptr, typ=T.memory_type(buf.dtype), align=dt.nbytes(buf.dtype))
        return self.from_memory(v, buf.dtype)

    def from_memory(self, v, dtype):
        if dtype != "bool":
            return v
        return self.b.icmp_unsigned("!=", v, ir.Constant(v.type, None))

    def to_memory(self, v, dtype):
        if dtype != "bool":
            return v
        return self.b.zext(v, T.memory_type("bool", T.lanes_of(v)))

    def vector_align(self, buf, index):
        """Alignment in bytes of the contiguous vector access ``buf[index]``: the element
        size, or more in a buffer allocated here (`HEAP_ALIGNMENT`-aligned) when the index at
        lane 0 is always a multiple of a power of two (packed panels: ``j * n * 16 + k * 16
        + lane``)."""
        size = dt.nbytes(buf.dtype)
        if buf not in self.aligned:
            return size
        m = math.gcd(self.ctx.lane0_multiple(index, self.vvar), self.vmult)
        most = min(HEAP_ALIGNMENT, size * self.lanes)
        return most if m == 0 else min(most, size * (m & -m))

    def _varying_besides_vvar(self, e):
        return any(n is not self.vvar and n in self.env
                   and isinstance(self.env[n].type, ir.VectorType) for n in vars_of(e))

    def lane0_address(self, buf, index):
        """`index_address` with the vector variable at its first lane (a scalar address)."""
        saved = self.env[self.vvar]
        self.env[self.vvar] = self.vbase
        try:
            return self.index_address(buf, index)
        finally:
            self.env[self.vvar] = saved

    # ------------------------------------------------------------ arithmetic
    def _e_Binary(self, e):
        if e.op in ("and", "or") and has_side_reads(e.b):
            return self._short_circuit(e)
        if e.op in ("floordiv", "floormod"):
            return self._floor_div_mod(e)
        if e.op in ("add", "sub") and dt.is_int(e.dtype):
            return self._int_sum(e)
        a, b = self.unify(self.expr(e.a), self.expr(e.b))
        d = e.a.dtype
        bld = self.b
        if e.op in ("add", "sub", "mul"):
            if dt.is_float(d):
                # "contract" lets the backend fuse a multiply feeding an add into an FMA;
                # "reassoc" (a loop the default schedule marked) lets LLVM vectorize sums.
                return {"add": bld.fadd, "sub": bld.fsub, "mul": bld.fmul}[e.op](
                    a, b, flags=self.float_flags)
            return {"add": bld.add, "sub": bld.sub, "mul": bld.mul}[e.op](a, b)
        if e.op == "div":
            return bld.fdiv(a, b)
        if e.op in ("min", "max"):
            if d in ("float32", "float64") and "reassoc" in self.float_flags:
                # A loop that may reassociate (a row max the default schedule marked): LLVM
                # vectorizes a reduction of its NaN-propagating intrinsic, not one of the
                # select below (a 2048-wide row max ran 11x slower than numpy's). Equal
                # zeros give +0.0 (max) / -0.0 (min) whatever their order. (Not float16:
                # x86 has no such vector instruction, and the expansion was slower.)
                return self.intrinsic("maximum" if e.op == "max" else "minimum", [a, b])
            if dt.is_uint(d) and isinstance(e.a, E.IntImm):
                a, b = b, a     # the constant on the right: the builder decides x < 0 unsigned
            take_a = self.compare("lt" if e.op == "min" else "gt", a, b, d)
            if dt.is_float(d):   # NaN in, NaN out, from either side (numpy's maximum)
                take_a = bld.or_(take_a, bld.fcmp_unordered("uno", a, a))
            return bld.select(take_a, a, b)
        if e.op in _ICMP_SIGNED:
            return self.compare(e.op, a, b, d)
        return bld.and_(a, b) if e.op == "and" else bld.or_(a, b)

    def _int_sum(self, e):
        """An integer sum of terms, reassociated as LLVM's Reassociate pass would: the terms
        defined outside the most loops first (their partial sums move out of inner loops,
        see `Builder.loop_frame`), the constant last (it becomes an address offset).
        Wrapping addition is associative, so the value is the same."""
        terms, const = self._sum_terms(e)
        return self._add_terms(terms, e.dtype, const)

    def _sum_terms(self, e):
        """``(terms, const)`` of the integer sum ``e``: its non-constant terms as (value,
        sign), those defined outside the most loops first, and its constant part."""
        terms, const = [], 0
        todo = [(e, 1)]
        while todo:
            node, sign = todo.pop()
            if isinstance(node, E.Binary) and node.op in ("add", "sub") \
                    and node.dtype == e.dtype:
                todo.append((node.b, sign if node.op == "add" else -sign))
                todo.append((node.a, sign))
                continue
            v = self.expr(node)
            c = int_value(v)
            if c is not None:
                const += sign * c
            else:
                terms.append((v, sign))
        if any(isinstance(v.type, ir.VectorType) for v, _ in terms):
            lanes = max(T.lanes_of(v) for v, _ in terms)
            terms = [(self.broadcast(v, lanes), sign) for v, sign in terms]
        terms.sort(key=lambda t: self.b.defined_in(t[0]))    # stable: source order otherwise
        return terms, wrap(const, e.dtype)

    def _add_terms(self, terms, dtype, const=0):
        """The sum of ``terms`` ((value, sign) pairs) and ``const``, in that order (a
        negative first term is taken from the constant: ``1024 - i * 6``)."""
        out = None
        for v, sign in terms:
            if out is None:
                if sign < 0:
                    out = self.b.sub(T.constant(dtype, const, T.lanes_of(v)), v)
                    const = 0
                else:
                    out = v
            else:
                out = (self.b.add if sign > 0 else self.b.sub)(out, v)
        if out is None:
            return T.constant(dtype, const)
        if const:
            out = self.b.add(out, T.constant(dtype, const, T.lanes_of(out)))
        return out

    def compare(self, op, a, b, d):
        if dt.is_float(d):
            sym, ordered = _FCMP[op]
            return (self.b.fcmp_ordered if ordered else self.b.fcmp_unordered)(sym, a, b)
        if dt.is_int(d):
            return self.b.icmp_signed(_ICMP_SIGNED[op], a, b)
        return self.b.icmp_unsigned(_ICMP_SIGNED[op], a, b)

    def holds(self, cond, negated=False):
        """An i1: whether the scalar condition ``cond`` (``not cond`` when ``negated``)
        holds in exact integer arithmetic, as entry conditions are checked. A comparison
        whose operands overflow as computed is neither true nor false, and ``and`` / ``or``
        / ``not`` combine such unknowns as Kleene's logic does: ``m < 1 or n >= off + m``
        holds for ``m = 0`` whatever ``off`` is, and for ``m = 1, off = 2**63 - 1`` it does
        not (wrapped, ``off + m`` would be negative and the call accepted)."""
        if isinstance(cond, E.Not):
            return self.holds(cond.a, not negated)
        if isinstance(cond, E.Binary) and cond.op in ("and", "or"):
            a, b = self.holds(cond.a, negated), self.holds(cond.b, negated)
            return self.b.and_(a, b) if (cond.op == "and") != negated else self.b.or_(a, b)
        v = self.expr(cond)
        if negated:
            v = self.b.not_(v)
        for n in walk(cond):
            if isinstance(n, E.Binary) and n.op in ("add", "sub", "mul") and not dt.is_float(
                    n.dtype):
                kind = "s" if dt.is_int(n.dtype) else "u"
                fn = getattr(self.b, f"{kind}{n.op}_with_overflow")
                wrapped = self.b.extract_value(fn(self.expr(n.a), self.expr(n.b)), 1)
                v = self.b.and_(v, self.b.not_(wrapped))
        return v

    def _floor_div_mod(self, e):
        """Floor division and modulo. An integer divisor that may be 0 (or -1, whose
        quotient of the smallest integer overflows: both trap in the machine's divide) is
        replaced by 1 for the divide, and the result chosen as numpy does: ``x // 0`` and
        ``x % 0`` are 0, ``x // -1`` is ``-x`` (wrapping), ``x % -1`` is 0. Floats: see
        `_float_floor_div_mod`."""
        d = e.a.dtype
        a, b = self.unify(self.expr(e.a), self.expr(e.b))
        bld = self.b
        if dt.is_float(d):
            work = "float32" if d == "float16" else d
            out = self._float_floor_div_mod(e.op, self.convert(a, d, work),
                                            self.convert(b, d, work), work)
            return self.convert(out, work, d)
        zero, one = ir.Constant(a.type, None), T.constant(d, 1, T.lanes_of(a))
        safe = isinstance(e.b, E.IntImm) and e.b.value not in (0, -1)
        if not dt.is_int(d):
            if safe:
                return (bld.udiv if e.op == "floordiv" else bld.urem)(a, b)
            by_zero = bld.icmp_unsigned("==", b, zero)
            out = (bld.udiv if e.op == "floordiv" else bld.urem)(a, bld.select(by_zero, one, b))
            return bld.select(by_zero, zero, out)
        if safe and e.b.value > 0 and self.nonneg(e.a):
            return (bld.sdiv if e.op == "floordiv" else bld.srem)(a, b)
        if not safe:
            by_zero = bld.icmp_signed("==", b, zero)
            by_minus_one = bld.icmp_signed("==", b, T.constant(d, -1, T.lanes_of(a)))
            special = bld.or_(by_zero, by_minus_one)
            divisor = bld.select(special, one, b)
        else:
            divisor = b
        q, r = bld.sdiv(a, divisor), bld.srem(a, divisor)
        # Round toward minus infinity: adjust when the remainder and divisor differ in sign.
        adjust = bld.and_(bld.icmp_signed("!=", r, zero),
                          bld.icmp_signed("<", bld.xor(r, divisor), zero))
        if e.op == "floordiv":
            out = bld.sub(q, bld.zext(adjust, a.type))
            if safe:
                return out
            return bld.select(by_zero, zero, bld.select(by_minus_one, bld.sub(zero, a), out))
        out = bld.add(r, bld.select(adjust, divisor, zero))
        return out if safe else bld.select(special, zero, out)

    def _float_floor_div_mod(self, op, a, b, work):
        """Float ``a // b`` or ``a % b`` (op "floordiv"/"floormod") bit for bit as numpy's
        floor_divide and remainder (and Python's float ``//``, ``%``), lane by lane, but for
        the sign of a NaN made here (x86 makes it negative, LLVM's folding positive); float16
        is computed in float32 and rounded once at the end, as numpy does. The remainder
        starts from the exact ``fmod(a, b)`` (LLVM's frem), moved by ``b`` when its sign
        differs from ``b``'s; the quotient is ``(a - fmod) / b`` (minus one after that move),
        which is within rounding of an integer and is rounded to the nearest one: ``7.0 //
        0.1`` is 69.0 (``floor(7.0 / 0.1)`` would be 70.0). A zero remainder takes the sign
        of ``b`` and a zero quotient that of ``a / b``; ``x // 0`` is ``x / 0`` and ``x % 0``
        NaN."""
        bld = self.b
        lanes = T.lanes_of(a)
        zero = T.constant(work, 0.0, lanes)
        mod = bld.frem(a, b)
        nonzero = bld.fcmp_unordered("!=", mod, zero)    # or NaN
        moved = bld.and_(nonzero, bld.xor(bld.fcmp_ordered("<", b, zero),
                                          bld.fcmp_ordered("<", mod, zero)))
        if op == "floormod":
            kept = bld.select(nonzero, mod, self.intrinsic("copysign", [zero, b]))
            return bld.select(moved, bld.fadd(mod, b), kept)
        one = T.constant(work, 1.0, lanes)
        div = bld.fdiv(bld.fsub(a, mod), b)
        div = bld.select(moved, bld.fsub(div, one), div)
        low = self.intrinsic("floor", [div])
        up = bld.fcmp_ordered(">", bld.fsub(div, low), T.constant(work, 0.5, lanes))
        nearest = bld.select(up, bld.fadd(low, one), low)
        quotient = bld.fdiv(a, b)
        out = bld.select(bld.fcmp_unordered("!=", div, zero), nearest,
                         self.intrinsic("copysign", [zero, quotient]))
        return bld.select(bld.fcmp_ordered("==", b, zero), quotient, out)

    def _short_circuit(self, e):
        """``a and b`` / ``a or b`` evaluating ``b`` only when needed (b reads memory)."""
        a = self.expr(e.a)
        if isinstance(a.type, ir.VectorType) or self.varying(e.b):
            raise self.error("a vectorized 'and'/'or' whose right side reads memory")
        start = self.b.block
        rhs_block = self.b.append_basic_block("sc.rhs")
        end = self.b.append_basic_block("sc.end")
        if e.op == "and":
            self.b.cbranch(a, rhs_block, end)
        else:
            self.b.cbranch(a, end, rhs_block)
        self.b.position_at_end(rhs_block)
        bv = self.expr(e.b)
        rhs_end = self.b.block
        self.b.branch(end)
        self.b.position_at_end(end)
        phi = self.b.phi(T.I1)
        phi.add_incoming(ir.Constant(T.I1, e.op == "or"), start)
        phi.add_incoming(bv, rhs_end)
        return phi

    def _e_Select(self, e):
        cond = self.expr(e.cond)
        reads = has_side_reads(e.true_value) or has_side_reads(e.false_value)
        if reads and not isinstance(cond.type, ir.VectorType):
            return self.branch_value(cond, lambda: self.expr(e.true_value),
                                     lambda: self.expr(e.false_value))
        if reads:   # each side's loads are contiguous (`pyir.codegen.vectorize`): masked
            t = self.under_mask(cond, e.true_value)
            f = self.under_mask(self.b.not_(cond), e.false_value)
        else:
            t, f = self.expr(e.true_value), self.expr(e.false_value)
        cond, t, f = self.unify(cond, t, f)
        return self.b.select(cond, t, f)

    def under_mask(self, lanes, e):
        """The vector value of ``e`` with its loads reading memory only in ``lanes`` (of
        the active lanes): the other lanes of the result are undefined."""
        saved = self.mask
        self.mask = lanes if saved is None else self.b.and_(saved, lanes)
        try:
            return self.expr(e)
        finally:
            self.mask = saved

    def branch_value(self, cond, then_fn, else_fn):
        """A value computed on one of two branches, chosen by a scalar ``cond``."""
        then_block = self.b.append_basic_block("sel.then")
        else_block = self.b.append_basic_block("sel.else")
        end = self.b.append_basic_block("sel.end")
        self.b.cbranch(cond, then_block, else_block)
        self.b.position_at_end(then_block)
        tv = then_fn()
        then_end = self.b.block
        self.b.position_at_end(else_block)
        fv = else_fn()
        else_end = self.b.block
        lanes = max(T.lanes_of(tv), T.lanes_of(fv))
        self.b.position_at_end(then_end)
        tv = self.broadcast(tv, lanes)
        self.b.branch(end)
        self.b.position_at_end(else_end)
        fv = self.broadcast(fv, lanes)
        self.b.branch(end)
        self.b.position_at_end(end)
        phi = self.b.phi(tv.type)
        phi.add_incoming(tv, then_end)
        phi.add_incoming(fv, else_end)
        return phi

    def _e_Cast(self, e):
        v = self.expr(e.value)
        return self.convert(v, e.value.dtype, e.dtype)

    def convert(self, v, src, dst):
        if src == dst:
            return v
        lanes = T.lanes_of(v)
        to = T.value_type(dst, lanes)
        bld = self.b
        if dst == "bool":
            zero = ir.Constant(v.type, None)
            if dt.is_float(src):
                return bld.fcmp_unordered("!=", v, zero)
            return bld.icmp_unsigned("!=", v, zero)
        if dt.is_float(src) and dt.is_float(dst):
            return (bld.fpext if dt.bits(dst) > dt.bits(src) else bld.fptrunc)(v, to)
        if dt.is_float(src):
            return (bld.fptosi if dt.is_int(dst) else bld.fptoui)(v, to)
        signed = dt.is_int(src)
        if dt.is_float(dst):
            return (bld.sitofp if signed else bld.uitofp)(v, to)
        sb, db = dt.bits(src), dt.bits(dst)
        if db == sb:
            return v
        if db < sb:
            return bld.trunc(v, to)
        return (bld.sext if signed else bld.zext)(v, to)

    # ------------------------------------------------------------ calls
    def _e_Call(self, e):
        if e.op == "call_extern":
            return self.call_extern(e)
        if e.op == "checked_index":
            return self.checked_index(*e.args)
        args = [self.expr(a) for a in e.args]
        args = self.unify(*args)
        d = e.dtype
        if e.op in ("exp", "log", "tanh", "sigmoid") and dt.is_float(d):
            return self.inline_math(e.op, args[0], d)
        if e.op in _SIMPLE_INTRINSICS:
            if d == "float16":
                # In float32, rounded once at the end (exact for sqrt, floor and ceil):
                # x86 has no float16 arithmetic, and LLVM promoted each lane on its own.
                wide = [self.convert(a, d, "float32") for a in args]
                return self.convert(self.intrinsic(_SIMPLE_INTRINSICS[e.op], wide), "float32", d)
            return self.intrinsic(_SIMPLE_INTRINSICS[e.op], args)
        if e.op == "abs":
            if dt.is_float(d):
                return self.intrinsic("fabs", args)
            if dt.is_int(d):
                return self.intrinsic("abs", args + [ir.Constant(T.I1, 0)])
            return args[0]
        one = T.constant(d, 1, T.lanes_of(args[0]))
        if e.op == "rsqrt":
            return self.b.fdiv(one, self.intrinsic("sqrt", args))
        if e.op in _LIBM:
            return self.libm(_LIBM[e.op], d, args[0])
        raise self.error(f"intrinsic {e.op} is not supported by the LLVM backend")

    def checked_index(self, index, extent, status):
        """``index``, after returning ``status`` from the function when (any lane of) it
        lies outside ``[0, extent)`` (an unsigned comparison: negative indices too)."""
        idx = self.expr(index)
        outside = self.b.icmp_unsigned(">=", idx, self.broadcast(self.expr(extent),
                                                                  T.lanes_of(idx)))
        if isinstance(outside.type, ir.VectorType):
            fn = self.ctx.declare(f"llvm.vector.reduce.or.v{T.lanes_of(idx)}i1", T.I1,
                                  [outside.type])
            outside = self.b.call(fn, [outside])
        self.return_if(outside, T.int_const(status.value, 32))
        return idx

    def sigmoid(self, x, dtype):
        """``1 / (1 + e**-x)``, computed as ``t / (1 + t)`` with ``t = e**x`` for ``x < 0``,
        where ``e**-x`` overflows while the result is still a (subnormal) number: float16
        ``sigmoid(-12)`` is 6.1e-6, not 0."""
        b = self.b
        one = T.constant(dtype, 1, T.lanes_of(x))
        t = vecmath.exp(self, b.fneg(self.intrinsic("fabs", [x])), dtype)
        numerator = b.select(b.fcmp_ordered("<", x, ir.Constant(x.type, None)), t, one)
        return b.fdiv(numerator, b.fadd(one, t))

    def inline_math(self, op, x, dtype):
        """``op`` ("exp", "log", "tanh" or "sigmoid") of ``x`` as inline code (`vecmath`),
        so that a vector stays vector code; float16 is computed in float32 and rounded once
        at the end (LLVM's float16 intrinsics were one libm call per lane: a float16 tanh
        ran 37x slower than numpy's; sigmoid rounded in float16 twice, 1.6 ulps off)."""
        if dtype == "float16":
            wide = self.inline_math(op, self.convert(x, dtype, "float32"), "float32")
            return self.convert(wide, "float32", dtype)
        if op == "sigmoid":
            return self.sigmoid(x, dtype)
        return getattr(vecmath, op)(self, x, dtype)

    def intrinsic(self, name, args):
        ty = args[0].type
        fn = self.ctx.declare(f"llvm.{name}.{T.suffix(ty)}", ty, [a.type for a in args])
        return self.b.call(fn, args)

    def libm(self, names, dtype, x):
        """Call a libm function per lane (float16 goes through float32)."""
        work = "float32" if dtype == "float16" else dtype
        scalar_t = T.value_type(work)
        fn = self.ctx.declare(names[work], scalar_t, [scalar_t])
        lanes = T.lanes_of(x)
        if lanes == 1:
            return self.convert(self.b.call(fn, [self.convert(x, dtype, work)]), work, dtype)
        out = ir.Constant(x.type, ir.Undefined)
        for lane in range(lanes):
            xi = self.b.extract_element(x, T.int_const(lane, 32))
            yi = self.convert(self.b.call(fn, [self.convert(xi, dtype, work)]), work, dtype)
            out = self.b.insert_element(out, yi, T.int_const(lane, 32))
        return out
