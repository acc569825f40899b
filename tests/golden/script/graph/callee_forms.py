from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        with R.dataflow():
            a = R.call_tir(cls.neg, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_tir(cls.neg, (a,), out_sinfo=R.Tensor((n,), "float32"))
            c = R.call_tir(cls.neg, (b,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(c)
        return c

    @T.prim_func
    def neg(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi])
                T.writes(Y[vi])
                Y[vi] = 0.0 - X[vi]
