"""Random scalar expressions print and parse back to the same IR: precedence, literals of
every kind next to each other, unary minus, chained logic and comparisons."""

from hypothesis import given, settings
from hypothesis import strategies as st

from pyir.ir import (Binary, Buffer, BufferStore, Call, Cast, FloatImm, IntImm, Not, PrimFunc,
                     Select, Var, assert_structural_equal, seq, verify)
from pyir.script import from_source

X, Y = Var("x"), Var("y")
F = Var("f", "float32")
I32 = Var("w", "int32")
OUT = {dtype: Buffer(f"out_{dtype}", (1,), dtype) for dtype in ("int64", "float32", "int32",
                                                                "bool")}


def _leaves(dtype):
    if dtype == "int64":
        return st.one_of(st.sampled_from([X, Y]), st.integers(-20, 20).map(IntImm))
    if dtype == "int32":
        return st.one_of(st.just(I32), st.integers(-9, 9).map(lambda v: IntImm(v, "int32")))
    if dtype == "float32":
        return st.one_of(st.just(F), st.floats(-1e6, 1e6, allow_nan=False).map(FloatImm))
    return st.booleans().map(lambda b: IntImm(int(b), "bool"))


def _grow(children):
    def nodes(dtype):
        arith = ["add", "sub", "mul", "min", "max"] + (
            ["div"] if dtype == "float32" else ["floordiv", "floormod"])
        same = children[dtype]
        options = [st.builds(Binary, st.sampled_from(arith), same, same) if dtype != "bool"
                   else st.builds(Binary, st.sampled_from(["and", "or"]), same, same),
                   st.builds(Select, children["bool"], same, same)]
        if dtype == "bool":
            options += [st.builds(Not, same),
                        st.builds(Binary, st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
                                  children["int64"], children["int64"]),
                        st.builds(Binary, st.sampled_from(["lt", "ge"]), children["float32"],
                                  children["float32"])]
        if dtype == "float32":
            options += [st.builds(lambda e: Call("float32", "exp", (e,)), same),
                        st.builds(lambda e: Cast("float32", e), children["int64"])]
        if dtype == "int64":
            options.append(st.builds(lambda e: Cast("int64", e), children["int32"]))
        return st.one_of(*options)
    return {d: st.one_of(children[d], nodes(d)) for d in children}


def _exprs(depth=4):
    level = {d: _leaves(d) for d in OUT}
    for _ in range(depth):
        level = _grow(level)
    return level


_EXPRS = _exprs()


@settings(max_examples=300, deadline=None)
@given(st.tuples(*(_EXPRS[d] for d in OUT)))
def test_random_expressions_round_trip(values):
    stores = [BufferStore(OUT[d], v, (IntImm(0),)) for d, v in zip(OUT, values)]
    func = PrimFunc("exprs", (X, Y, F, I32, *OUT.values()), seq(*stores))
    verify(func)
    text = func.script()
    again = from_source(text)
    assert_structural_equal(func, again)
    assert again.script() == text
