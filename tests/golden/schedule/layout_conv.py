from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def conv1d(X: T.Buffer(("n",), "float32"),
               W: T.Buffer((3,), "float32"),
               Y: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        P = T.alloc_buffer(((n + 1) // 4 + 1, 4), "float32")
        for i in range(n + 2):
            with T.block("P"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi - 1])
                T.writes(P[vi // 4, vi % 4])
                P[vi // 4, vi % 4] = T.if_then_else(vi >= 1 and vi <= n, X[vi - 1], T.float32(0.0))
        for i, r in T.grid(n, 3):
            with T.block("Y"):
                vi, vr = T.axis.remap("SR", [i, r])
                T.reads(Y[vi], P[(vi + vr) // 4, (vi + vr) % 4], W[vr])
                T.writes(Y[vi])
                with T.init():
                    Y[vi] = T.float32(0.0)
                Y[vi] = Y[vi] + P[(vi + vr) // 4, (vi + vr) % 4] * W[vr]
