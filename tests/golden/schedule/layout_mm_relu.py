from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer(("n", 32), "float32"),
                B: T.Buffer((32, 24), "float32"),
                D: T.Buffer(("n", 24), "float32")):
        T.func_attr({"scheduled": True})
        Y = T.alloc_buffer((3, n, 8), "float32")
        for i, j, r in T.grid(n, 24, 32):
            with T.block("Y"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                T.reads(Y[vj // 8, vi, vj % 8], A[vi, vr], B[vr, vj])
                T.writes(Y[vj // 8, vi, vj % 8])
                with T.init():
                    Y[vj // 8, vi, vj % 8] = T.float32(0.0)
                Y[vj // 8, vi, vj % 8] = Y[vj // 8, vi, vj % 8] + A[vi, vr] * B[vr, vj]
        for i, j in T.grid(n, 24):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vj // 8, vi, vj % 8])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(Y[vj // 8, vi, vj % 8], T.float32(0.0))
