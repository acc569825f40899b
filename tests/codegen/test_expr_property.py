"""Random elementwise expressions over every dtype against numpy, built scalar and
vectorized. Seeded: the default profile checks a few dozen expressions in seconds;
PYIR_FULL_TESTS=1 checks a few hundred."""

import os
import random

import numpy as np
import pytest

from test_expr_semantics import evaluate

INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
NUMBERS = INTEGERS + FLOATS
CASES = 400 if os.environ.get("PYIR_FULL_TESTS") == "1" else 24
TOLERANCE = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}

COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, ">=": np.greater_equal}
ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide,
         "%": np.remainder, "min": np.minimum, "max": np.maximum}


def special_values(dtype):
    if dtype in FLOATS:
        info = np.finfo(dtype)
        return [0.0, -0.0, 1.0, -2.5, 0.5, np.inf, -np.inf, np.nan, float(info.max),
                float(info.smallest_subnormal), 7.0, -100.0]
    info = np.iinfo(dtype)
    return sorted({info.min, info.min + 1, 0, 1, 2, 7, info.max, info.max - 1,
                   -1 if info.min else 3})


def literal(dtype, value):
    if dtype in FLOATS and not np.isfinite(value):
        return f'T.{dtype}("{value}")'
    return f"T.{dtype}({value!r})"


class Expressions:
    """A random expression of a dtype as (script text, numpy function of the inputs)."""

    def __init__(self, rng, a, b):
        self.rng, self.inputs = rng, {"A[vi]": a, "B[vi]": b}

    def leaf(self, dtype):
        for text, src in self.inputs.items():
            if src == dtype and self.rng.random() < 0.7:
                return text, lambda env, t=text: env[t]
        if self.rng.random() < 0.6:
            text = self.rng.choice(list(self.inputs))
            return self.cast(dtype, (text, lambda env, t=text: env[t]), self.inputs[text])
        value = self.rng.choice(special_values(dtype))
        return literal(dtype, value), lambda env: np.array(value, dtype)

    def cast(self, dtype, sub, src):
        text, fn = sub
        if src in FLOATS and dtype not in FLOATS and dtype != "bool":
            text, fn = self.in_range(dtype, sub, src)
        return f'T.cast({text}, "{dtype}")', lambda env: np.asarray(fn(env)).astype(dtype)

    def in_range(self, dtype, sub, src):
        """A float cast to an integer only where it fits (elsewhere LLVM's result is
        undefined): 0 outside ``[-100, 100]`` and for NaN."""
        text, fn = sub
        low = "0.0" if dtype.startswith("u") else "-100.0"
        inside = f"{text} >= T.{src}({low}) and {text} <= T.{src}(100.0)"
        return (f"T.if_then_else({inside}, {text}, T.{src}(0.0))",
                lambda env: (lambda v: np.where((v >= float(low)) & (v <= 100.0), v, 0))(
                    np.asarray(fn(env))))

    def bool(self, depth):
        src = self.rng.choice(NUMBERS)
        (ta, fa), (tb, fb) = self.of(src, depth - 1), self.of(src, depth - 1)
        op = self.rng.choice(list(COMPARE))
        return f"({ta} {op} {tb})", lambda env: COMPARE[op](fa(env), fb(env))

    def of(self, dtype, depth):
        r = self.rng.random()
        if depth <= 0 or r < 0.2:
            return self.leaf(dtype)
        if r < 0.6:
            ops = list(ARITH) + (["/"] if dtype in FLOATS else [])
            op = self.rng.choice(ops)
            (ta, fa), (tb, fb) = self.of(dtype, depth - 1), self.of(dtype, depth - 1)
            if op == "/":
                return f"({ta} / {tb})", lambda env: np.divide(fa(env), fb(env))
            if dtype in FLOATS and op in ("//", "%"):
                return self.leaf(dtype)
            text = f"T.{op}({ta}, {tb})" if op in ("min", "max") else f"({ta} {op} {tb})"
            return text, lambda env: ARITH[op](fa(env), fb(env)).astype(dtype)
        if r < 0.7:
            ta, fa = self.of(dtype, depth - 1)
            return f"(-{ta})", lambda env: np.negative(fa(env)).astype(dtype)
        if r < 0.85:
            (tc, fc), (ta, fa), (tb, fb) = (self.bool(depth), self.of(dtype, depth - 1),
                                            self.of(dtype, depth - 1))
            return (f"T.if_then_else({tc}, {ta}, {tb})",
                    lambda env: np.where(fc(env), fa(env), fb(env)).astype(dtype))
        src = self.rng.choice(NUMBERS)
        return self.cast(dtype, self.of(src, depth - 1), src)


def values(rng, dtype, n):
    pool = special_values(dtype)
    if dtype in FLOATS:
        extra = [rng.uniform(-50, 50) for _ in range(n)]
    else:
        info = np.iinfo(dtype)
        extra = [rng.randint(int(info.min), int(info.max)) for _ in range(n)]
    picked = [rng.choice(pool) if rng.random() < 0.5 else extra[k] for k in range(n)]
    return np.array(picked, dtype if dtype in FLOATS else object).astype(dtype)


def matches(got, want, dtype):
    if dtype not in FLOATS:
        return np.array_equal(got, want)
    g, w = got.astype("float64"), want.astype("float64")
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False
    both = ~np.isnan(g)
    return np.allclose(g[both], w[both], rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("seed", range(CASES))
def test_random_expression_matches_numpy(seed):
    rng = random.Random(seed)
    a, b, out = rng.choice(NUMBERS), rng.choice(NUMBERS), rng.choice(NUMBERS)
    text, fn = Expressions(rng, a, b).of(out, 3)
    n = rng.choice([1, 9, 37])
    env = {"A[vi]": values(rng, a, n), "B[vi]": values(rng, b, n)}
    with np.errstate(all="ignore"):
        want = np.broadcast_to(np.asarray(fn(env)).astype(out), (n,))
    got = evaluate(text, env["A[vi]"], out, b=env["B[vi]"])
    assert matches(got, want, out), (text, env, got, want)
