from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def double(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = X[vi, vj] * 2.0

    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32")) -> R.Tensor(("a", "b"), "float32"):
        y = R.match_cast(x, R.Tensor(("a", "b"), "float32"))
        with R.dataflow():
            z = R.call_tir(cls.double, (y,), out_sinfo=R.Tensor((a, b), "float32"))
            flat = R.call_dps_packed("demo.flatten", (z,),
                                     out_sinfo=R.Tensor(ndim=1, dtype="float32"))
            w = R.match_cast(flat, R.Tensor(("c",), "float32"))
            R.output(z, w)
        return z
