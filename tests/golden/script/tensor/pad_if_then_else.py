from pyir.script import tensor as T


@T.prim_func
def pad(A: T.Buffer(("n",), "float32"), P: T.Buffer(("n + 2",), "float32")):
    for i in range(n + 2):
        with T.block("pad"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi - 1])
            T.writes(P[vi])
            P[vi] = T.if_then_else(1 <= vi and vi < n + 1, A[vi - 1], T.float32(0.0))
