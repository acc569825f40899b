from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def conv1d(X: T.Buffer(("n",), "float32"),
               W: T.Buffer((3,), "float32"),
               Y: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        P = T.alloc_buffer((n + 2,), "float32")
        for i_0 in T.serial((n + 4) // 5, annotations={"pyir.split_tail": 5}):
            for ax0 in range(7):
                with T.block("P"):
                    vi = T.axis.spatial(n + 2, i_0 * 5 + ax0)
                    T.where(i_0 * 5 + ax0 < n + 2)
                    T.reads(X[vi - 1])
                    T.writes(P[vi])
                    P[vi] = T.if_then_else(vi >= 1 and vi <= n, X[vi - 1], T.float32(0.0))
            for i_1, r in T.grid(5, 3):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i_0 * 5 + i_1)
                    vr = T.axis.reduce(3, r)
                    T.where(i_0 * 5 + i_1 < n)
                    T.reads(Y[vi], P[vi + vr], W[vr])
                    T.writes(Y[vi])
                    with T.init():
                        Y[vi] = T.float32(0.0)
                    Y[vi] = Y[vi] + P[vi + vr] * W[vr]
