"""The DESIGN.md example end to end: parse, print, schedule, build, check, time.

Run with ``python -m pyir``.
"""

import numpy as np

import pyir
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T


@I.ir_module
class Module:
    @T.prim_func
    def matmul(A: T.Buffer(("n", "k"), "float32"),
               B: T.Buffer(("k", "m"), "float32"),
               C: T.Buffer(("n", "m"), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]

    @T.prim_func
    def relu(X: T.Buffer(("n", "m"), "float32"), Y: T.Buffer(("n", "m"), "float32")):
        for i, j in T.grid(n, m):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n", "k"), "float32"),
             w: R.Tensor(("k", "m"), "float32")) -> R.Tensor(("n", "m"), "float32"):
        with R.dataflow():
            y = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, m), "float32"))
            z = R.call_tir(cls.relu, (y,), out_sinfo=R.Tensor((n, m), "float32"))
            out = R.call_dps_packed("demo.scale2", (z,), out_sinfo=R.Tensor((n, m), "float32"))
            R.output(out)
        return out


def scale2(x, out):
    """Destination-passing packed function: numpy views in, result written to ``out``."""
    np.multiply(x, 2, out=out)


def main():
    from rich.console import Console
    from rich.rule import Rule

    console = Console()
    console.print(Rule("the DESIGN.md module, parsed and printed back"))
    Module.show()
    again = pyir.script.from_source(Module.script())
    pyir.ir.assert_structural_equal(again, Module)
    console.print("[green]from_source(Module.script()) is structurally equal to Module[/green]")


if __name__ == "__main__":
    main()
