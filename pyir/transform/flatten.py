"""Flatten buffers to one dimension.

Every buffer (parameters and allocations) becomes a 1-D buffer of ``prod(shape)``
elements in row-major order (the product simplified with `pyir.arith`, so a static shape
gives a constant extent), and every access uses the linear index. The declared
parameter shapes stay in the function attribute "param_shapes" (one tuple per parameter,
``()`` for scalars): they are what callers see.
"""

import dataclasses
import math
from functools import reduce

from ..codegen.abi import param_shapes
from ..errors import IRError
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import rewrite
from ._arith import Scope
from .common import prim_func_pass, replace_func, set_attrs


def product(shape):
    """The number of elements of ``shape`` (an int64 expression)."""
    return reduce(lambda a, b: a * b, shape, E.IntImm(1)) if shape else E.IntImm(1)


def linear_index(shape, indices):
    """The row-major element offset of ``indices`` in a buffer of ``shape``."""
    index = None
    for extent, i in zip(shape, indices):
        index = i if index is None else index * extent + i
    return E.IntImm(0) if index is None else index


def _check_addressable(func_name, buf):
    """Refuse a buffer whose constant dimensions alone hold more elements than int64
    indices address: its flat extent and indices would wrap around."""
    count = math.prod(d.value for d in buf.shape if isinstance(d, E.IntImm))
    if count > dt.int_range(dt.INDEX)[1]:
        raise IRError(f"prim function {func_name}: buffer {buf.name} has {count} elements in "
                      f"its constant dimensions alone, more than {dt.INDEX} indices address")


class _Flattener:
    def __init__(self, func_name):
        self.func_name = func_name
        self.flat = {}
        self.scope = Scope()

    def buffer(self, buf):
        if buf not in self.flat:
            if len(buf.shape) == 1:
                self.flat[buf] = buf
            else:
                _check_addressable(self.func_name, buf)
                extent = self.scope.simplify(product(buf.shape))
                self.flat[buf] = dataclasses.replace(buf, shape=(extent,))
        return self.flat[buf]

    def __call__(self, node):
        if isinstance(node, E.BufferLoad):
            return E.BufferLoad(self.buffer(node.buffer),
                                (linear_index(node.buffer.shape, node.indices),))
        if isinstance(node, S.BufferStore):
            return S.BufferStore(self.buffer(node.buffer), node.value,
                                 (linear_index(node.buffer.shape, node.indices),))
        if isinstance(node, S.Allocate):
            return S.Allocate(self.buffer(node.buffer), node.body)
        if isinstance(node, E.Call) and node.op == "call_extern":  # bare buffers pass data
            return E.Call(node.dtype, node.op, tuple(
                self.buffer(a) if isinstance(a, E.Buffer) else rewrite(a, self)
                for a in node.args))
        return None


@prim_func_pass
def flatten_buffers(func):
    """Make every buffer one-dimensional (see the module docstring)."""
    if func.attr("param_shapes") is not None:
        return func
    shapes = param_shapes(func)
    f = _Flattener(func.name)
    body = rewrite(func.body, f)
    params = tuple(f.buffer(p) if isinstance(p, E.Buffer) else p for p in func.params)
    return set_attrs(replace_func(func, body=body, params=params), param_shapes=shapes)
