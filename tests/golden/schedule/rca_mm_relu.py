from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer(("n", 32), "float32"),
                B: T.Buffer((32, 24), "float32"),
                D: T.Buffer(("n", 24), "float32")):
        T.func_attr({"scheduled": True})
        Y = T.alloc_buffer((n, 24), "float32")
        for i_0 in T.serial((n + 3) // 4, annotations={"pyir.split_tail": 4}):
            for i_1, j, r in T.grid(4, 24, 32):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i_0 * 4 + i_1)
                    vj = T.axis.spatial(24, j)
                    vr = T.axis.reduce(32, r)
                    T.where(i_0 * 4 + i_1 < n)
                    T.reads(Y[vi, vj], A[vi, vr], B[vr, vj])
                    T.writes(Y[vi, vj])
                    with T.init():
                        Y[vi, vj] = T.float32(0.0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vr] * B[vr, vj]
            for ax0, ax1 in T.grid(4, 24):
                with T.block("D"):
                    vi = T.axis.spatial(n, i_0 * 4 + ax0)
                    vj = T.axis.spatial(24, ax1)
                    T.where(i_0 * 4 + ax0 < n)
                    T.reads(Y[vi, vj])
                    T.writes(D[vi, vj])
                    D[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
