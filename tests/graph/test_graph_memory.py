"""The memory plan of compiled graph functions: storage whose lifetime ended is reused."""

import numpy as np
from pyir.script import tensor as T

import pyir
from pyir.ir import (
    CallTIR,
    DataflowBlock,
    DataflowVar,
    Function,
    GlobalVar,
    GraphVar,
    IRModule,
    SeqExpr,
    TensorStructInfo,
    Var,
    VarBinding,
)


@T.prim_func
def inc(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
    for i, j in T.grid(n, m):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj] + T.float32(1)


def chain_module(length):
    n, m = Var("n"), Var("m")
    sinfo = TensorStructInfo((n, m), "float32")
    x = GraphVar("x", sinfo)
    bindings, prev = [], x
    for k in range(length):
        var = (GraphVar if k == length - 1 else DataflowVar)(f"y{k}", sinfo)
        bindings.append(VarBinding(var, CallTIR(GlobalVar("inc"), (prev,), (sinfo,))))
        prev = var
    main = Function("main", (x,), SeqExpr((DataflowBlock(tuple(bindings)),), prev), sinfo)
    return IRModule.from_dict({"inc": inc, "main": main})


def test_chain_of_ten_uses_two_intermediate_buffers():
    lib = pyir.build(chain_module(10))
    plan = lib["main"].plan
    assert plan.intermediates() <= 2
    assert len(plan.storages) == 2
    x = np.random.rand(7, 5).astype("float32")
    np.testing.assert_allclose(lib["main"](x), x + 10, rtol=1e-6)


def test_storages_are_sized_symbolically():
    plan = pyir.build(chain_module(3))["main"].plan
    assert all("n" in str(s) and "m" in str(s) for s in plan.storages)
    kinds = [leaf.kind for leaf in plan.leaves]
    assert kinds.count("output") == 1 and kinds.count("input") == 1
