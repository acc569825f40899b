from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer(("n", "m"), "float32"),
            B: T.Buffer(("n", "m"), "float32"),
            C: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0.0))

    @R.function
    def main(x: R.Tensor(("n", "m"), "float32")) -> R.Tensor(("n", "m"), "float32"):
        with R.dataflow():
            left = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((n, m), "float32"))
            right = R.call_dps_packed("demo.negate", (x,), out_sinfo=R.Tensor((n, m), "float32"))
            joined = R.call_tir(cls.add, (left, right), out_sinfo=R.Tensor((n, m), "float32"))
            R.output(joined)
        return joined
