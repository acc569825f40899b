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
    def main(x: R.Tensor(("n", "m"), "float32"),
             y: R.Tensor(("n * 2", "m + 1"), "float32")) -> R.Tensor(("n * 2", "m + 1"), "float32"):
        with R.dataflow():
            padded = R.call_dps_packed("demo.pad", (x,),
                                       out_sinfo=R.Tensor((n * 2, m + 1), "float32"))
            summed = R.add(padded, y)
            out = R.call_tir(cls.relu, (summed,), out_sinfo=R.Tensor((n * 2, m + 1), "float32"))
            tiles = R.call_dps_packed("demo.tile", (x,),
                                      out_sinfo=R.Tensor((n // 4, (m - 1) % 8, n * (m + 2)), "float32"))
            R.output(out, tiles)
        return out
