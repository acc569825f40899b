from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer(("n", 32), "float32"),
                B: T.Buffer((32, 24), "float32"),
                D: T.Buffer(("n", 24), "float32")):
        T.func_attr({"scheduled": True})
        Y = T.alloc_buffer((n, 24), "float32")
        for i, j in T.grid(n, 24):
            with T.block("Y_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.float32(0.0)
        for i, j, r in T.grid(n, 24, 32):
            with T.block("Y"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                T.reads(Y[vi, vj], A[vi, vr], B[vr, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = Y[vi, vj] + A[vi, vr] * B[vr, vj]
        for i, j in T.grid(n, 24):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
