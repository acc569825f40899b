from pyir.script import ir as I, tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def bias_relu(A: T.Buffer(("n", 64), "float32"),
                  bias: T.Buffer((64,), "float32"),
                  D: T.Buffer(("n", 64), "float32")):
        T.func_attr({"scheduled": True})
        for i, j in T.grid(n, 64):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], bias[vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(A[vi, vj] + bias[vj], T.float32(0.0)) * 3.0
