from pyir.script import ir as I, graph as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32"),
             y: R.Tensor(dtype="float16")) -> R.Tuple(
            R.Tensor(ndim=2, dtype="float32"), R.Tensor(dtype="float16")):
        with R.dataflow():
            z = R.call_dps_packed("demo.transpose", (x,),
                                  out_sinfo=R.Tensor(ndim=2, dtype="float32"))
            s = R.add(z, x)
            r = R.nn.relu(y)
            R.output(s, r)
        return (s, r)
