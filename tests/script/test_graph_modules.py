"""A corpus of graph modules: each prints, parses back to equal IR, prints the same text
again, verifies, and matches its golden file (tests/golden/script/graph/)."""

import textwrap

import pytest

from pyir.ir import (BindingBlock, CallTIR, DataflowBlock, DataflowVar, Function, GraphVar,
                     MatchCast, OpCall, SeqExpr, TensorStructInfo, TupleStructInfo, Var,
                     VarBinding, assert_structural_equal, verify)
from pyir.demo import Module as DesignExample
from pyir.script import from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T


@I.ir_module
class Chain:
    @T.prim_func
    def add1(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = X[vi] + T.float32(1)

    @T.prim_func
    def exp(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.exp(X[vi])

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        with R.dataflow():
            a = R.call_tir(cls.add1, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((n,), "float32"))
            c = R.call_tir(cls.add1, (b,), out_sinfo=R.Tensor((n,), "float32"))
            d = R.call_tir(cls.exp, (c,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(d)
        return d


@I.ir_module
class Diamond:
    @T.prim_func
    def add(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n", "m"), "float32"),
            C: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n", "m"), "float32")):
        with R.dataflow():
            left = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((n, m), "float32"))
            right = R.call_dps_packed("demo.negate", (x,), out_sinfo=R.Tensor((n, m), "float32"))
            joined = R.call_tir(cls.add, (left, right), out_sinfo=R.Tensor((n, m), "float32"))
            R.output(joined)
        return joined


@I.ir_module
class TupleInOut:
    @T.prim_func
    def split_sign(X: T.Buffer(("n",), "float32"), P: T.Buffer(("n",), "float32"),
                   N: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("PN"):
                vi = T.axis.spatial(n, i)
                P[vi] = T.max(X[vi], T.float32(0))
                N[vi] = T.min(X[vi], T.float32(0))

    @R.function
    def main(pair: R.Tuple(R.Tensor(("n",), "float32"), R.Tensor(("m",), "float32"))):
        with R.dataflow():
            first = pair[0]
            parts = R.call_tir(cls.split_sign, (first,),
                               out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")])
            pos = parts[0]
            neg = parts[1]
            R.output(pos, neg)
        return (pos, neg, pair[1])


@I.ir_module
class MatchCastModule:
    @T.prim_func
    def double(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi, vj] * T.float32(2)

    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32")) -> R.Tensor(("a", "b"), "float32"):
        y = R.match_cast(x, R.Tensor(("a", "b"), "float32"))
        with R.dataflow():
            z = R.call_tir(cls.double, (y,), out_sinfo=R.Tensor((a, b), "float32"))
            flat = R.call_dps_packed("demo.flatten", (z,),
                                     out_sinfo=R.Tensor(ndim=1, dtype="float32"))
            w = R.match_cast(flat, R.Tensor(("c",), "float32"))
            R.output(z, w)
        return z


@I.ir_module
class CallPacked:
    @T.prim_func
    def relu(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.max(X[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        noisy = R.call_packed("demo.add_noise", x, 0.5, sinfo_args=R.Tensor((n,), "float32"))
        with R.dataflow():
            y = R.call_tir(cls.relu, (noisy,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(y)
        total = R.call_packed("demo.total", y, sinfo_args=R.Prim("float32"))
        both = R.call_packed("demo.minmax", y,
                             sinfo_args=R.Tuple(R.Prim("float32"), R.Prim("float32")))
        _ = R.call_packed("demo.log", y, total)
        return (y, total, both)


@I.ir_module
class SymbolicExprs:
    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n", "m"), "float32"),
             y: R.Tensor(("n * 2", "m + 1"), "float32")) -> R.Tensor(("n * 2", "m + 1"), "float32"):
        with R.dataflow():
            padded = R.call_dps_packed("demo.pad", (x,),
                                       out_sinfo=R.Tensor((n * 2, m + 1), "float32"))
            summed = R.add(padded, y)
            out = R.call_tir(cls.relu, (summed,), out_sinfo=R.Tensor((n * 2, m + 1), "float32"))
            tiles = R.call_dps_packed("demo.tile", (x,),
                                      out_sinfo=R.Tensor((n // 4, (m - 1) % 8, n * (m + 2)),
                                                         "float32"))
            R.output(out, tiles)
        return out


@I.ir_module
class SamePrimManyShapes:
    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(a: R.Tensor(("p", "q"), "float32"), b: R.Tensor(("q", "p"), "float32"),
             c: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            ra = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((p, q), "float32"))
            rb = R.call_tir(cls.relu, (b,), out_sinfo=R.Tensor((q, p), "float32"))
            rc = R.call_tir(cls.relu, (c,), out_sinfo=R.Tensor((4, 8), "float32"))
            R.output(ra, rb, rc)
        return (ra, rb, rc)


@I.ir_module
class NdimOnly:
    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32"), y: R.Tensor(dtype="float16")):
        with R.dataflow():
            z = R.call_dps_packed("demo.transpose", (x,),
                                  out_sinfo=R.Tensor(ndim=2, dtype="float32"))
            s = R.add(z, x)
            r = R.nn.relu(y)
            R.output(s, r)
        return (s, r)


@I.ir_module
class Operators:
    @T.prim_func
    def bias(X: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("m",), "float32"),
             Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = X[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor(("b", "n", "k"), "float32"), w: R.Tensor(("k", "m"), "float32"),
             bias: R.Tensor(("m",), "float32"), scale: R.Tensor(("n", 1), "float32")):
        with R.dataflow():
            h = R.matmul(x, w)
            h2 = R.add(h, bias)
            h3 = R.multiply(h2, scale)
            act = R.nn.relu(h3)
            probs = R.nn.softmax(act, axis=1)
            total = R.sum(probs, axis=(0, 2), keepdims=True)
            diff = R.subtract(R.exp(probs), R.divide(probs, total))
            flat = R.call_dps_packed("demo.merge_batch", (diff,),
                                     out_sinfo=R.Tensor((b * n, m), "float32"))
            out = R.call_tir(cls.bias, (flat, bias), out_sinfo=R.Tensor((b * n, m), "float32"))
            R.output(out, total)
        return (out, R.maximum(total, R.minimum(total, total)))


@I.ir_module
class CalleeForms:
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        with R.dataflow():
            a = R.call_tir(CalleeForms.neg, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_tir(neg, (a,), out_sinfo=R.Tensor((n,), "float32"))
            c = R.call_tir(cls.neg, (b,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(c)
        return c

    @T.prim_func
    def neg(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.spatial(n, i)
                Y[vi] = T.float32(0) - X[vi]


@I.ir_module
class ValuesAndAnnotations:
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32"), s: R.Shape(["k", 3]), p: R.Prim("int64"),
             anything: R.Object):
        shape = R.shape([n * m, k, 3])
        raw = R.call_packed("demo.reshape", x, shape, sinfo_args=R.Tensor(ndim=3, dtype="float32"))
        y: R.Tensor((n * m, k, 3), "float32") = raw
        count = R.prim_value(n * m + 1)
        flag = R.call_packed("demo.check", y, count, 2, 1.5, True,
                             R.prim_value(7, "int32"), R.prim_value(0.25, "float64"),
                             sinfo_args=R.Prim("bool"))
        loose: R.Object = y
        return (y, flag, loose, anything, s, p)


@I.ir_module
class BlocksAndNames:
    @R.function
    def helper(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        x = R.call_packed("demo.prepare", x, sinfo_args=R.Tensor((8,), "float32"))
        with R.dataflow():
            y = R.exp(x)
            R.output(y)
        x = R.call_packed("demo.again", y, sinfo_args=R.Tensor((8,), "float32"))
        with R.dataflow():
            y2 = R.exp(x)
            z = R.add(y2, y)
            R.output(z)
        return z


MODULES = {
    "design_example": DesignExample, "chain": Chain, "diamond": Diamond,
    "tuple_in_out": TupleInOut, "match_cast": MatchCastModule, "call_packed": CallPacked,
    "symbolic_exprs": SymbolicExprs, "same_prim_many_shapes": SamePrimManyShapes,
    "ndim_only": NdimOnly, "operators": Operators, "callee_forms": CalleeForms,
    "values_and_annotations": ValuesAndAnnotations, "blocks_and_names": BlocksAndNames,
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_round_trip(name, golden):
    mod = MODULES[name]
    verify(mod)
    text = mod.script()
    again = from_source(text)
    assert_structural_equal(mod, again)
    assert again.script() == text
    verify(again)
    golden(f"script/graph/{name}.py", text)


def test_lone_function_round_trips(golden):
    @R.function
    def lone(x: R.Tensor(("n",), "float32")):
        with R.dataflow():
            y = R.nn.softmax(x)
            R.output(y)
        return y
    text = lone.script()
    assert text.startswith("from pyir.script import graph as R\n")
    assert_structural_equal(lone, from_source(text))
    golden("script/graph/lone_function.py", text)


def test_dataflow_outputs_are_graph_vars_and_the_rest_dataflow_vars():
    block = DesignExample["main"].body.blocks[0]
    assert isinstance(block, DataflowBlock)
    kinds = [(b.var.name, isinstance(b.var, DataflowVar)) for b in block.bindings]
    assert kinds == [("y", True), ("z", True), ("out", False)]


def test_struct_info_of_bindings():
    main = Operators["main"]
    sinfo = {b.var.name: b.var.struct_info for blk in main.body.blocks for b in blk.bindings}
    b, n, _ = main.params[0].struct_info.shape
    m = main.params[1].struct_info.shape[1]
    assert sinfo["h"] == TensorStructInfo((b, n, m), "float32")
    assert sinfo["total"] == TensorStructInfo((1, n, 1), "float32")
    assert main.ret_struct_info == TupleStructInfo((sinfo["out"], sinfo["total"]))


def test_match_cast_declares_new_shape_variables():
    main = MatchCastModule["main"]
    cast = main.body.blocks[0].bindings[0]
    assert isinstance(cast, MatchCast)
    a, b = cast.struct_info.shape
    assert (a.name, b.name) == ("a", "b")
    assert main.ret_struct_info.shape == (a, b)


def test_name_clashes_are_renamed_when_printed():
    n = Var("n")
    x = GraphVar("n", TensorStructInfo((n,), "float32"))
    k = Var("x")
    y = GraphVar("x", TensorStructInfo((k,), "float32"))
    z = GraphVar("x", y.struct_info)
    body = SeqExpr((BindingBlock((MatchCast(y, x, y.struct_info),
                                  VarBinding(z, OpCall("exp", (y,))))),), z)
    func = Function("f", (x,), body, z.struct_info)
    text = func.script()
    assert 'def f(n_1: R.Tensor(("n",), "float32"))' in text
    assert 'x_1 = R.match_cast(n_1, R.Tensor(("x",), "float32"))' in text
    assert "x_2 = R.exp(x_1)" in text
    assert_structural_equal(func, from_source(text))


def test_callee_forms_name_the_same_prim_function():
    calls = [b.value for b in CalleeForms["main"].body.blocks[0].bindings]
    assert all(isinstance(c, CallTIR) and c.func.name == "neg" for c in calls)


AXIS = 1


def test_a_negated_python_constant_is_a_constant_attribute():
    import numpy as np

    import pyir

    @I.ir_module
    class Rows:
        @R.function
        def main(x: R.Tensor(("n", "m"), "float32")):
            return R.sum(x, axis=-AXIS)

    np.testing.assert_array_equal(pyir.build(Rows)["main"](np.ones((2, 3), "float32")), [3, 3])


def test_values_without_a_literal_round_trip():
    """inf, -inf and nan printed as bare names, which did not parse back."""
    text = "from pyir.script import graph as R\n" + textwrap.dedent('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            a = R.prim_value(float("inf"), "float32")
            b = R.prim_value(-float("inf"), "float64")
            c = R.prim_value(float("nan"), "float32")
            return x
        ''')
    func = from_source(text)
    printed = func.script()
    assert 'R.prim_value(float("inf"), "float32")' in printed
    assert 'R.prim_value(float("-inf"), "float64")' in printed
    assert_structural_equal(from_source(printed), func)


def test_a_negative_float_prim_value_is_a_float32_value():
    """R.prim_value(-1.5) and R.prim_value(-0.0) were read as shape expressions ("this is
    not a valid shape expression"), while R.prim_value(1.5) is a float32 value."""
    import math

    text = "from pyir.script import graph as R\n" + textwrap.dedent('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            a = R.prim_value(-1.5)
            b = R.prim_value(-0.0)
            return (a, b)
        ''')
    func = from_source(text)
    (a, b) = [binding.value.value for binding in func.body.blocks[0].bindings]
    assert (a.dtype, a.value, b.dtype) == ("float32", -1.5, "float32")
    assert b.value == 0 and math.copysign(1, b.value) == -1
    printed = func.script()
    assert "a = -1.5" in printed and "b = -0.0" in printed
    assert_structural_equal(from_source(printed), func)


def test_a_packed_function_name_past_u_ffff_round_trips():
    """JSON wrote 😀 as two escapes, which Python reads as two lone surrogates."""
    text = "from pyir.script import graph as R\n" + textwrap.dedent('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.call_dps_packed("fn.😀", (x,), out_sinfo=R.Tensor((4,), "float32"))
            return y
        ''')
    func = from_source(text)
    assert 'R.call_dps_packed("fn.😀", ' in func.script()
    assert_structural_equal(from_source(func.script()), func)
