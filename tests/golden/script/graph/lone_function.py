from pyir.script import graph as R


@R.function
def lone(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    with R.dataflow():
        y = R.nn.softmax(x)
        R.output(y)
    return y
