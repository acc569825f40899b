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
    scheduled = schedule_matmul(console)
    run_graph(console, scheduled)


def schedule_matmul(console):
    """Schedule ``matmul`` (split, reorder, parallel, vectorize), show the trace, check the
    scheduled kernel against numpy and time it against the loop nest as written and the
    build's default schedule (for a matmul, `pyir.schedule.gemm`'s register tile)."""
    from rich.rule import Rule
    from rich.table import Table

    from pyir.schedule import Schedule

    console.print(Rule("matmul scheduled"))
    sch = Schedule(Module)
    blk = sch.get_block("C", func_name="matmul")
    i, j, k = sch.get_loops(blk)
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, j0, k, j1)
    sch.parallel(i)
    sch.vectorize(j1)
    console.print(str(sch.trace))
    libs = {"loops as written": pyir.build(Module.without("main"), default_schedule=False),
            "scheduled above": pyir.build(sch.mod.without("main")),
            "default schedule": pyir.build(Module.without("main"))}
    rng = np.random.default_rng(1)
    a = rng.random((256, 256), dtype=np.float32)
    b = rng.random((256, 256), dtype=np.float32)
    c = np.empty((256, 256), np.float32)
    for lib in libs.values():
        lib["matmul"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    table = Table("matmul 256³ float32", "median", "GFLOPS")
    for name, lib in libs.items():
        t = lib.benchmark("matmul", a, b, c).median
        table.add_row(name, f"{t * 1e3:.2f} ms", f"{2 * 256 ** 3 / t / 1e9:.1f}")
    t = _per_call_us(lambda: a @ b, number=20) * 1e-6
    table.add_row("numpy a @ b", f"{t * 1e3:.2f} ms", f"{2 * 256 ** 3 / t / 1e9:.1f}")
    console.print(table)
    console.print("[green]the scheduled matmul matches numpy (and so do the others)[/green]")
    return sch.mod


def run_graph(console, mod):
    """Build ``mod``, run ``main`` on random inputs, check it against numpy, time it."""
    import time

    from rich.rule import Rule
    from rich.table import Table

    console.print(Rule("built, run and checked against numpy"))
    pyir.ffi.register_func("demo.scale2", scale2, override=True)
    start = time.perf_counter()
    lib = pyir.build(mod)
    build_ms = (time.perf_counter() - start) * 1e3
    rng = np.random.default_rng(0)
    x = rng.random((64, 32), dtype=np.float32)
    w = rng.random((32, 16), dtype=np.float32)
    np.testing.assert_allclose(lib["main"](x, w), 2 * np.maximum(x @ w, 0), rtol=1e-5)
    table = Table("what", "time")
    table.add_row("pyir.build(scheduled module)", f"{build_ms:.1f} ms")
    for name, fn in [("lib['main'](x, w)", lambda: lib["main"](x, w)),
                     ("numpy 2 * max(x @ w, 0)", lambda: 2 * np.maximum(x @ w, 0))]:
        table.add_row(name, f"{_per_call_us(fn):.2f} µs")
    console.print(table)
    console.print("[green]lib['main'](x, w) matches numpy[/green]")


def _per_call_us(fn, number=2000, repeat=5):
    import timeit
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


if __name__ == "__main__":
    main()
