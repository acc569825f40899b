"""Scalar data types: names, classification, and conversion to numpy.

A dtype is a plain string such as ``"float32"`` or ``"int64"``; this module is the one
place that knows which strings are valid and what they mean.
"""

from ..errors import IRError

DTYPES = (
    "bool",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
)

#: Shapes, loop variables and indices are always this type in the IR.
INDEX = "int64"

_BITS = {
    "bool": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "float16": 16, "float32": 32, "float64": 64,
}


def check(dtype):
    """Return ``dtype`` if it names a known scalar type, else raise IRError."""
    if dtype not in _BITS:
        raise IRError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}")
    return dtype


_FLOAT = frozenset(d for d in DTYPES if d.startswith("float"))
_INT = frozenset(d for d in DTYPES if d.startswith("int"))
_UINT = frozenset(d for d in DTYPES if d.startswith("uint"))
_INTEGER = _INT | _UINT


def a(dtype):
    """``dtype`` with its article, for messages: "an int32", "a float32"."""
    return f"an {dtype}" if dtype.startswith("int") else f"a {dtype}"


def is_float(dtype):
    return dtype in _FLOAT


def is_int(dtype):
    return dtype in _INT


def is_uint(dtype):
    return dtype in _UINT


def is_bool(dtype):
    return dtype == "bool"


def is_integer(dtype):
    """Signed or unsigned integer (not bool)."""
    return dtype in _INTEGER


def bits(dtype):
    return _BITS[dtype]


def int_range(dtype):
    """``(smallest, largest)`` value of the integer (or bool) dtype ``dtype`` (from a table:
    every IntImm asks it)."""
    return _INT_RANGES[dtype]


def _int_range(dtype):
    b = _BITS[dtype]
    if dtype in _UINT or dtype == "bool":
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


_INT_RANGES = {d: _int_range(d) for d in _BITS}


def nbytes(dtype):
    """Storage size of one element in bytes (bool is stored as one byte)."""
    return max(1, _BITS[dtype] // 8)


def to_numpy(dtype):
    import numpy as np
    return np.dtype(dtype)


def from_numpy(np_dtype):
    """The pyir dtype name of a numpy dtype, or None if pyir has no such type."""
    name = str(np_dtype)
    return name if name in _BITS else None
