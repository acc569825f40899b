from pyir.script import tensor as T


@T.prim_func
def masked(X: T.Buffer(("n",), "float32"),
           mask: T.Buffer(("n",), "bool"),
           Y: T.Buffer(("n",), "float32"),
           keep: T.Buffer(("n",), "bool")):
    for i in range(n):
        with T.block("mask"):
            vi = T.axis.remap("S", [i])
            T.reads(mask[vi], X[vi], keep[vi])
            T.writes(keep[vi], Y[vi])
            keep[vi] = mask[vi] and X[vi] >= 0.0
            Y[vi] = T.if_then_else(keep[vi], X[vi], T.float32(0.0))
