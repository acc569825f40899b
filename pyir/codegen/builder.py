"""An llvmlite IRBuilder that folds integer constants, as LLVM's own C++ IRBuilder does,
and reuses a pure operation already done in the same basic block.

llvmlite's builder emits every operation, so ``mul i64 0, 32`` or a work estimate made of
constants reached LLVM as instructions: text to print, parse and optimize away. `Builder`
returns a constant instead when every operand is a scalar integer constant. Only exact
integer folds are done (wrapping add/sub/mul, truncating division without a zero or
overflowing divisor, comparisons, bit operations, casts, a select on a known condition);
floating point is left to LLVM.

Value numbering: an unrolled register tile computes the same row offsets, addresses and
broadcasts once per element (``mul i64 %i, 6144`` a dozen times in one block), and the
"fast" pipeline runs no CSE pass. A pure operation (integer add, sub, mul, division,
bit operation, signed comparison or select, ordered float comparison, int-to-float
conversion, integer truncation, address, vector insert, extract or shuffle)
on the same operands as one already emitted in the block it goes to returns that
instruction. Operands compare as llvmlite compares them: constants by their text,
instructions by identity. A load is numbered too, until its block writes the object it
reads (an alloca, a ``noalias`` argument or a fresh ``pyir_alloc`` result: a store
through another such object cannot change it) or calls anything but an LLVM intrinsic that
writes no memory (`_writes_nothing`: a masked load, vector math): each row of a register
tile reads the same A element and B vector once per k, not once per product, although the
accumulator tile is stored between them until SROA promotes it (in a masked tail too, whose
B vectors are masked loads). Stores, calls, phis and floating-point arithmetic are never
numbered.

Loop-invariant code motion: inside the loops opened with `loop_frame`, such an operation
whose operands are all defined before a loop goes to the end of that loop's preheader
(the outermost such loop's), as LLVM's LICM would: the "fast" pipeline has no LICM, and
machine LICM left ``i * n`` multiplications in the inner loop of a register tile once
loop strength reduction is off (see `pyir.codegen.compile`). Only operations that cannot
trap move (a division only by a constant other than 0 and -1), so running them when the
loop or a branch in it would not is harmless. Instructions only ever go at the end of a
block (before its terminator, in a preheader), so a numbered instruction dominates every
later use.
"""

import contextlib
import operator

import llvmlite.ir as ir

from ..arith.canonical import wrap
from ..ir import dtype as dt

_SIGNED_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}


#: (comparison, left is 0, right is 0) -> its unsigned value, whatever the other side.
_UNSIGNED_WITH_ZERO = {("<", False, True): False, (">=", False, True): True,
                       (">", True, False): False, ("<=", True, False): True}

_I64_MIN, _I64_MAX = dt.int_range("int64")


def int_value(v):
    """The value of a scalar integer constant (signed), or None."""
    if (isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType)
            and isinstance(v.constant, int)):
        c = int(v.constant)
        if v.type.width == 64 and _I64_MIN <= c <= _I64_MAX:
            return c   # the common case, already in range
        return _wrap(c, v.type.width)
    return None


def _is_zero(v):
    """Whether ``v`` is the integer constant 0, or a vector of them."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.VectorType):
        return isinstance(v.constant, list) and all(int_value(c) == 0 for c in v.constant)
    return int_value(v) == 0


def _wrap(value, bits):
    """``value`` as an ``i<bits>`` holds it: signed, ``i1`` as 0 or 1."""
    return wrap(value, "bool" if bits == 1 else f"int{bits}")


def _const(ty, value):
    return ir.Constant(ty, _wrap(value, ty.width))


#: ``op: (c, side)``: ``x op c`` (side "right") or also ``c op x`` (side "both") is x.
_IDENTITY = {"add": (0, "both"), "sub": (0, "right"), "mul": (1, "both"),
             "sdiv": (1, "right"), "or_": (0, "both"), "xor": (0, "both"),
             "and_": (-1, "both")}
#: Operations that a 0 on either side makes 0, whatever the other side: ``x * 0``, ``0 & x``.
_ANNIHILATED_BY_ZERO = ("mul", "and_")


def _folding(method, fold):
    """Wrap ``IRBuilder.method``: when both operands are integer constants and ``fold``
    returns a value, that constant replaces the instruction; an operation with its
    identity (``x + 0``, ``1 * x``) is its other operand, one with a 0 that makes it 0
    (``0 * x``) is 0; otherwise it is numbered."""
    op = method.__name__
    unit, side = _IDENTITY.get(op, (None, None))
    annihilated = op in _ANNIHILATED_BY_ZERO

    def wrapped(self, lhs, rhs, name="", flags=()):
        a, b = int_value(lhs), int_value(rhs)
        if a is not None and b is not None and lhs.type == rhs.type:
            out = fold(a, b)
            if out is not None:
                return _const(lhs.type, out)
        if unit is not None and lhs.type == rhs.type:
            if b == unit:
                return lhs
            if a == unit and side == "both":
                return rhs
        if annihilated and 0 in (a, b) and lhs.type == rhs.type:
            return _const(lhs.type, 0)
        movable = op not in ("sdiv", "srem") or b not in (None, 0, -1)
        return self.numbered((op, lhs, rhs, tuple(flags)),
                             lambda: method(self, lhs, rhs, name=name, flags=flags),
                             (lhs, rhs) if movable else None)
    return wrapped


def _numbered(method):
    """Wrap the pure ``IRBuilder.method`` (positional operands only) with numbering."""
    op = method.__name__

    def wrapped(self, *args):
        return self.numbered((op,) + args, lambda: method(self, *args), args)
    return wrapped


def _trunc_div(a, b):
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _trunc_rem(a, b):
    q = _trunc_div(a, b)
    return None if q is None else a - q * b


def _object(ptr):
    """The memory object ``ptr`` points into, when no pointer based on another object can
    reach it: an alloca, a ``noalias`` argument, a ``pyir_alloc`` result; else None."""
    while isinstance(ptr, ir.GEPInstr):
        ptr = ptr.pointer
    if isinstance(ptr, ir.AllocaInstr) or (isinstance(ptr, ir.Argument)
                                           and "noalias" in ptr.attributes):
        return ptr
    if isinstance(ptr, ir.CallInstr) and getattr(ptr.callee, "name", None) == "pyir_alloc":
        return ptr
    return None


def _writes_nothing(fn, args):
    """Whether a call of ``fn`` with ``args`` cannot write memory: an LLVM intrinsic that
    takes no pointer (arithmetic, a vector reduction) or a masked load."""
    name = getattr(fn, "name", "")
    return name.startswith("llvm.") and (name.startswith("llvm.masked.load.") or not any(
        isinstance(a.type, ir.PointerType) for a in args))


class Builder(ir.IRBuilder):
    def __init__(self, block=None):
        super().__init__(block)
        self._top = block    # the first block: it dominates every block made after it
        # ... and so does the function's entry block (allocations), where that is another
        self._entry = None if block is None else block.parent.blocks[0]
        self._numbers = {}   # (id(block), operation, operands...) -> instruction
        self._order = {}     # id(block) -> creation number, for blocks made by this builder
        self._frames = []    # (first block number inside the loop, its preheader), outer first
        self._writes = {}    # (id(block), id(object) or None) -> writes emitted to it

    def append_basic_block(self, name=""):
        block = super().append_basic_block(name)
        self._order[id(block)] = len(self._order)
        return block

    @contextlib.contextmanager
    def loop_frame(self, preheader, header):
        """Inside: ``header`` (made by this builder) and the blocks created after it are a
        loop entered from ``preheader`` (which must already end in its branch); invariant
        operations go to the preheader."""
        self._frames.append((self._order[id(header)], preheader))
        try:
            yield
        finally:
            self._frames.pop()

    def innermost_loop(self):
        """The creation number of the innermost open loop's first block, or None."""
        return self._frames[-1][0] if self._frames else None

    def defined_in(self, value):
        """Creation number of the block defining ``value``; -1 outside every loop."""
        if isinstance(value, ir.Instruction):
            return self._order.get(id(value.parent), -1)
        return -1

    def numbered(self, key, emit, operands=None):
        """The instruction ``key`` names, emitted by ``emit`` once per block: in the current
        block, or, inside a loop, in the first block if all ``operands`` are defined there,
        in the function's entry block (allocations) or outside every block (function
        arguments, constants), so that loop nests one after the other share it, else in the
        preheader of the outermost loop that all ``operands`` are defined before (None: it
        stays here). Outside every loop it stays here: moved up, a value used only after a
        loop lived across it (a register tile's write-back addresses, computed before the k
        loop, held registers through it: spilled, and the symbolic matmul ran 2-5 % slower
        on two threads)."""
        home = self.block
        frames = self._frames
        if operands is not None:
            if frames and self._top is not None and self._in_top(operands):
                home = self._top
            elif frames:
                defined = max(map(self.defined_in, operands), default=-1)
                if frames[-1][0] > defined:           # invariant in the innermost loop at least
                    for first, preheader in frames:
                        if first > defined:
                            home = preheader
                            break
        key = (id(home),) + key
        hit = self._numbers.get(key)
        if hit is None:
            if home is self.block:
                hit = emit()
            else:
                here = self.block
                self.position_before(home.terminator)
                hit = emit()
                # Back where we were: the end of the block, or before its terminator (as
                # llvmlite's goto_block leaves a terminated block).
                if here.terminator is not None:
                    self.position_before(here.terminator)
                else:
                    self.position_at_end(here)
            self._numbers[key] = hit
        return hit

    def _in_top(self, operands):
        """Whether every operand is defined in the first block, the entry block or no block
        (a loop, not a generator: `numbered` asks this for nearly every instruction)."""
        top, entry = self._top, self._entry
        for v in operands:
            if isinstance(v, ir.Instruction) and v.parent is not top and v.parent is not entry:
                return False
        return True

    add = _folding(ir.IRBuilder.add, operator.add)
    sub = _folding(ir.IRBuilder.sub, operator.sub)
    mul = _folding(ir.IRBuilder.mul, operator.mul)
    sdiv = _folding(ir.IRBuilder.sdiv, _trunc_div)
    srem = _folding(ir.IRBuilder.srem, _trunc_rem)
    and_ = _folding(ir.IRBuilder.and_, operator.and_)
    or_ = _folding(ir.IRBuilder.or_, operator.or_)
    xor = _folding(ir.IRBuilder.xor, operator.xor)

    def icmp_signed(self, cmpop, lhs, rhs, name=""):
        a, b = int_value(lhs), int_value(rhs)
        if a is not None and b is not None:
            return ir.Constant(ir.IntType(1), int(_SIGNED_CMP[cmpop](a, b)))
        return self.numbered(("icmp", cmpop, lhs, rhs),
                             lambda: super(Builder, self).icmp_signed(cmpop, lhs, rhs),
                             (lhs, rhs))

    def icmp_unsigned(self, cmpop, lhs, rhs, name=""):
        """Also decides ``x < 0`` and ``x >= 0`` (``0 > x``, ``0 <= x``), scalar or vector:
        LLVM's instruction selection asserts on ``select (x < 0), fptoui(f), 0`` (an unsigned
        minimum with 0 of a float conversion, a 0-bit saturation) when no IR pass removed the
        comparison first."""
        a, b = int_value(lhs), int_value(rhs)
        if a is not None and b is not None:
            mask = (1 << lhs.type.width) - 1
            return ir.Constant(ir.IntType(1), int(_SIGNED_CMP[cmpop](a & mask, b & mask)))
        known = _UNSIGNED_WITH_ZERO.get((cmpop, _is_zero(lhs), _is_zero(rhs)))
        if known is not None:
            lanes = lhs.type.count if isinstance(lhs.type, ir.VectorType) else 1
            cond = ir.Constant(ir.IntType(1), int(known))
            return cond if lanes == 1 else ir.Constant(ir.VectorType(cond.type, lanes),
                                                       [cond] * lanes)
        return super().icmp_unsigned(cmpop, lhs, rhs, name=name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        c = int_value(cond)
        if c is not None and isinstance(cond.type, ir.IntType) and cond.type.width == 1:
            return lhs if c else rhs
        return self.numbered(("select", cond, lhs, rhs, tuple(flags)),
                             lambda: super(Builder, self).select(cond, lhs, rhs, flags=flags),
                             (cond, lhs, rhs))

    def gep(self, ptr, indices, inbounds=False, name="", source_etype=None):
        return self.numbered(
            ("gep", ptr, tuple(indices), inbounds, source_etype),
            lambda: super(Builder, self).gep(ptr, indices, inbounds=inbounds,
                                             source_etype=source_etype),
            (ptr, *indices))

    def load(self, ptr, name="", align=None, typ=None):
        """A load stays where it is (a store may follow in the loop) and is reused until
        its block writes memory that may be what it read."""
        block, base = id(self.block), _object(ptr)
        epoch = (self._writes.get((block, None), 0),
                 self._writes.get((block, id(base) if base is not None else "any"), 0))
        return self.numbered(("load", ptr, typ, align, epoch),
                             lambda: super(Builder, self).load(ptr, align=align, typ=typ))

    def store(self, value, ptr, align=None):
        base = _object(ptr)
        self._wrote(None if base is None else id(base))
        return super().store(value, ptr, align=align)

    def call(self, fn, args, name="", **kwargs):
        if not _writes_nothing(fn, args):
            self._wrote(None)
        return super().call(fn, args, name=name, **kwargs)

    def _wrote(self, obj):
        """Count a write to object ``obj`` (None: any memory) in the current block; every
        write also counts for loads whose object is unknown ("any")."""
        block = id(self.block)
        for key in ((block, obj), (block, "any")):
            self._writes[key] = self._writes.get(key, 0) + 1

    fcmp_ordered = _numbered(ir.IRBuilder.fcmp_ordered)
    fcmp_unordered = _numbered(ir.IRBuilder.fcmp_unordered)
    sitofp = _numbered(ir.IRBuilder.sitofp)
    insert_element = _numbered(ir.IRBuilder.insert_element)
    shuffle_vector = _numbered(ir.IRBuilder.shuffle_vector)
    extract_element = _numbered(ir.IRBuilder.extract_element)

    def zext(self, value, typ, name=""):
        a = int_value(value)
        if a is not None and isinstance(typ, ir.IntType):
            return _const(typ, a & ((1 << value.type.width) - 1))
        return super().zext(value, typ, name=name)

    def sext(self, value, typ, name=""):
        a = int_value(value)
        if a is not None and isinstance(typ, ir.IntType):
            return _const(typ, a)
        return super().sext(value, typ, name=name)

    def trunc(self, value, typ, name=""):
        a = int_value(value)
        if a is not None and isinstance(typ, ir.IntType):
            return _const(typ, a)
        return self.numbered(("trunc", value, typ),
                             lambda: super(Builder, self).trunc(value, typ), (value,))
