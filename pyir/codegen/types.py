"""LLVM types and constants for pyir dtypes.

In registers a bool is ``i1``; in memory (buffers, slots) it is one byte.
"""

import functools

import llvmlite.ir as ir
import numpy as np

from ..ir import dtype as dt

PTR = ir.PointerType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)

_FLOATS = {"float16": ir.HalfType(), "float32": ir.FloatType(), "float64": ir.DoubleType()}


@functools.cache
def value_type(dtype, lanes=1):
    """The register type of ``dtype`` (a vector of ``lanes`` when lanes > 1)."""
    if dtype in _FLOATS:
        t = _FLOATS[dtype]
    elif dtype == "bool":
        t = I1
    else:
        t = ir.IntType(dt.bits(dtype))
    return ir.VectorType(t, lanes) if lanes > 1 else t


@functools.cache
def memory_type(dtype, lanes=1):
    """The in-memory type of ``dtype`` (bool is a byte)."""
    return value_type("uint8" if dtype == "bool" else dtype, lanes)


def constant(dtype, value, lanes=1):
    """The constant ``value`` of ``dtype`` (splat over ``lanes``). Constants are values
    without identity in LLVM IR, so one object serves every use."""
    if isinstance(value, (float, np.floating)):
        key = float(value).hex()     # bit for bit: -0.0 is not 0.0, a NaN finds itself
    else:
        key = int(value)
    return _constant(dtype, key, lanes)


@functools.lru_cache(maxsize=4096)
def _constant(dtype, key, lanes):
    value = float.fromhex(key) if isinstance(key, str) else key
    if dt.is_float(dtype):
        value = float(np.dtype(dtype).type(value))
    else:
        value = int(value)
    c = ir.Constant(value_type(dtype), value)
    if lanes > 1:
        return ir.Constant(value_type(dtype, lanes), [c] * lanes)
    return c


@functools.cache
def vector_of(ty, lanes):
    return ir.VectorType(ty, lanes)


@functools.cache
def undef(ty):
    return ir.Constant(ty, ir.Undefined)


@functools.cache
def splat_mask(lanes):
    """The shuffle mask that repeats lane 0 ``lanes`` times."""
    return ir.Constant(vector_of(I32, lanes), [0] * lanes)


@functools.lru_cache(maxsize=4096)
def lane_numbers(lanes, first=0, element=I64):
    """``<first, first + 1, ..., first + lanes - 1>`` as ``element`` (i64) lanes."""
    return ir.Constant(vector_of(element, lanes), list(range(first, first + lanes)))


@functools.lru_cache(maxsize=4096)
def int_const(value, bits=64):
    return ir.Constant(ir.IntType(bits), value)


def suffix(ty):
    """The overload suffix of an LLVM intrinsic for ``ty`` (f32, v16f32, i64 ...)."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{suffix(ty.element)}"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    return f"i{ty.width}"


def lanes_of(value):
    return value.type.count if isinstance(value.type, ir.VectorType) else 1
