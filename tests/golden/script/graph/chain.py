from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def add1(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi])
                T.writes(Y[vi])
                Y[vi] = X[vi] + 1.0

    @T.prim_func
    def exp(X: T.Buffer(("n",), "float32"), Y: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi])
                T.writes(Y[vi])
                Y[vi] = T.exp(X[vi])

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        with R.dataflow():
            a = R.call_tir(cls.add1, (x,), out_sinfo=R.Tensor((n,), "float32"))
            b = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((n,), "float32"))
            c = R.call_tir(cls.add1, (b,), out_sinfo=R.Tensor((n,), "float32"))
            d = R.call_tir(cls.exp, (c,), out_sinfo=R.Tensor((n,), "float32"))
            R.output(d)
        return d
