from pyir.script import ir as I, graph as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), "float32"),
             s: R.Shape(["k", 3]),
             p: R.Prim("int64"),
             anything: R.Object) -> R.Tuple(R.Tensor(("n * m", "k", 3), "float32"), R.Prim("bool"),
                                            R.Object, R.Object, R.Shape(["k", 3]), R.Prim("int64")):
        shape = R.shape([n * m, k, 3])
        raw = R.call_packed("demo.reshape", x, shape, sinfo_args=R.Tensor(ndim=3, dtype="float32"))
        y: R.Tensor((n * m, k, 3), "float32") = raw
        count = R.prim_value(n * m + 1)
        flag = R.call_packed("demo.check", y, count, 2, 1.5, True, R.prim_value(7, "int32"),
                             R.prim_value(0.25, "float64"), sinfo_args=R.Prim("bool"))
        loose: R.Object = y
        return (y, flag, loose, anything, s, p)
