from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def f(X: T.Buffer(("n", 8), "float32"), Y: T.Buffer(("n", 8), "float32")):
        T.func_attr({"scheduled": True})
        M = T.alloc_buffer((n, 2), "float32")
        for i in range(n):
            for j in range(8):
                with T.block("M"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    T.reads(M[vi, 0], X[vi, vj])
                    T.writes(M[vi, 0])
                    with T.init():
                        M[vi, 0] = T.float32("-inf")
                    M[vi, 0] = T.max(M[vi, 0], X[vi, vj])
            for ax0, ax1 in T.grid(1, 8):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i + ax0)
                    vj = T.axis.spatial(8, ax1)
                    T.reads(X[vi, vj], M[vi, 0])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = X[vi, vj] - M[vi, 0]
