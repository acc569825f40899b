from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def conv1d(X: T.Buffer(("n",), "float32"),
               W: T.Buffer((3,), "float32"),
               Y: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        W_local = T.alloc_buffer((3,), "float32", scope="local")
        P = T.alloc_buffer((n + 2,), "float32")
        for i in range(n + 2):
            with T.block("P"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi - 1])
                T.writes(P[vi])
                P[vi] = T.if_then_else(vi >= 1 and vi <= n, X[vi - 1], T.float32(0.0))
        for ax0 in range(3):
            with T.block("W_local"):
                v0 = T.axis.remap("S", [ax0])
                T.reads(W[v0])
                T.writes(W_local[v0])
                W_local[v0] = W[v0]
        for i, r in T.grid(n, 3):
            with T.block("Y"):
                vi, vr = T.axis.remap("SR", [i, r])
                T.reads(Y[vi], P[vi + vr], W_local[vr])
                T.writes(Y[vi])
                with T.init():
                    Y[vi] = T.float32(0.0)
                Y[vi] = Y[vi] + P[vi + vr] * W_local[vr]
