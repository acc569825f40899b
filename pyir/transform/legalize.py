"""Legalize high-level graph operators: every ``OpCall`` (``R.add``, ``R.matmul``,
``R.nn.softmax``...) becomes a ``call_tir`` of a generated prim function.

The prim functions are generated as T script text and parsed by the script parser, so
they print, schedule and lower like hand-written ones. They are symbolic in every
dimension (one function serves all shapes of the same rank and broadcast pattern) and
shared between calls with the same text. A call stays where the user wrote it (nested in
another, or in the returned expression), so that errors about it name the user's binding.
"""

import dataclasses
import math


from ..errors import Error
from ..ir.graph import (
    CallDPSPacked,
    CallPacked,
    CallTIR,
    Function,
    GlobalVar,
    OpCall,
    SeqExpr,
    Tuple,
)
from ..ir.ops import is_one, struct_info_of

_BINARY = {"add": "{a} + {b}", "subtract": "{a} - {b}", "multiply": "{a} * {b}",
           "divide": "{a} / {b}", "maximum": "T.max({a}, {b})", "minimum": "T.min({a}, {b})"}
_UNARY = {"negative": "-{a}", "abs": "T.abs({a})", "nn.relu": "T.max({a}, {z})",
          "exp": "T.exp({a})", "log": "T.log({a})", "sqrt": "T.sqrt({a})",
          "tanh": "T.tanh({a})", "sigmoid": "T.sigmoid({a})",
          "nn.gelu": "{h} * {a} * ({o} + T.erf({a} * {r}))",
          "nn.gelu_tanh": "{h} * {a} * ({o} + T.tanh({c} * ({a} + {k} * {a} * {a} * {a})))"}
#: The initial value of each reduction; None: no identity (the first element instead).
_REDUCE_INIT = {"sum": "0", "mean": "0", "max": None, "min": None}


class LegalizeError(Error):
    """An operator call that has no legalization (e.g. an unsupported rank)."""


def legalize(mod):
    """``mod`` with every OpCall in its graph functions replaced (see the module docstring)."""
    gen = _Generator(mod)
    out = mod
    for name, f in mod.functions:
        if isinstance(f, Function):
            out = out.with_function(name, _Function(gen, f).run())
    for name, prim in gen.prims.items():
        out = out.with_function(name, prim)
    return out


class _Function:
    def __init__(self, gen, func):
        self.gen, self.func = gen, func

    def run(self):
        blocks = []
        for block in self.func.body.blocks:
            bindings = tuple(dataclasses.replace(b, value=self.located(b.var.name, self.expr,
                                                                       b.value))
                             for b in block.bindings)
            blocks.append(type(block)(bindings))
        ret = self.located("return", self.expr, self.func.body.body)
        return dataclasses.replace(self.func, body=SeqExpr(tuple(blocks), ret))

    def located(self, binding, fn, *args, **kwargs):
        """``fn(*args, **kwargs)``, a LegalizeError naming the function and ``binding``."""
        try:
            return fn(*args, **kwargs)
        except LegalizeError as e:
            raise LegalizeError(f"graph function {self.func.name}, binding {binding}: "
                                f"{e}") from None

    def expr(self, e):
        """``e`` with its operators legalized, also those inside the arguments of calls."""
        if isinstance(e, Tuple):
            return Tuple(tuple(self.expr(f) for f in e.fields))
        if isinstance(e, OpCall):
            return self.gen.call(e.op, [self.expr(a) for a in e.args], dict(e.attrs))
        if isinstance(e, (CallTIR, CallDPSPacked, CallPacked)):
            return dataclasses.replace(e, args=tuple(self.expr(a) for a in e.args))
        return e


class _Generator:
    """Generated prim functions by name, shared by text."""

    def __init__(self, mod):
        self.mod, self.prims, self.by_text = mod, {}, {}

    def call(self, op, args, attrs):
        sinfos = [struct_info_of(a) for a in args]
        out = struct_info_of(OpCall(op, tuple(args), tuple(attrs.items())))
        for s in sinfos + [out]:
            if getattr(s, "shape", None) is None:
                raise LegalizeError(f"R.{op}: cannot legalize a call on tensors of unknown "
                                    "shape; match_cast them to a shape first")
        if op in _BINARY:
            body = _elementwise(_BINARY[op], sinfos, out)
        elif op in _UNARY:
            body = _elementwise(_UNARY[op], sinfos, out)
        elif op in _REDUCE_INIT:
            body = _reduce(op, sinfos[0], out, attrs)
        elif op == "matmul":
            body = _matmul(sinfos, out)
        elif op in ("nn.softmax", "nn.log_softmax"):
            body = _softmax(op, sinfos[0], attrs["axis"])
        else:
            raise LegalizeError(f"R.{op} has no legalization")
        name = self.add(op.replace(".", "_"), body)
        return CallTIR(GlobalVar(name), tuple(args), (out,))

    def add(self, base, body):
        if body in self.by_text:
            return self.by_text[body]
        name, k = base, 0
        while name in self.mod or name in self.prims:
            k += 1
            name = f"{base}_{k}"
        from pyir.script import from_source
        text = f"from pyir.script import tensor as T\n\n@T.prim_func\ndef {name}{body}"
        self.prims[name] = from_source(text, f"<legalized R.{base}>")
        self.by_text[body] = name
        return name


# ---------------------------------------------------------------- text generation
def _lit(dtype, value):
    """``value`` (a number, or "-inf" for softmax's float maximum) as a literal of
    ``dtype``."""
    if value in ("inf", "-inf"):
        return f'T.{dtype}("{value}")'
    return f"T.{dtype}({value})"


def _buffer(name, dims, dtype):
    shape = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)
    return f'{name}: T.Buffer(({shape}{"," if len(dims) == 1 else ""}), "{dtype}")'


def _nest(dims, kinds, block, lines):
    """A loop nest over ``dims`` with one block whose axes have ``kinds`` ("S"/"R")."""
    r = len(dims)
    loops = ", ".join(f"i{k}" for k in range(r))
    axes = ", ".join(f"v{k}" for k in range(r))
    text = [f"    for {loops} in T.grid({', '.join(map(str, dims))}):",
            f'        with T.block("{block}"):',
            f'            {axes}{"," if r == 1 else ""} = T.axis.remap("{kinds}", [{loops}])']
    return "\n".join(text + ["            " + line for line in lines]) + "\n"


def _broadcast(shape, out_shape, dims):
    """The buffer dimensions and the index of an operand of ``shape`` broadcast to
    ``out_shape`` (aligned at the right; the output's dimensions are ``dims``, its loop
    variables v0, v1...): a dimension of 1 where the output's is not is indexed by 0."""
    bdims, index = [], []
    for k, d in enumerate(shape):
        j = len(out_shape) - len(shape) + k
        one = is_one(d) and not is_one(out_shape[j])
        bdims.append(1 if one else dims[j])
        index.append("0" if one else f"v{j}")
    return bdims, index


def _elementwise(template, sinfos, out):
    r = len(out.shape)
    # 0-d operands and results are one element: buffers of shape (1,)
    dims = [f"d{k}" for k in range(r)] if r else [1]
    params, loads = [], []
    for name, s in zip("AB", sinfos):
        bdims, index = _broadcast(s.shape, out.shape, dims) if s.shape else ([1], ["0"])
        params.append(_buffer(name, bdims, s.dtype))
        loads.append(f"{name}[{', '.join(index)}]")
    d = out.dtype
    value = template.format(a=loads[0], b=loads[-1], z=_lit(d, 0), h=_lit(d, 0.5),
                            o=_lit(d, 1), c=_lit(d, math.sqrt(2 / math.pi)), k=_lit(d, 0.044715),
                            r=_lit(d, math.sqrt(0.5)))
    sig = f"({', '.join(params + [_buffer('C', dims, d)])}):\n"
    axes = ", ".join(f"v{k}" for k in range(len(dims)))
    return sig + _nest(dims, "S" * len(dims), "C", [f"C[{axes}] = {value}"])


def _reduce(op, x, out, attrs):
    r = max(len(x.shape), 1)   # a 0-d tensor is one element: a buffer of shape (1,)
    axis, keep = attrs["axis"], attrs["keepdims"]
    axes = set(range(r)) if axis is None else {a % r for a in
                                               (axis if isinstance(axis, tuple) else (axis,))}
    dims = [f"d{k}" for k in range(r)] if x.shape else [1]
    kinds = "".join("R" if k in axes else "S" for k in range(r))
    out_index = [("0" if k in axes else f"v{k}") for k in range(r) if keep or k not in axes]
    out_dims = [(1 if k in axes else dims[k]) for k in range(r) if keep or k not in axes]
    if not out_dims:
        out_index, out_dims = ["0"], [1]
    d = x.dtype
    # Sums and means of float16 add up in float32 (numpy's means do): in float16 a sum
    # of ones stops growing at 2048.
    wide = op in ("sum", "mean") and bool(axes) and _accumulator(d) != d
    acc, acc_dtype = ("Acc", _accumulator(d)) if wide else ("Y", d)
    y = f"{acc}[{', '.join(out_index)}]"
    xl = _cast(f"X[{', '.join(f'v{k}' for k in range(r))}]", d, acc_dtype)
    combine = {"sum": f"{y} + {xl}", "mean": f"{y} + {xl}", "max": f"T.max({y}, {xl})",
               "min": f"T.min({y}, {xl})"}[op]
    if _REDUCE_INIT[op] is None:
        # No identity (numpy raises for an empty axis): start from the first element, whose
        # read makes the call require every reduced axis to be non-empty.
        init = f"X[{', '.join('0' if k in axes else f'v{k}' for k in range(r))}]"
    else:
        init = _lit(acc_dtype, _REDUCE_INIT[op])
    text = f"({_buffer('X', dims, d)}, {_buffer('Y', out_dims, d)}):\n"
    if wide:
        text += f"    Acc = T.alloc_buffer(({', '.join(map(str, out_dims))},), \"{acc_dtype}\")\n"
    text += _nest(dims, kinds, acc, ["with T.init():", f"    {y} = {init}", f"{y} = {combine}"])
    oaxes = ", ".join(f"v{k}" for k in range(len(out_dims)))
    total = f"{acc}[{oaxes}]"
    if op == "mean" and axes:
        count = " * ".join(str(dims[k]) for k in sorted(axes))
        total = f"{total} / T.cast({count}, \"{acc_dtype}\")"
    if wide or op == "mean" and axes:
        text += _nest(out_dims, "S" * len(out_dims), "Y" if wide else "mean",
                      [f"Y[{oaxes}] = {_cast(total, acc_dtype, d)}"])
    return text


def _accumulator(dtype):
    """The dtype sums of ``dtype`` add up in: float32 for float16, else ``dtype``."""
    return "float32" if dtype == "float16" else dtype


def _cast(value, dtype, to):
    """The text ``value`` of ``dtype`` as ``to`` (a cast when they differ)."""
    return value if to == dtype else f'T.cast({value}, "{to}")'


def _matmul(sinfos, out):
    """C[..., i, j] = sum over k of A[..., i, k] * B[..., k, j], the batch dimensions
    (those before the last two) broadcast; float16 products add up in float32 (as numpy's
    do)."""
    a, b = sinfos
    d = a.dtype
    acc_dtype = _accumulator(d)
    acc = "C" if acc_dtype == d else "Acc"
    nb = len(out.shape) - 2
    batch = [f"d{k}" for k in range(nb)]
    i, j, k = (f"v{nb}", f"v{nb + 1}", f"v{nb + 2}")
    params = []
    for name, s, rows, cols in (("A", a, "n", "k"), ("B", b, "k", "m")):
        bdims, index = _broadcast(s.shape[:-2], out.shape[:-2], batch)
        params.append((_buffer(name, bdims + [rows, cols], d), index))
    (pa, ia), (pb, ib) = params
    out_index = ", ".join(f"v{x}" for x in range(nb + 2))
    c = f"{acc}[{out_index}]"
    a_load, b_load = f"A[{', '.join(ia + [i, k])}]", f"B[{', '.join(ib + [k, j])}]"
    product = f"{_cast(a_load, d, acc_dtype)} * {_cast(b_load, d, acc_dtype)}"
    text = f"({pa}, {pb}, {_buffer('C', batch + ['n', 'm'], d)}):\n"
    if acc != "C":
        text += f'    Acc = T.alloc_buffer(({", ".join(batch + ["n", "m"])}), "{acc_dtype}")\n'
    text += _nest(batch + ["n", "m", "k"], "S" * (nb + 2) + "R", acc, [
        "with T.init():", f"    {c} = {_lit(acc_dtype, 0)}", f"{c} = {c} + {product}"])
    if acc != "C":
        text += _nest(batch + ["n", "m"], "S" * (nb + 2), "C",
                      [f"C[{out_index}] = {_cast(c, acc_dtype, d)}"])
    return text


def _softmax(op, x, axis):
    """Y = exp(X - M) / S along ``axis`` (M the maximum, S the sum of the exponentials;
    for log_softmax X - M - log(S)); S of float16 adds up in float32."""
    r = len(x.shape)
    axis %= r
    d = x.dtype
    acc_dtype = _accumulator(d)
    dims = [f"d{k}" for k in range(r)]
    red = [dims[k] if k != axis else "1" for k in range(r)]
    xi = f"X[{', '.join(f'v{k}' for k in range(r))}]"
    ri = ", ".join("0" if k == axis else f"v{k}" for k in range(r))
    kinds = "".join("R" if k == axis else "S" for k in range(r))
    shape = ", ".join(red) + ("," if r == 1 else "")
    shifted = f"{_cast(xi, d, acc_dtype)} - {_cast(f'M[{ri}]', d, acc_dtype)}"
    text = f"({_buffer('X', dims, d)}, {_buffer('Y', dims, d)}):\n"
    text += (f'    M = T.alloc_buffer(({shape}), "{d}")\n'
             f'    S = T.alloc_buffer(({shape}), "{acc_dtype}")\n')
    text += _nest(dims, kinds, "M", ["with T.init():", f"    M[{ri}] = {_lit(d, '-inf')}",
                                     f"M[{ri}] = T.max(M[{ri}], {xi})"])
    text += _nest(dims, kinds, "S", ["with T.init():", f"    S[{ri}] = {_lit(acc_dtype, 0)}",
                                     f"S[{ri}] = S[{ri}] + T.exp({shifted})"])
    value = (f"{shifted} - T.log(S[{ri}])" if op == "nn.log_softmax"
             else f"T.exp({shifted}) / S[{ri}]")
    text += _nest(dims, "S" * r, "Y",
                  [f"Y[{', '.join(f'v{k}' for k in range(r))}] = {_cast(value, acc_dtype, d)}"])
    return text
