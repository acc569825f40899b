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
"fast" pipeline runs no CSE pass. A pure operation (integer arithmetic, comparison,
cast, address, vector insert or shuffle) on the same operands as one already emitted in
the current block returns that instruction. Operands compare as llvmlite compares them:
constants by their text, instructions by identity. Loads, stores, calls, phis and
floating-point arithmetic are never numbered, and the builder only appends at the end of
a block, so the earlier instruction dominates every later use in the block.
"""

import operator

import llvmlite.ir as ir

_SIGNED_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}


def int_value(v):
    """The value of a scalar integer constant (signed), or None."""
    if (isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType)
            and isinstance(v.constant, int)):
        return _wrap(int(v.constant), v.type.width)
    return None


def _wrap(value, bits):
    value &= (1 << bits) - 1
    return value - (1 << bits) if bits > 1 and value >> (bits - 1) else value


def _const(ty, value):
    return ir.Constant(ty, _wrap(value, ty.width) if ty.width > 1 else value & 1)


def _folding(method, fold):
    """Wrap ``IRBuilder.method``: when both operands are integer constants and ``fold``
    returns a value, that constant replaces the instruction; otherwise it is numbered."""
    op = method.__name__

    def wrapped(self, lhs, rhs, name="", flags=()):
        a, b = int_value(lhs), int_value(rhs)
        if a is not None and b is not None and lhs.type == rhs.type:
            out = fold(a, b)
            if out is not None:
                return _const(lhs.type, out)
        return self.numbered((op, lhs, rhs, tuple(flags)),
                             lambda: method(self, lhs, rhs, name=name, flags=flags))
    return wrapped


def _numbered(method):
    """Wrap the pure ``IRBuilder.method`` (positional operands only) with numbering."""
    op = method.__name__

    def wrapped(self, *args):
        return self.numbered((op,) + args, lambda: method(self, *args))
    return wrapped


def _trunc_div(a, b):
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _trunc_rem(a, b):
    q = _trunc_div(a, b)
    return None if q is None else a - q * b


class Builder(ir.IRBuilder):
    def __init__(self, block=None):
        super().__init__(block)
        self._numbers = {}   # (id(block), operation, operands...) -> instruction

    def numbered(self, key, emit):
        """The instruction ``key`` names in the current block, emitted by ``emit`` once."""
        key = (id(self.block),) + key
        hit = self._numbers.get(key)
        if hit is None:
            hit = self._numbers[key] = emit()
        return hit

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
                             lambda: super(Builder, self).icmp_signed(cmpop, lhs, rhs))

    def icmp_unsigned(self, cmpop, lhs, rhs, name=""):
        a, b = int_value(lhs), int_value(rhs)
        if a is not None and b is not None:
            mask = (1 << lhs.type.width) - 1
            return ir.Constant(ir.IntType(1), int(_SIGNED_CMP[cmpop](a & mask, b & mask)))
        return super().icmp_unsigned(cmpop, lhs, rhs, name=name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        c = int_value(cond)
        if c is not None and isinstance(cond.type, ir.IntType) and cond.type.width == 1:
            return lhs if c else rhs
        return self.numbered(("select", cond, lhs, rhs, tuple(flags)),
                             lambda: super(Builder, self).select(cond, lhs, rhs, flags=flags))

    def gep(self, ptr, indices, inbounds=False, name="", source_etype=None):
        return self.numbered(
            ("gep", ptr, tuple(indices), inbounds, source_etype),
            lambda: super(Builder, self).gep(ptr, indices, inbounds=inbounds,
                                             source_etype=source_etype))

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
        return super().trunc(value, typ, name=name)
