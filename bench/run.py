"""pyir benchmarks against numpy: prints a rich table and writes JSON under bench/results/
(a timestamped file and latest.json) so a figure can be compared between versions.

Measured: elementwise add and log of 10^7 float32, softmax and row max 4096x1024, a
512x512 float32 matmul and ones of 14 and 28 rows times 4096x4096 (all with the default
schedule) against numpy on the same arrays, the parallel-loop launch overhead (back to
back, with the threads sharing one CPU, and waking sleeping workers), the build time of
one kernel cold and on a cache hit, and the time of ``import pyir`` in a fresh process.
A measurement that fails is reported as an error row, and the others still run.

The kernels are built with the IR node API, the matmuls in the script language.
Run: ``python bench/run.py``.
"""

import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import pyir
from pyir.ir import (
    Binary,
    Block,
    BlockRealize,
    Buffer,
    BufferStore,
    Call,
    FloatImm,
    For,
    IntImm,
    IterVar,
    PrimFunc,
    Var,
    seq,
)
from pyir.runtime import cache
from pyir.runtime.benchmark import time_calls
from pyir.script import from_source

RESULTS = pathlib.Path(__file__).parent / "results"
TRUE = IntImm(1, "bool")
FLOAT32_LOWEST = -3.4028234663852886e38


# ---------------------------------------------------------------- kernels
def _block(name, iters, body, init=None):
    """Loops over ``iters`` ((extent, "S"|"R") pairs) around a block; ``body(*vs)`` and
    ``init(*vs)`` build its statements from the block iterators."""
    loop_vars = [Var(f"{name}_l{k}") for k in range(len(iters))]
    ivs = tuple(IterVar(Var(f"v{name}{k}"), ext, kind) for k, (ext, kind) in enumerate(iters))
    vs = [iv.var for iv in ivs]
    stmt = BlockRealize(tuple(loop_vars), TRUE,
                        Block(name, ivs, (), (), body(*vs), init(*vs) if init else None))
    for v, (ext, _) in reversed(list(zip(loop_vars, iters))):
        stmt = For(v, IntImm(0), ext, "serial", stmt)
    return stmt


def elementwise_add():
    """C[i] = A[i] + B[i] over a symbolic n."""
    n = Var("n")
    A, B, C = (Buffer(x, (n,), "float32") for x in "ABC")
    body = _block("C", [(n, "S")], lambda i: BufferStore(C, A[i] + B[i], (i,)))
    return PrimFunc("add", (A, B, C), body)


def softmax():
    """Y = softmax(X) along rows: row max, exp(X - max) into Y, row sum, divide."""
    n, m = Var("n"), Var("m")
    X, Y = Buffer("X", (n, m), "float32"), Buffer("Y", (n, m), "float32")
    M, S = Buffer("M", (n,), "float32"), Buffer("S", (n,), "float32")
    row_max = _block("M", [(n, "S"), (m, "R")],
                     lambda i, j: BufferStore(M, Binary("max", M[i], X[i, j]), (i,)),
                     lambda i, j: BufferStore(M, FloatImm(FLOAT32_LOWEST), (i,)))
    exp = _block("E", [(n, "S"), (m, "S")],
                 lambda i, j: BufferStore(Y, Call("float32", "exp", (X[i, j] - M[i],)), (i, j)))
    row_sum = _block("S", [(n, "S"), (m, "R")],
                     lambda i, j: BufferStore(S, S[i] + Y[i, j], (i,)),
                     lambda i, j: BufferStore(S, FloatImm(0.0), (i,)))
    divide = _block("Y", [(n, "S"), (m, "S")],
                    lambda i, j: BufferStore(Y, Binary("div", Y[i, j], S[i]), (i, j)))
    root = BlockRealize((), TRUE, Block("root", (), (), (), seq(row_max, exp, row_sum, divide),
                                        alloc_buffers=(M, S)))
    return PrimFunc("softmax", (X, Y), root)


def unary(op):
    """Y[i] = op(X[i]) over a symbolic n."""
    n = Var("n")
    X, Y = Buffer("X", (n,), "float32"), Buffer("Y", (n,), "float32")
    body = _block("Y", [(n, "S")], lambda i: BufferStore(Y, Call("float32", op, (X[i],)), (i,)))
    return PrimFunc(op, (X, Y), body)


def row_max():
    """M[i] = max over j of X[i, j], from X[i, 0] (no identity, as R.max)."""
    n, m = Var("n"), Var("m")
    X, M = Buffer("X", (n, m), "float32"), Buffer("M", (n,), "float32")
    body = _block("M", [(n, "S"), (m, "R")],
                  lambda i, j: BufferStore(M, Binary("max", M[i], X[i, j]), (i,)),
                  lambda i, j: BufferStore(M, X[i, IntImm(0)], (i,)))
    return PrimFunc("row_max", (X, M), body)


MATMUL_SRC = """
from pyir.script import tensor as T

@T.prim_func
def matmul(A: T.Buffer(({n}, {k}), "float32"), B: T.Buffer(({k}, {m}), "float32"),
           C: T.Buffer(({n}, {m}), "float32")):
    for i, j, r in T.grid({ln}, {lm}, {lk}):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
"""


def matmul(n=None, k=None, m=None):
    """C = A @ B over n, k, m, each a constant or (None) symbolic, in the script language:
    the parser declares the block's reads and writes, by which the default schedule knows
    a matmul and gives it the register tile (`pyir.transform.default_schedule`)."""
    dims = {name: f'"{name}"' if x is None else str(x) for name, x in
            (("n", n), ("k", k), ("m", m))}
    return from_source(MATMUL_SRC.format(**dims, **{"l" + name: d.strip('"')
                                                    for name, d in dims.items()}))


def numpy_softmax(x, out):
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    np.divide(out, out.sum(axis=1, keepdims=True), out=out)


# ---------------------------------------------------------------- measurements
#: Seconds to wait before timing pyir: OpenBLAS's threads spin on for a while after a call
#: (bench/matmul.py's `timed_builds` measured it), and a parallel kernel timed then shares
#: the cores with them.
BLAS_SPIN_S = 0.2


def versus_numpy(func, name, args, reference, check):
    """Median times of ``func`` (its function ``name`` on ``args``) and of numpy's
    ``reference()``, which computes the result that ``check()`` then compares pyir's with.
    pyir is timed first, `BLAS_SPIN_S` after the last numpy call of the benchmarks before."""
    lib = pyir.build(func)
    time.sleep(BLAS_SPIN_S)
    ours = lib.benchmark(name, *args).median
    theirs = time_calls("numpy", reference, repeat=10).median
    check()
    return {"pyir_s": ours, "numpy_s": theirs, "speedup": theirs / ours}


def bench_elementwise():
    rng = np.random.default_rng(0)
    a, b = rng.random(10**7, np.float32), rng.random(10**7, np.float32)
    c, expected = np.empty_like(a), a + b
    return versus_numpy(elementwise_add(), "add", (a, b, c), lambda: np.add(a, b, out=expected),
                        lambda: np.testing.assert_array_equal(c, a + b))


def bench_softmax():
    x = np.random.default_rng(1).standard_normal((4096, 1024), np.float32)
    y, expected = np.empty_like(x), np.empty_like(x)
    numpy_softmax(x, expected)
    return versus_numpy(softmax(), "softmax", (x, y), lambda: numpy_softmax(x, expected),
                        lambda: np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-7))


def bench_log():
    a = np.random.default_rng(2).random(10**7, np.float32) + np.float32(0.01)
    y, expected = np.empty_like(a), np.log(a)
    return versus_numpy(unary("log"), "log", (a, y), lambda: np.log(a, out=expected),
                        lambda: np.testing.assert_allclose(y, expected, rtol=1e-6))


def bench_row_max():
    x = np.random.default_rng(3).standard_normal((4096, 1024), np.float32)
    m, expected = np.empty(4096, np.float32), x.max(axis=1)
    return versus_numpy(row_max(), "row_max", (x, m), lambda: np.max(x, axis=1, out=expected),
                        lambda: np.testing.assert_array_equal(m, expected))


def bench_matmul():
    rng = np.random.default_rng(4)
    a, b = rng.random((512, 512), np.float32), rng.random((512, 512), np.float32)
    c, expected = np.empty((512, 512), np.float32), np.empty((512, 512), np.float32)
    return versus_numpy(matmul(), "matmul", (a, b, c), lambda: np.matmul(a, b, out=expected),
                        lambda: np.testing.assert_allclose(c, expected, rtol=1e-5))


def bench_few_rows(rows):
    """``rows`` rows times a 4096 x 4096 matrix (activations times weights): the default
    schedule reads B in place in one or two tiles of up to 14 rows, A packed there
    (`gemm.reads_b_in_place`, `gemm.packs_a`)."""
    rng = np.random.default_rng(5)
    a, b = rng.random((rows, 4096), np.float32), rng.random((4096, 4096), np.float32)
    c, expected = np.empty((rows, 4096), np.float32), np.empty((rows, 4096), np.float32)
    return versus_numpy(matmul(rows, 4096, 4096), "matmul", (a, b, c),
                        lambda: np.matmul(a, b, out=expected),
                        lambda: np.testing.assert_allclose(c, expected, rtol=1e-4))


def bench_launch():
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from launch_overhead import measure
    return measure()


def bench_build():
    pyir.build(elementwise_add(), use_cache=False)  # loads llvmlite and the thread pool
    cold = []
    for _ in range(5):
        cache.clear()
        func = elementwise_add()
        start = time.perf_counter()
        pyir.build(func)
        cold.append(time.perf_counter() - start)
    hits = []
    for _ in range(50):
        start = time.perf_counter()
        pyir.build(func)
        hits.append(time.perf_counter() - start)
    copy_hits = []
    for _ in range(20):
        copy = elementwise_add()
        start = time.perf_counter()
        pyir.build(copy)
        copy_hits.append(time.perf_counter() - start)
    return {"cold_s": statistics.median(cold), "hit_s": statistics.median(hits),
            "hit_equal_copy_s": statistics.median(copy_hits)}


def bench_import(runs=7):
    code = "import time; t = time.perf_counter(); import pyir; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(runs)]
    return {"median_s": statistics.median(times), "min_s": min(times), "runs": runs}


def machine_note():
    cpu = platform.processor()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "pyir": pyir.__version__,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "PYIR_NUM_THREADS": os.environ.get("PYIR_NUM_THREADS")}


BENCHMARKS = {"elementwise": bench_elementwise, "log": bench_log, "softmax": bench_softmax,
              "row_max": bench_row_max, "matmul": bench_matmul,
              "few_rows": lambda: bench_few_rows(14), "few_rows_28": lambda: bench_few_rows(28),
              "launch": bench_launch, "build": bench_build, "import": bench_import}


def run_all():
    results = {}
    for name, fn in BENCHMARKS.items():
        try:
            results[name] = fn()
        except Exception as e:  # noqa: BLE001 -- a failed benchmark is a row of the report
            results[name] = {"error": f"{type(e).__name__}: {e}"}
    return results


# ---------------------------------------------------------------- report
def rows(results):
    """(benchmark, measured, numpy, figure, target, met) per table row."""
    def ms(s):
        return f"{s * 1e3:.3f} ms"

    out = []
    for key, label in (("elementwise", "add 10^7 float32"), ("log", "log 10^7 float32"),
                       ("softmax", "softmax 4096x1024"), ("row_max", "row max 4096x1024"),
                       ("matmul", "matmul 512^3 float32"),
                       ("few_rows", "matmul 14x4096 @ 4096x4096 float32"),
                       ("few_rows_28", "matmul 28x4096 @ 4096x4096 float32")):
        r = results[key]
        if "error" in r:
            out.append((label, r["error"], "", "", "≥ 1.0x numpy", False))
        else:
            out.append((label, ms(r["pyir_s"]), ms(r["numpy_s"]), f"{r['speedup']:.2f}x",
                        "≥ 1.0x numpy", r["speedup"] >= 1.0))
    r = results["launch"]
    out.append(("parallel launch, back to back",
                r.get("error") or f"{r['median_us']:.2f} µs median", "",
                f"{r.get('threads', '?')} threads", "≤ 5 µs", r.get("median_us", 1e9) <= 5))
    if "error" not in r:
        c = r["co_located"]
        out.append(("parallel launch, threads on one CPU", f"{c['median_us']:.2f} µs median",
                    "", f"min {c['min_us']:.2f} µs", "≤ 5 µs", c["median_us"] <= 5))
        w = r["wake"]
        out.append(("parallel launch, waking sleepers", f"{w['median_us']:.1f} µs median", "",
                    f"IQR {w['iqr_us']:.1f} µs", "(reported)", True))
    r = results["build"]
    if "error" in r:
        out.append(("build", r["error"], "", "", "", False))
    else:
        out.append(("build, cold", ms(r["cold_s"]), "", "", "", True))
        out.append(("build, cache hit", f"{r['hit_s'] * 1e6:.1f} µs", "",
                    f"equal copy {r['hit_equal_copy_s'] * 1e6:.0f} µs", "≤ 1 ms",
                    max(r["hit_s"], r["hit_equal_copy_s"]) <= 1e-3))
    r = results["import"]
    out.append(("import pyir", r.get("error") or f"{r['median_s'] * 1e3:.0f} ms median", "", "",
                "≤ 0.3 s", r.get("median_s", 1e9) <= 0.3))
    return out


def print_table(results, machine):
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f"pyir benchmarks — {machine['cpu']}, {machine['cores']} cores, numpy "
                        f"{machine['numpy']}, OPENBLAS_CORETYPE={machine['OPENBLAS_CORETYPE']}")
    for col in ("benchmark", "pyir", "numpy", "figure", "target", "met"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for label, measured, numpy_time, figure, target, met in rows(results):
        table.add_row(label, measured, numpy_time, figure, target,
                      "[green]yes[/]" if met else "[red]no[/]")
    Console().print(table)


def main():
    machine = machine_note()
    results = run_all()
    print_table(results, machine)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report = {"timestamp": stamp, "machine": machine, "results": results}
    RESULTS.mkdir(exist_ok=True)
    text = json.dumps(report, indent=2)
    (RESULTS / f"{stamp}.json").write_text(text)
    (RESULTS / "latest.json").write_text(text)
    print(f"wrote {RESULTS / (stamp + '.json')} and latest.json")


if __name__ == "__main__":
    main()
