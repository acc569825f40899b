from pyir.script import tensor as T


@T.prim_func
def bias_add(X: T.Buffer(("n", "c"), "float32"),
             bias: T.Buffer(("c",), "float32"),
             Y: T.Buffer(("n", "c"), "float32")):
    for i, j in T.grid(n, c):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(X[vi, vj], bias[vj])
            T.writes(Y[vi, vj])
            Y[vi, vj] = X[vi, vj] + bias[vj]
