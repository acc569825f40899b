"""Random prim functions as script text, each with a numpy reference computed from the
same description: elementwise maps over 1-3 dimensions (broadcast, transposed, strided
and reversed reads), reductions over one or several axes (sum / max / min with an init,
also into a scalar buffer), ``if`` guards and ``T.if_then_else``, two blocks in sequence
through a ``T.alloc_buffer`` (elementwise, or a row reduction and a map: softmax's shape),
updates in place; constant extents (0, 1, 3, 17, 33, 1000) and symbolic ones (``n``,
``m``, ``n * 2``, shared between parameters); every dtype.

`random_prim(choose)` takes ``choose(options, label)``, which picks one of ``options``
(a seeded `random.Random` or hypothesis's ``data.draw``), and returns a `RandomPrim`.
"""

import dataclasses

import numpy as np

from pyir.transform.legalize import _nest   # a loop nest with one block, as script text

DTYPES = ["float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool"]
EXTENTS = [0, 1, 1, 3, 3, 17, 17, 33, 33, 1000]
SYMBOLS = ["n", "m", "n * 2"]
#: The values symbolic extents take when the function runs.
SYMBOL_VALUES = [(0, 3), (1, 1), (3, 17), (17, 5), (33, 2)]
#: The most elements a loop nest may have (keeps the numpy reference fast).
MAX_ELEMENTS = 40000


@dataclasses.dataclass
class RandomPrim:
    """The script text of prim function ``f``, its parameters (name, shape of symbols and
    ints, dtype), the output's name, and ``reference(inputs, out, env)``: the output's
    expected value given the inputs, the output's initial value and the symbols' values."""

    text: str
    params: list
    output: str
    reference: object
    dtype: str
    reduced: int   # how many elements each output element sums at most (for tolerances)


def _value(d, env):
    return d if isinstance(d, int) else eval(d, {}, dict(env))


def _shape_text(dims):
    inner = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)
    return f"({inner}{',' if len(dims) == 1 else ''})"


def _times(d, k):
    """``d * k`` as a dimension."""
    if isinstance(d, int):
        return d * k
    return f"{d} * {k}" if d in ("n", "m") else f"n * {2 * k}"


class _Gen:
    def __init__(self, choose, dtype, dims):
        self.choose, self.dtype, self.dims = choose, dtype, dims
        self.params = []   # (name, dims, dtype)

    def input(self, rank_axes):
        """A new input read at the loop variables of ``rank_axes`` (axes of the nest) with a
        random pattern; returns (load text, numpy gather)."""
        name = f"A{len(self.params)}"
        pattern = self.choose(["same", "broadcast", "transpose", "strided", "reversed"],
                              "pattern")
        axes = list(rank_axes)
        if pattern == "transpose":
            axes = axes[::-1]
        if pattern == "broadcast" and len(axes) > 1:
            drop = self.choose(range(len(axes)), "broadcast axis")
            kind = self.choose(["unit", "drop"], "broadcast kind")
        else:
            drop, kind = None, None
        dims, index, gathers = [], [], []
        for k, a in enumerate(axes):
            d = self.dims[a]
            if k == drop and kind == "drop":
                continue
            if k == drop:
                dims.append(1)
                index.append("0")
                gathers.append(lambda g, env: 0)
            elif pattern == "strided" and k == len(axes) - 1:
                off = self.choose([0, 1], "stride offset")
                dims.append(_times(d, 2))
                index.append(f"v{a} * 2 + {off}" if off else f"v{a} * 2")
                gathers.append(lambda g, env, a=a, off=off: g[a] * 2 + off)
            elif pattern == "reversed" and k == len(axes) - 1:
                index.append(f"{d} - 1 - v{a}")
                dims.append(d)
                gathers.append(lambda g, env, a=a, d=d: _value(d, env) - 1 - g[a])
            else:
                dims.append(d)
                index.append(f"v{a}")
                gathers.append(lambda g, env, a=a: g[a])
        self.params.append((name, dims, self.dtype))
        text = f"{name}[{', '.join(index)}]" if index else f"{name}[()]"

        def gather(arrays, grid, env, name=name, gathers=gathers):
            idx = tuple(np.broadcast_to(f(grid, env), grid[0].shape) if grid.ndim > 1
                        else f(grid, env) for f in gathers)
            return arrays[name][idx] if idx else np.broadcast_to(arrays[name][()],
                                                                 grid[0].shape)
        return text, gather

    def expr(self, axes, depth, extra=None):
        """A random expression over new inputs read at ``axes`` (and ``extra``, a (text,
        gather) of an intermediate): (text, numpy function of (arrays, grid, env))."""
        leaf = depth == 0 or self.choose([True, False, False], "leaf")
        if leaf:
            what = self.choose(["input", "input", "const", "extra"] if extra else
                               ["input", "input", "const"], "leaf kind")
            if what == "input":
                return self.input(axes)
            if what == "extra":
                return extra
            c = self.choose([0, 1, 2, 3], "constant")
            if self.dtype == "bool":
                return (f"T.bool({bool(c % 2)})",
                        lambda arrays, grid, env, c=c: np.full(grid[0].shape, bool(c % 2)))
            return (f"T.{self.dtype}({c})",
                    lambda arrays, grid, env, c=c: np.full(grid[0].shape, c, self.dtype))
        ops = (["and", "or", "not", "select"] if self.dtype == "bool"
               else ["+", "-", "*", "max", "min", "select", "guard"]
               + (["//", "%"] if self.dtype.startswith(("int", "uint")) else []))
        op = self.choose(ops, "operator")
        a = self.expr(axes, depth - 1, extra)
        if op in ("//", "%"):
            k = self.choose([2, 3, 7], "divisor")
            f = np.floor_divide if op == "//" else np.mod
            return (f"({a[0]} {op} T.{self.dtype}({k}))",
                    lambda *args: f(a[1](*args), np.asarray(k, self.dtype)))
        if op == "not":
            return f"not {a[0]}", lambda *args: np.logical_not(a[1](*args))
        b = self.expr(axes, depth - 1, extra)
        if op in ("and", "or"):
            f = np.logical_and if op == "and" else np.logical_or
            return f"({a[0]} {op} {b[0]})", lambda *args: f(a[1](*args), b[1](*args))
        if op in ("+", "-", "*"):
            f = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
            return f"({a[0]} {op} {b[0]})", lambda *args: _wrap(f, a[1](*args), b[1](*args))
        if op in ("max", "min"):
            f = np.maximum if op == "max" else np.minimum
            return f"T.{op}({a[0]}, {b[0]})", lambda *args: f(a[1](*args), b[1](*args))
        if op == "select":
            c = self.expr(axes, depth - 1, extra) if self.dtype == "bool" else None
            if c is None:
                x, y = self.choose(axes, "cond axis"), self.choose(axes, "cond axis 2")
                cond = f"v{x} < v{y} + 1"
                return (f"T.if_then_else({cond}, {a[0]}, {b[0]})",
                        lambda arrays, grid, env: np.where(grid[x] < grid[y] + 1,
                                                           a[1](arrays, grid, env),
                                                           b[1](arrays, grid, env)))
            return (f"T.if_then_else({c[0]}, {a[0]}, {b[0]})",
                    lambda *args: np.where(c[1](*args), a[1](*args), b[1](*args)))
        # guard: a comparison of two values selects
        return (f"T.if_then_else({a[0]} > {b[0]}, {a[0]}, {b[0]} * T.{self.dtype}(2))",
                lambda *args: np.where(a[1](*args) > b[1](*args), a[1](*args),
                                       _wrap(np.multiply, b[1](*args),
                                             np.asarray(2, self.dtype))))


def _wrap(f, a, b):
    with np.errstate(over="ignore"):
        return f(a, b).astype(a.dtype)


def _grid(dims, env):
    return np.indices(tuple(_value(d, env) for d in dims), dtype=np.int64)


def _dims(choose, rank):
    dims = []
    for k in range(rank):
        dims.append(choose(EXTENTS + SYMBOLS * 2, f"extent {k}"))
    return dims


def _most(dims):
    """The most elements of ``dims`` (66 for a symbol: n * 2 of the largest n)."""
    worst = 1
    for d in dims:
        worst *= d if isinstance(d, int) else 66
    return worst


def _fits(dims):
    return _most(dims) <= MAX_ELEMENTS


def random_prim(choose):
    """A random prim function (see the module docstring)."""
    kind = choose(["elementwise", "reduce", "two_blocks", "guarded", "rows", "in_place"],
                  "kind")
    dtype = choose(DTYPES, "dtype")
    rank = choose([1, 2, 3], "rank")
    dims = _dims(choose, rank)
    while not _fits(dims):
        dims = [d if not (isinstance(d, int) and d >= 1000) else 17 for d in dims]
        if not _fits(dims):
            dims = dims[:-1] or [3]
    rank = len(dims)
    if kind in ("reduce", "rows") and dtype == "bool":
        dtype = "int8"
    if kind == "rows" and len(dims) == 1:
        dims = [choose([3, 17, "m"], "rows")] + dims
    g = _Gen(choose, dtype, dims)
    if kind == "rows":
        return _rows_then_map(choose, g, dims, dtype)
    if kind == "in_place":
        return _in_place(choose, g, dims, dtype)
    axes = list(range(rank))
    if kind in ("elementwise", "guarded"):
        text, fn = g.expr(axes, choose([0, 1, 2, 3], "depth"))
        out_index = ", ".join(f"v{k}" for k in axes)
        if kind == "elementwise":
            body = [f"O[{out_index}] = {text}"]

            def reference(arrays, out, env):
                grid = _grid(dims, env)
                return fn(arrays, grid, env).astype(dtype) if grid.ndim > 1 else out
        else:
            x, y = choose(axes, "guard axis"), choose(axes, "guard axis 2")
            other = choose([None, "else"], "else")
            body = [f"if v{x} % 2 == 0 or v{y} < 3:", f"    O[{out_index}] = {text}"]
            other_fn = None
            if other:
                t2, other_fn = g.expr(axes, 1)
                body += ["else:", f"    O[{out_index}] = {t2}"]

            def reference(arrays, out, env):
                grid = _grid(dims, env)
                cond = (grid[x] % 2 == 0) | (grid[y] < 3)
                value = fn(arrays, grid, env)
                rest = other_fn(arrays, grid, env) if other_fn else out
                return np.where(cond, value, rest).astype(dtype)
        g.params.append(("O", list(dims), dtype))
        src = _nest(dims, "S" * rank, "O", body)
        return _finish(g, src, reference, dtype, 1)
    if kind == "reduce":
        reduce_axes = [a for a in axes if choose([True, False], f"reduce {a}")] or [axes[-1]]
        op = choose(["sum", "max", "min"], "reduce op")
        scalar = len(reduce_axes) == rank and choose([True, False], "scalar output")
        text, fn = g.expr(axes, choose([0, 1, 2], "depth"))
        keep = [a for a in axes if a not in reduce_axes]
        out_dims = [dims[a] for a in keep]
        if scalar:
            out = "O[()]"
        elif not keep:
            out, out_dims = "O[0]", [1]
        else:
            out = f"O[{', '.join(f'v{a}' for a in keep)}]"
        init = choose([0, 1, 2], "init")
        combine = _update(op, out, text)
        kinds = "".join("R" if a in reduce_axes else "S" for a in axes)
        src = _nest(dims, kinds, "O", ["with T.init():", f"    {out} = T.{dtype}({init})",
                                       f"{out} = {combine}"])
        g.params.append(("O", [] if scalar else out_dims, dtype))

        def reference(arrays, out_array, env):
            values = fn(arrays, _grid(dims, env), env).astype(dtype)
            res = _reduced(op, values, tuple(reduce_axes), init, dtype)
            return np.asarray(res, dtype).reshape(out_array.shape)
        return _finish(g, src, reference, dtype, _most([dims[a] for a in reduce_axes]))
    # two blocks: Tmp = e1(inputs); O = e2(Tmp, inputs), maybe Tmp transposed or reversed
    t1, f1 = g.expr(axes, choose([0, 1, 2], "depth 1"))
    read = choose(["same", "reversed"], "tmp read")
    index = ", ".join(f"v{k}" for k in axes)
    if read == "same":
        extra = (f"Tmp[{index}]", lambda arrays, grid, env: arrays["Tmp"][tuple(grid)])
    else:
        last = dims[-1]
        ridx = ", ".join([f"v{k}" for k in axes[:-1]] + [f"{last} - 1 - v{rank - 1}"])
        extra = (f"Tmp[{ridx}]", lambda arrays, grid, env: arrays["Tmp"][tuple(
            list(grid[:-1]) + [_value(last, env) - 1 - grid[-1]])])
    t2, f2 = g.expr(axes, choose([0, 1, 2], "depth 2"), extra)
    if "Tmp" not in t2:
        t2, f2 = _combine(choose, dtype, extra, (t2, f2))
    src = f'    Tmp = T.alloc_buffer({_shape_text(dims)}, "{dtype}")\n'
    src += _nest(dims, "S" * rank, "T1", [f"Tmp[{index}] = {t1}"])
    src += _nest(dims, "S" * rank, "T2", [f"O[{index}] = {t2}"])
    g.params.append(("O", list(dims), dtype))

    def reference(arrays, out, env):
        grid = _grid(dims, env)
        if grid.ndim == 1:
            return out
        tmp = f1(arrays, grid, env).astype(dtype)
        return f2(dict(arrays, Tmp=tmp), grid, env).astype(dtype)
    return _finish(g, src, reference, dtype, 1)


def _reduced(op, values, axes, init, dtype):
    """``values`` reduced by ``op`` over ``axes``, starting from ``init``."""
    start = np.asarray(init, dtype)
    if op == "sum":
        with np.errstate(over="ignore"):
            total = np.sum(values, axis=axes, dtype=_acc(dtype)).astype(dtype)
        return _wrap(np.add, total, np.broadcast_to(start, total.shape))
    return (np.max if op == "max" else np.min)(values, axis=axes, initial=start)


def _update(op, out, value):
    return {"sum": f"{out} + {value}", "max": f"T.max({out}, {value})",
            "min": f"T.min({out}, {value})"}[op]


def _rows_then_map(choose, g, dims, dtype):
    """Tmp[rows] = a reduction over the trailing axes; O = f(inputs, Tmp[rows]) (softmax's
    shape), or the other way round: Tmp = f(inputs); O[rows] = a reduction of Tmp."""
    rank = len(dims)
    axes = list(range(rank))
    p = choose(range(1, rank), "row axes")
    rows = ", ".join(f"v{k}" for k in range(p))
    index = ", ".join(f"v{k}" for k in axes)
    op = choose(["sum", "max", "min"], "reduce op")
    init = choose([0, 1], "init")
    kinds = "S" * p + "R" * (rank - p)
    if choose([True, False], "reduce first"):
        t1, f1 = g.expr(axes, choose([0, 1], "depth 1"))
        extra = (f"Tmp[{rows}]", lambda arrays, grid, env: arrays["Tmp"][tuple(grid[:p])])
        t2, f2 = g.expr(axes, choose([0, 1], "depth 2"), extra)
        if "Tmp" not in t2:
            t2, f2 = _combine(choose, dtype, extra, (t2, f2))
        tmp = f"Tmp[{rows}]"
        src = f'    Tmp = T.alloc_buffer({_shape_text(dims[:p])}, "{dtype}")\n'
        src += _nest(dims, kinds, "R", ["with T.init():", f"    {tmp} = T.{dtype}({init})",
                                        f"{tmp} = {_update(op, tmp, t1)}"])
        src += _nest(dims, "S" * rank, "O", [f"O[{index}] = {t2}"])
        g.params.append(("O", list(dims), dtype))

        def reference(arrays, out, env):
            grid = _grid(dims, env)
            values = f1(arrays, grid, env).astype(dtype)
            tmp = _reduced(op, values, tuple(range(p, rank)), init, dtype)
            return f2(dict(arrays, Tmp=tmp), grid, env).astype(dtype)
    else:
        t1, f1 = g.expr(axes, choose([0, 1, 2], "depth 1"))
        src = f'    Tmp = T.alloc_buffer({_shape_text(dims)}, "{dtype}")\n'
        src += _nest(dims, "S" * rank, "T", [f"Tmp[{index}] = {t1}"])
        out = f"O[{rows}]"
        src += _nest(dims, kinds, "O", ["with T.init():", f"    {out} = T.{dtype}({init})",
                                        f"{out} = {_update(op, out, f'Tmp[{index}]')}"])
        g.params.append(("O", list(dims[:p]), dtype))

        def reference(arrays, out, env):
            values = f1(arrays, _grid(dims, env), env).astype(dtype)
            return _reduced(op, values, tuple(range(p, rank)), init, dtype)
    return _finish(g, src, reference, dtype, _most(dims[p:]))


def _in_place(choose, g, dims, dtype):
    """O updated in place from its own value: O[i] = f(O[i], inputs)."""
    axes = list(range(len(dims)))
    index = ", ".join(f"v{k}" for k in axes)
    extra = (f"O[{index}]", lambda arrays, grid, env: arrays["O"][tuple(grid)])
    text, fn = g.expr(axes, choose([0, 1, 2], "depth"), extra)
    if "O[" not in text:
        text, fn = _combine(choose, dtype, extra, (text, fn))
    g.params.append(("O", list(dims), dtype))

    def reference(arrays, out, env):
        grid = _grid(dims, env)
        return fn(dict(arrays, O=out), grid, env).astype(dtype) if grid.ndim > 1 else out
    return _finish(g, _nest(dims, "S" * len(dims), "O", [f"O[{index}] = {text}"]), reference,
                   dtype, 1)


def _combine(choose, dtype, a, b):
    """``a`` and ``b`` combined by a random operator of ``dtype``."""
    if dtype == "bool":
        return (f"({a[0]} and {b[0]})", lambda *args: np.logical_and(a[1](*args), b[1](*args)))
    op = choose(["+", "max"], "combine")
    if op == "+":
        return f"({a[0]} + {b[0]})", lambda *args: _wrap(np.add, a[1](*args), b[1](*args))
    return f"T.max({a[0]}, {b[0]})", lambda *args: np.maximum(a[1](*args), b[1](*args))


def _acc(dtype):
    return np.float64 if dtype.startswith("float") else dtype


def _finish(g, body, reference, dtype, reduced):
    for sym in ("n", "m"):
        bare = any(d == sym for _, dims, _ in g.params for d in dims)
        used = any(isinstance(d, str) and sym in d for d in g.dims)
        if used and not bare:   # a parameter that only declares the symbol
            g.params.insert(0, (sym.upper(), [sym], "int8"))
    sig = ", ".join(f'{name}: T.Buffer({_shape_text(dims)}, "{dt}")'
                    for name, dims, dt in g.params)
    text = f"from pyir.script import tensor as T\n\n@T.prim_func\ndef f({sig}):\n{body}"
    return RandomPrim(text, g.params, "O", reference, dtype, reduced)


def random_array(rng, shape, dtype):
    """Random values of ``dtype``: small multiples of 1/2 for floats (sums and products stay
    exact), the whole range for integers (so that arithmetic wraps)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return np.asarray(rng.integers(-6, 7, shape) / 2, dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def run_and_compare(prim, lib, env, seed=0):
    """Run ``lib["f"]`` on random inputs for symbol values ``env`` and compare the output
    with the reference."""
    rng = np.random.default_rng(seed)
    arrays = {name: random_array(rng, tuple(_value(d, env) for d in dims), dt)
              for name, dims, dt in prim.params}
    out = arrays[prim.output]
    start = out.copy()
    lib["f"](*(arrays[name] for name, _, _ in prim.params))
    want = prim.reference({k: v for k, v in arrays.items() if k != prim.output}, start, env)
    if prim.dtype.startswith("float"):
        eps = np.finfo(prim.dtype).eps
        np.testing.assert_allclose(out.astype("float64"), want.astype("float64"),
                                   rtol=eps * 4 * prim.reduced, atol=eps * prim.reduced * 64)
    else:
        np.testing.assert_array_equal(out, want)
