"""Random graph functions of high-level operators as script text, each with a numpy
reference computed from the same description: chains of ``R.add / subtract / multiply /
divide / maximum / minimum`` with broadcasting, unary operators, ``R.matmul`` (batched
beyond 2-D), reductions (``sum / mean / max / min`` over random axes, with and without
keepdims) and ``R.nn.softmax / log_softmax``, over static and symbolic shapes (``n``,
``m``, ``n * 2``) and several dtypes.

`random_graph(choose)` takes ``choose(options, label)`` as `random_prims` does and returns
a `RandomGraph`.
"""

import dataclasses
import warnings

import numpy as np

DTYPES = ["float32", "float64", "float16", "int32", "int64", "int8", "uint8"]
DIMS = [1, 1, 2, 3, 5, 8, "n", "m", "n * 2"]
#: The values the symbols take when the function runs (0 included: empty tensors).
SYMBOL_VALUES = [(3, 4), (1, 7), (0, 2), (6, 1)]
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "maximum": np.maximum, "minimum": np.minimum, "divide": np.divide}
UNARY = {"negative": np.negative, "abs": np.abs, "nn.relu": lambda x: np.maximum(x, 0)}
FLOAT_UNARY = {"exp": np.exp, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
               "sqrt": lambda x: np.sqrt(x), "log": np.log}


@dataclasses.dataclass
class RandomGraph:
    """Script text of a module with graph function ``main``, its parameters (name, dims,
    dtype, which positive: divisors and arguments of sqrt/log), and ``reference(arrays)``:
    the expected result."""

    text: str
    params: list
    reference: object
    dtype: str

    def shape(self, dims, env):
        return tuple(d if isinstance(d, int) else eval(d, {}, dict(env)) for d in dims)


def _sinfo(dims):
    inner = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)
    return f"({inner}{',' if len(dims) == 1 else ''})"


class _Graph:
    def __init__(self, choose, dtype):
        self.choose, self.dtype = choose, dtype
        self.params, self.lines, self.count = [], [], 0

    def input(self, dims, positive=False):
        name = f"x{len(self.params)}"
        self.params.append((name, list(dims), self.dtype, positive))
        return name, list(dims), lambda arrays, name=name: arrays[name]

    def bind(self, text, dims, fn):
        self.count += 1
        name = f"t{self.count}"
        self.lines.append(f"{name} = {text}")
        return name, dims, fn

    def broadcast_dims(self, dims):
        """Dims that broadcast against ``dims``: a suffix, with some dims 1."""
        k = self.choose(range(len(dims) + 1), "broadcast rank") if dims else 0
        out = [1 if self.choose([True, False, False], "unit dim") else d
               for d in dims[len(dims) - k:]]
        return out

    def step(self, value):
        """One operator applied to ``value`` (and maybe a new input)."""
        name, dims, fn = value
        floating = self.dtype.startswith("float")
        ops = ["binary", "binary", "unary", "reduce"]
        if len(dims) >= 2:
            ops.append("matmul")
        if floating and dims:
            ops += ["softmax", "float_unary"]
        op = self.choose(ops, "operator")
        if op == "binary":
            which = self.choose([k for k in BINARY if floating or k != "divide"], "binary")
            other = self.input(self.broadcast_dims(dims), positive=which == "divide")
            if self.choose([True, False], "swap") and which != "divide":
                a, b = other, value
            else:
                a, b = value, other
            out = _broadcast(a[1], b[1])
            f = BINARY[which]
            return self.bind(f"R.{which}({a[0]}, {b[0]})", out,
                             lambda arrays: _wrap(f, a[2](arrays), b[2](arrays), self.dtype))
        if op == "unary":
            which = self.choose(list(UNARY), "unary")
            f = UNARY[which]
            return self.bind(f"R.{which}({name})", dims,
                             lambda arrays: _wrap(f, fn(arrays), None, self.dtype))
        if op == "float_unary":
            which = self.choose(list(FLOAT_UNARY), "float unary")
            f = FLOAT_UNARY[which]
            if which == "exp":   # of a value in [-1, 1]
                name, dims, fn = self.bind(f"R.tanh({name})", dims, lambda arrays, fn=fn:
                                           _wrap(np.tanh, fn(arrays), None, self.dtype))
            if which in ("sqrt", "log"):   # of |value| + a positive input
                p = self.input(dims, positive=True)
                name, dims, fn = self.bind(
                    f"R.add(R.abs({name}), {p[0]})", dims, lambda arrays, fn=fn: _wrap(
                        np.add, np.abs(fn(arrays)), p[2](arrays), self.dtype))
            return self.bind(f"R.{which}({name})", dims,
                             lambda arrays: _wrap(f, fn(arrays), None, self.dtype))
        if op == "matmul":   # batched beyond 2-D, the batch dimensions broadcast
            m = self.choose([1, 3, 4, "m"], "matmul columns")
            w = self.input(self.broadcast_dims(dims[:-2]) + [dims[-1], m])
            out = _broadcast(dims[:-2], w[1][:-2]) + [dims[-2], m]
            return self.bind(f"R.matmul({name}, {w[0]})", out,
                             lambda arrays: _matmul(fn(arrays), w[2](arrays), self.dtype))
        if op == "softmax":
            axis = self.choose(range(-len(dims), len(dims)), "softmax axis")
            log = self.choose([False, True], "log softmax")
            which = "nn.log_softmax" if log else "nn.softmax"
            return self.bind(f"R.{which}({name}, axis={axis})", dims,
                             lambda arrays: _softmax(fn(arrays), axis, log))
        # reduce
        which = self.choose(["sum", "max", "min"] + (["mean"] if floating else []), "reduce")
        keep = self.choose([False, True], "keepdims")
        if dims and self.choose([True, False], "axis given"):
            axes = sorted({self.choose(range(len(dims)), f"axis {k}") for k in range(2)})
            axis = tuple(axes) if len(axes) > 1 or self.choose([True, False], "tuple") \
                else axes[0]
        else:
            axis, axes = None, list(range(len(dims)))
        out = [1 if k in axes else d for k, d in enumerate(dims)] if keep else \
            [d for k, d in enumerate(dims) if k not in axes]
        return self.bind(f"R.{which}({name}, axis={axis}, keepdims={keep})", out,
                         lambda arrays: _reduce(which, fn(arrays), tuple(axes), keep,
                                                self.dtype))


def _broadcast(a, b):
    out = []
    for k in range(1, max(len(a), len(b)) + 1):
        da = a[-k] if k <= len(a) else None
        db = b[-k] if k <= len(b) else None
        out.append(db if da is None or (da == 1 and db is not None) else da)
    return out[::-1]


def _wrap(f, a, b, dtype):
    with np.errstate(all="ignore"):
        r = f(a) if b is None else f(a, b)
    return np.asarray(r).astype(dtype)


def _matmul(a, b, dtype):
    """``a @ b`` in float64, or in int64 wrapping as ``dtype`` does."""
    acc = "float64" if dtype.startswith("float") else "int64"
    return np.matmul(a.astype(acc), b.astype(acc)).astype(dtype)


def _softmax(x, axis, log):
    x64 = x.astype("float64")
    e = np.exp(x64 - x64.max(axis, keepdims=True)) if x.size else x64
    s = e.sum(axis, keepdims=True)
    if log:
        return (x64 - x64.max(axis, keepdims=True) - np.log(s) if x.size else x64).astype(x.dtype)
    return (e / s).astype(x.dtype)


def _reduce(which, x, axes, keep, dtype):
    if which == "sum":
        acc = "float64" if dtype.startswith("float") else "int64"
        return np.sum(x.astype(acc), axis=axes, keepdims=keep).astype(dtype)
    if which == "mean":
        with warnings.catch_warnings():   # of nothing: nan, with a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.mean(x.astype("float64"), axis=axes, keepdims=keep).astype(dtype)
    return (np.max if which == "max" else np.min)(x, axis=axes, keepdims=keep)


def random_graph(choose):
    """A random graph function (see the module docstring)."""
    dtype = choose(DTYPES, "dtype")
    g = _Graph(choose, dtype)
    rank = choose([1, 2, 2, 3], "rank")
    value = g.input([choose(DIMS, f"dim {k}") for k in range(rank)])
    for _ in range(choose([1, 2, 3, 4], "steps")):
        value = g.step(value)
    used = {d for _, dims, _, _ in g.params for d in dims}
    if "n * 2" in used and "n" not in used:   # a parameter that only declares n
        g.params.insert(0, ("N", ["n"], dtype, False))
    params = ", ".join(f'{name}: R.Tensor({_sinfo(dims)}, "{dt}")'
                       for name, dims, dt, _ in g.params)
    body = "\n".join("            " + line for line in g.lines)
    text = f'''from pyir.script import ir as I, graph as R


@I.ir_module
class Module:
    @R.function
    def main({params}):
        with R.dataflow():
{body}
            R.output({value[0]})
        return {value[0]}
'''
    fn = value[2]
    return RandomGraph(text, g.params, fn, dtype)


def random_inputs(graph, env, seed=0):
    """Arrays for the parameters of ``graph`` with symbols ``env``: normal floats (in
    [0.5, 2] for positive ones), the whole range for integers."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, dims, dtype, positive in graph.params:
        shape = graph.shape(dims, env)
        if dtype.startswith("float"):
            a = rng.uniform(0.5, 2, shape) if positive else rng.standard_normal(shape)
        else:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        arrays[name] = np.asarray(a, dtype)
    return arrays


def tolerances(dtype, want):
    """(rtol, atol) for comparing a result of ``dtype`` with the float64-based reference:
    relative to the result's magnitude, as chains of operators cancel."""
    if not dtype.startswith("float"):
        return 0, 0
    eps = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-9}[dtype]
    finite = np.abs(want[np.isfinite(want)]) if want.size else np.zeros(0)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return eps, eps * scale


def wrong_arguments(graph, arrays):
    """(parameter name, arguments) with one argument of a wrong rank, dtype, constant
    dimension or symbolic dimension (one that disagrees with another use of the symbol, or
    an odd n * 2)."""
    uses = {}
    for name, dims, _, _ in graph.params:
        for d in dims:
            if isinstance(d, str):
                uses[d] = uses.get(d, 0) + 1
    for k, (name, dims, dtype, _) in enumerate(graph.params):
        a = arrays[name]
        bad = [a.reshape(a.shape + (1,)), a.astype("float32" if dtype != "float32" else "int32")]
        for j, d in enumerate(dims):
            if isinstance(d, int) or uses[d] > 1 or "*" in d:   # n * 2 + 1 is odd
                shape = list(a.shape)
                shape[j] += 1
                bad.append(np.zeros(shape, dtype))
        for b in bad:
            args = [arrays[p[0]] for p in graph.params]
            args[k] = b
            yield name, args
