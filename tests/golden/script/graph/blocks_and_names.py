from pyir.script import ir as I, graph as R


@I.ir_module
class Module:
    @R.function
    def helper(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        x_1 = R.call_packed("demo.prepare", x, sinfo_args=R.Tensor((8,), "float32"))
        with R.dataflow():
            y = R.exp(x_1)
            R.output(y)
        x_2 = R.call_packed("demo.again", y, sinfo_args=R.Tensor((8,), "float32"))
        with R.dataflow():
            y2 = R.exp(x_2)
            z = R.add(y2, y)
            R.output(z)
        return z
