from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def split_sign(X: T.Buffer(("n",), "float32"),
                   P: T.Buffer(("n",), "float32"),
                   N: T.Buffer(("n",), "float32")):
        for i in range(n):
            with T.block("PN"):
                vi = T.axis.remap("S", [i])
                T.reads(X[vi])
                T.writes(P[vi], N[vi])
                P[vi] = T.max(X[vi], T.float32(0.0))
                N[vi] = T.min(X[vi], T.float32(0.0))

    @R.function
    def main(pair: R.Tuple(R.Tensor(("n",), "float32"), R.Tensor(("m",), "float32"))) -> R.Tuple(
            R.Tensor(("n",), "float32"), R.Tensor(("n",), "float32"), R.Tensor(("m",), "float32")):
        with R.dataflow():
            first = pair[0]
            parts = R.call_tir(cls.split_sign, (first,),
                               out_sinfo=[R.Tensor((n,), "float32"), R.Tensor((n,), "float32")])
            pos = parts[0]
            neg = parts[1]
            R.output(pos, neg)
        return (pos, neg, pair[1])
