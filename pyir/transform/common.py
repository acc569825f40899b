"""Helpers shared by the passes: running a function-level rewrite over a module,
substitution of variables, and small queries on statements."""

import functools

from ..codegen.abi import param_shapes
from ..errors import TOO_DEEP, Error
from ..ffi.extern import ExternKernel
from ..ffi.registry import get_global_func
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.module import IRModule
from ..ir.node import rewrite, walk, with_fields


class LowerError(Error):
    """A prim function cannot be lowered (names the function and the construct)."""


def prim_func_pass(fn):
    """Turn ``fn(PrimFunc, **options) -> PrimFunc`` into a pass ``IRModule -> IRModule``
    (taking the same keyword ``options``) that leaves graph functions alone."""

    @functools.wraps(fn)
    def run(mod, **options):
        funcs = []
        for name, func in mod.functions:
            try:
                funcs.append((name, fn(func, **options) if isinstance(func, S.PrimFunc)
                              else func))
            except RecursionError:
                raise LowerError(f"prim function {name} (pass {fn.__name__}): {TOO_DEEP}; "
                                 "split it into smaller ones") from None
        return IRModule(tuple(funcs), mod.attrs)

    return run


def has_blocks(func):
    """Whether ``func`` still has blocks (looking at its statements only: blocks are
    statements)."""
    return any(isinstance(s, (S.Block, S.BlockRealize)) for s in S.walk_stmts(func.body))


def fresh_copy(stmt):
    """``stmt`` with every variable and buffer it defines (loops, lets, allocations, blocks'
    iterators and buffers) replaced by a new one: a second copy of a statement in one
    function (each variable is defined once)."""
    mapping = {}

    def new(old):
        if old not in mapping:
            mapping[old] = E.Var(old.name, old.dtype) if isinstance(old, E.Var) \
                else with_fields(old)

    for n in S.walk_stmts(stmt):
        if isinstance(n, S.For):
            new(n.loop_var)
        elif isinstance(n, S.LetStmt):
            new(n.var)
        elif isinstance(n, S.Allocate):
            new(n.buffer)
        elif isinstance(n, S.Block):
            for iv in n.iter_vars:
                new(iv.var)
            for buf in n.alloc_buffers:
                new(buf)
    if not mapping:
        return stmt
    return rewrite(stmt, lambda n: mapping.get(n) if isinstance(n, (E.Var, E.Buffer)) else None)


def replace_func(func, body=None, params=None, attrs=None):
    return S.PrimFunc(func.name, func.params if params is None else params,
                      func.body if body is None else body,
                      func.attrs if attrs is None else attrs)


def set_attrs(func, **values):
    attrs = dict(func.attrs)
    attrs.update(values)
    return replace_func(func, attrs=tuple(sorted(attrs.items())))


def shape_vars(func):
    """The shape variables of ``func`` in first-occurrence order over the parameter
    shapes (before flattening, from the "param_shapes" attribute when present), leaving
    out those that are themselves scalar parameters."""
    params = set(p for p in func.params if isinstance(p, E.Var))
    out = []
    for shape in param_shapes(func):
        for s in shape:
            for n in walk(s):
                if isinstance(n, E.Var) and n not in params and n not in out:
                    out.append(n)
    return out


def no_op():
    return S.SeqStmt(())


def extern_calls(stmt):
    """The ``call_extern`` calls under ``stmt``, in `walk` order."""
    return [n for n in walk(stmt) if isinstance(n, E.Call) and n.op == "call_extern"]


def kernel_addresses(stmt, buffer):
    """(call, k, argument) for each argument ``k`` (counted after the name) of a
    ``call_extern`` under ``stmt`` that passes ``buffer`` by address: the whole buffer, or
    an element of it. A kernel steps through the buffer from there as it is laid out."""
    return addresses_in(extern_calls(stmt), buffer)


def addresses_in(calls, buffer):
    """`kernel_addresses` among the ``call_extern`` calls ``calls`` (`extern_calls`)."""
    for n in calls:
        for k, a in enumerate(n.args[1:]):
            if a is buffer or isinstance(a, E.BufferLoad) and a.buffer is buffer:
                yield n, k, a


def written_params(func, assumed=True):
    """``{k: by}`` for each buffer parameter of prim function ``func`` that it may write
    (``k`` its position): ``by`` is None where ``func`` stores into it, else ``(kernel,
    name)`` for a kernel it passes the buffer to by address that may write its buffer
    parameter ``name`` (see `pyir.ffi.extern.ExternKernel`). ``assumed=False`` leaves out
    the writes only assumed (native code declared without writes=)."""
    stored = {id(n.buffer) for n in S.walk_stmts(func.body) if isinstance(n, S.BufferStore)}
    written = {}
    calls = None
    for k, buffer in enumerate(func.params):
        if not isinstance(buffer, E.Buffer):
            continue
        if id(buffer) in stored:
            written[k] = None
            continue
        if calls is None:
            calls = extern_calls(func.body)
        for call, j, _ in addresses_in(calls, buffer):
            kernel = get_global_func(call.args[0].value, allow_missing=True)
            if isinstance(kernel, ExternKernel) and (assumed or not kernel.writes_assumed):
                name = kernel.written_param(j)
                if name is not None:
                    written[k] = (kernel, name)
                    break
    return written
