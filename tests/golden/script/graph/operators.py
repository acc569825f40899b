from pyir.script import ir as I, tensor as T, graph as R


@I.ir_module
class Module:
    @T.prim_func
    def bias(X: T.Buffer(("n", "m"), "float32"),
             B: T.Buffer(("m",), "float32"),
             Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj], B[vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = X[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor(("b", "n", "k"), "float32"),
             w: R.Tensor(("k", "m"), "float32"),
             bias: R.Tensor(("m",), "float32"),
             scale: R.Tensor(("n", 1), "float32")) -> R.Tuple(
            R.Tensor(("b * n", "m"), "float32"), R.Tensor((1, "n", 1), "float32")):
        with R.dataflow():
            h = R.matmul(x, w)
            h2 = R.add(h, bias)
            h3 = R.multiply(h2, scale)
            act = R.nn.relu(h3)
            probs = R.nn.softmax(act, axis=1)
            total = R.sum(probs, axis=(0, 2), keepdims=True)
            diff = R.subtract(R.exp(probs), R.divide(probs, total))
            flat = R.call_dps_packed("demo.merge_batch", (diff,),
                                     out_sinfo=R.Tensor((b * n, m), "float32"))
            out = R.call_tir(cls.bias, (flat, bias), out_sinfo=R.Tensor((b * n, m), "float32"))
            R.output(total, out)
        return (out, R.maximum(total, R.minimum(total, total)))
