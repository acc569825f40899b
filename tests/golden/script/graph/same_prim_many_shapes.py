from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0.0))

    @R.function
    def main(a: R.Tensor(("p", "q"), "float32"),
             b: R.Tensor(("q", "p"), "float32"),
             c: R.Tensor((4, 8), "float32")) -> R.Tuple(
            R.Tensor(("p", "q"), "float32"), R.Tensor(("q", "p"), "float32"),
            R.Tensor((4, 8), "float32")):
        with R.dataflow():
            ra = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((p, q), "float32"))
            rb = R.call_tir(cls.relu, (b,), out_sinfo=R.Tensor((q, p), "float32"))
            rc = R.call_tir(cls.relu, (c,), out_sinfo=R.Tensor((4, 8), "float32"))
            R.output(ra, rb, rc)
        return (ra, rb, rc)
