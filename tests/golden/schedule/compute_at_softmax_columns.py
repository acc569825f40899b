from pyir.script import tensor as T


@T.prim_func
def nn_softmax(X: T.Buffer(("d0", "d1"), "float32"), Y: T.Buffer(("d0", "d1"), "float32")):
    T.func_attr({"scheduled": True})
    M = T.alloc_buffer((d0, 1), "float32")
    S = T.alloc_buffer((d0, 1), "float32")
    for i0 in range(d0):
        for ax0, ax1 in T.grid(1, d1):
            with T.block("M"):
                v0 = T.axis.spatial(d0, i0 + ax0)
                v1 = T.axis.reduce(d1, ax1)
                T.reads(M[v0, 0], X[v0, v1])
                T.writes(M[v0, 0])
                with T.init():
                    M[v0, 0] = T.float32("-inf")
                M[v0, 0] = T.max(M[v0, 0], X[v0, v1])
        for ax0, ax1 in T.grid(1, d1):
            with T.block("S"):
                v0 = T.axis.spatial(d0, i0 + ax0)
                v1 = T.axis.reduce(d1, ax1)
                T.reads(S[v0, 0], X[v0, v1], M[v0, 0])
                T.writes(S[v0, 0])
                with T.init():
                    S[v0, 0] = T.float32(0.0)
                S[v0, 0] = S[v0, 0] + T.exp(X[v0, v1] - M[v0, 0])
        for i1 in range(d1):
            with T.block("Y"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                T.reads(X[v0, v1], M[v0, 0], S[v0, 0])
                T.writes(Y[v0, v1])
                Y[v0, v1] = T.exp(X[v0, v1] - M[v0, 0]) / S[v0, 0]
