from pyir.script import tensor as T


@T.prim_func
def axpy(alpha: T.float32,
         X: T.Buffer(("n",), "float32"),
         Y: T.Buffer(("n",), "float32"),
         n: T.int64,
         offset: T.int64):
    for i in range(n - offset):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            T.reads(X[vi + offset], Y[vi + offset])
            T.writes(Y[vi + offset])
            Y[vi + offset] = alpha * X[vi + offset] + Y[vi + offset]
