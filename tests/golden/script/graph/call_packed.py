from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def relu(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi])
                T.writes(Y[vi])
                Y[vi] = T.max(X[vi], T.float32(0.0))

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tuple(
            R.Tensor(("n",), "float32"), R.Prim("float32"),
            R.Tuple(R.Prim("float32"), R.Prim("float32"))):
        noisy = R.call_packed("demo.add_noise", x, 0.5, sinfo_args=R.Tensor((n,), "float32"))
        with R.dataflow():
            y = R.call_tir(cls.relu, (noisy,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(y)
        total = R.call_packed("demo.total", y, sinfo_args=R.Prim("float32"))
        both = R.call_packed("demo.minmax", y,
                             sinfo_args=R.Tuple(R.Prim("float32"), R.Prim("float32")))
        _ = R.call_packed("demo.log", y, total)
        return (y, total, both)
