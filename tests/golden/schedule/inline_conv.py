from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def conv1d(X: T.Buffer(("n",), "float32"),
               W: T.Buffer((3,), "float32"),
               Y: T.Buffer(("n",), "float32")):
        T.func_attr({"scheduled": True})
        for i, r in T.grid(n, 3):
            with T.block("Y"):
                vi, vr = T.axis.remap("SR", [i, r])
                T.reads(Y[vi], W[vr], X[vi + vr - 1])
                T.writes(Y[vi])
                with T.init():
                    Y[vi] = T.float32(0.0)
                Y[vi] = Y[vi] + T.if_then_else(vi + vr >= 1 and vi + vr <= n, X[vi + vr - 1], T.float32(0.0)) * W[vr]
