"""fp32 matmul with the 7x32 register-tile, packed-B schedule written with pyir.schedule,
against numpy (and TVM when the optional ``peers`` extra is installed) in one run.

The schedule (`schedule_matmul`) is TVM's hand schedule for this kernel:

- B is packed by ``cache_read`` + ``transform_layout`` into panels ``[n/32, n, 32]`` so that
  the 32 columns a tile needs are contiguous for every k (the packing loop is parallel and
  vectorized);
- C is computed in 7 x 32 tiles: ``split`` i by 7 and j by 32, ``reorder`` to
  ``i0, j0, k, i1, j1``; the tile accumulates in a ``cache_write(..., "local")`` buffer
  written back after the k loop (``reverse_compute_at``), initialised by
  ``decompose_reduction``; i1 is unrolled and j1 vectorized (2 x 16 lanes), so the 14
  accumulators live in zmm registers;
- the outer row tiles run in parallel.

Variants: ``static`` (n = 1024 in the types) and ``symbolic`` (``n`` a shape variable),
2 threads (parallel outer tiles on the pool) and 1 thread (the same schedule without the
``parallel`` steps), and ``tensorized`` (the 7x32 update replaced by a hand-written LLVM IR
micro-kernel through ``sch.tensorize``). Every variant is checked against numpy at n = 1024
and n = 999 (partial tiles) before it is timed.

numpy is measured in this process (with the environment as it is, which on this machine
pins ``OPENBLAS_CORETYPE=Haswell``) and in a subprocess with ``OPENBLAS_CORETYPE`` and
``OPENBLAS_L2_SIZE`` unset (OpenBLAS's AVX-512 kernel), with 1 and 2 threads. A JIT'd
FMA-chain probe gives the machine's peak for the "90 % of peak" target.

TVM (the optional ``peers`` extra, ``apache-tvm``): ``bench/peers/tvm_matmul.py`` is TVM's
version of the same schedule (static n; TensorIR schedule, built for the host CPU), run in a
fresh subprocess per timing round with ``TVM_NUM_THREADS`` = 2 and 1 by the interpreter
given by ``--tvm-python`` (default: this one), and checked against numpy at n and n - 25.
When that interpreter cannot import tvm, the table says so and the rows are skipped.

Run: ``python bench/matmul.py [--n 1024] [--rounds 4] [--tvm-python PATH]``. Prints a rich
table and writes ``bench/results/matmul-<stamp>.json`` and ``bench/results/matmul-latest.json``.
"""

import argparse
import ctypes
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
from pyir.schedule import Schedule
from pyir.script import from_source

import pyir

RESULTS = pathlib.Path(__file__).parent / "results"
TILE_I, TILE_J = 7, 32

MATMUL_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    for i, j, k in T.grid({m}, {m}, {m}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def matmul_func(n=None):
    """The matmul prim function: ``n`` an int for static shapes, None for symbolic ``n``."""
    if n is None:
        return from_source(MATMUL_SRC.format(n='"n"', m="n"))
    return from_source(MATMUL_SRC.format(n=n, m=n))


# ---------------------------------------------------------------- the schedule
def schedule_matmul(func, parallel=True, tensorize=None):
    """The 7x32 register-tile, packed-B schedule (see the module docstring). With
    ``tensorize`` (a registered tensor intrinsic name) the 7x32 update of one k step is
    replaced by that micro-kernel."""
    sch = Schedule(func)
    c = sch.get_block("C")
    # Pack B into 32-column panels: B_global[j // 32, k, j % 32].
    bp = sch.cache_read(c, "B", "global")
    sch.transform_layout(bp, ("write", 0), "k, j -> j // 32, k, j % 32")
    p0, p1 = sch.get_loops(bp)
    _, p11 = sch.split(p1, factors=[None, TILE_J])
    sch.vectorize(p11)
    if parallel:
        sch.parallel(p0)
    # 7x32 register tiles over (i, j), k innermost-but-two.
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, TILE_I])
    j0, j1 = sch.split(j, factors=[None, TILE_J])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0)
    init = sch.decompose_reduction(c, k)
    for blk in (init, cw):
        a, b = sch.get_loops(blk)[-2:]
        sch.unroll(a)
        sch.vectorize(b)
    if tensorize is not None:
        # The micro-kernel takes the tile with rows 32 apart: lay the accumulator out in
        # 7x32 tiles (lowering then shrinks it to one tile per (i0, j0), in registers).
        sch.transform_layout(cw, ("read", 0), "i, j -> i // 7, j // 32, i % 7, j % 32")
        sch.tensorize(i1, tensorize)
    else:
        sch.unroll(i1)
        sch.vectorize(j1)
    if parallel:
        sch.parallel(i0)
    return sch


# ---------------------------------------------------------------- a micro-kernel
#: The 7x32 update C[0:7, 0:32] += A[0:7, 0] * B[0, 0:32] for one k, as LLVM IR: the
#: accumulator tile is loaded, updated with 14 FMAs and stored back (after inlining,
#: SROA keeps it in registers across the k loop). Row strides: C 32, A ``lda``.
UKERNEL_IR = textwrap.dedent("""
    define internal void @pyir_ukernel_7x32(ptr noalias %c, ptr noalias %a, ptr noalias %b, i64 %lda) alwaysinline {
    entry:
      %b0 = load <16 x float>, ptr %b, align 64
      %bp1 = getelementptr float, ptr %b, i64 16
      %b1 = load <16 x float>, ptr %bp1, align 64
    """) + "".join(textwrap.dedent(f"""
      %ao{r} = mul i64 %lda, {r}
      %ap{r} = getelementptr float, ptr %a, i64 %ao{r}
      %as{r} = load float, ptr %ap{r}, align 4
      %ai{r} = insertelement <16 x float> poison, float %as{r}, i64 0
      %av{r} = shufflevector <16 x float> %ai{r}, <16 x float> poison, <16 x i32> zeroinitializer
      %cp{r}0 = getelementptr float, ptr %c, i64 {r * 32}
      %cp{r}1 = getelementptr float, ptr %c, i64 {r * 32 + 16}
      %c{r}0 = load <16 x float>, ptr %cp{r}0, align 4
      %c{r}1 = load <16 x float>, ptr %cp{r}1, align 4
      %d{r}0 = call <16 x float> @llvm.fma.v16f32(<16 x float> %av{r}, <16 x float> %b0, <16 x float> %c{r}0)
      %d{r}1 = call <16 x float> @llvm.fma.v16f32(<16 x float> %av{r}, <16 x float> %b1, <16 x float> %c{r}1)
      store <16 x float> %d{r}0, ptr %cp{r}0, align 4
      store <16 x float> %d{r}1, ptr %cp{r}1, align 4
    """) for r in range(TILE_I)) + textwrap.dedent("""
      ret void
    }
    declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
    """)

UKERNEL_DESC_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def ukernel_7x32_desc(C: T.Buffer((7, 32), "float32"), A: T.Buffer((7, "lda"), "float32"),
                      B: T.Buffer((1, 32), "float32")):
    for i, j in T.grid(7, 32):
        with T.block("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi, vj] + A[vi, 0] * B[0, vj]
'''

INTRIN = "bench.ukernel_7x32"


def register_ukernel():
    """Declare the LLVM IR micro-kernel with pyir.ffi.extern and register it as the
    tensor intrinsic ``bench.ukernel_7x32`` (idempotent)."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin
    from pyir.script import tensor as T

    @extern("bench.ukernel_7x32.impl", llvm_ir=UKERNEL_IR, override=True)
    def ukernel(C: T.Buffer((7, 32), "float32"), A: T.Buffer((7, "lda"), "float32"),
                B: T.Buffer((1, 32), "float32"), lda: T.int64): ...

    register_tensor_intrin(INTRIN, from_source(UKERNEL_DESC_SRC), "bench.ukernel_7x32.impl",
                           override=True)
    return INTRIN


# ---------------------------------------------------------------- measurement
def gflops(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e9


def check(lib, name, n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    lib[name](a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.max(np.abs(c - ref) / np.maximum(np.abs(ref), 1)))
    if not err < 1e-4:
        raise AssertionError(f"{name} at n={n}: max relative error {err:.2e}")
    return err


def time_runs(fn, args, min_time=0.25, repeats=7):
    """``repeats`` timings (seconds per call, each a mean over enough calls to last
    ``min_time / repeats``), after a warm-up call."""
    fn(*args)
    t0 = time.perf_counter()
    fn(*args)
    one = max(time.perf_counter() - t0, 1e-6)
    number = max(1, int(min_time / repeats / one))
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        runs.append((time.perf_counter() - t0) / number)
    return runs


def summarise(runs, n):
    runs = sorted(runs)
    med = statistics.median(runs)
    return {"median_s": med, "min_s": runs[0], "max_s": runs[-1], "runs": len(runs),
            "gflops": gflops(n, med), "gflops_best": gflops(n, runs[0]),
            "gflops_range": [gflops(n, runs[-1]), gflops(n, runs[0])]}


def bench_variant(n, static, threads, tensorize=None):
    """Schedule + build (cold, timed), a cache-hit rebuild, checks at n and 999, timing."""
    func = matmul_func(n if static else None)
    t0 = time.perf_counter()
    sch = schedule_matmul(func, parallel=threads > 1, tensorize=tensorize)
    t1 = time.perf_counter()
    lib = pyir.build(sch.mod, opt_level="fast", use_cache=False)
    t2 = time.perf_counter()
    pyir.build(sch.mod, opt_level="fast")  # fills the cache
    t3 = time.perf_counter()
    pyir.build(sch.mod, opt_level="fast")
    rebuild = time.perf_counter() - t3
    t4 = time.perf_counter()
    again = schedule_matmul(func, parallel=threads > 1, tensorize=tensorize)
    pyir.build(again.mod, opt_level="fast")
    replay_rebuild = time.perf_counter() - t4
    errors = {n: check(lib, "matmul", n)}
    tail = 999 if n != 999 else 1000
    if static:
        tail_lib = pyir.build(schedule_matmul(matmul_func(tail), parallel=threads > 1,
                                              tensorize=tensorize).mod, opt_level="fast")
        errors[tail] = check(tail_lib, "matmul", tail)
    else:
        errors[tail] = check(lib, "matmul", tail)
    info = {"schedule_s": t1 - t0, "build_s": t2 - t1, "schedule_build_s": t2 - t0,
            "rebuild_s": rebuild, "schedule_and_rebuild_s": replay_rebuild,
            "max_rel_error": {str(k): v for k, v in errors.items()}}
    return lib, info


NUMPY_CHILD = textwrap.dedent("""
    import json, statistics, sys, time
    import numpy as np
    n = int(sys.argv[1])
    rng = np.random.default_rng(1)
    a = rng.random((n, n), dtype=np.float32); b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(4):
            np.matmul(a, b, out=c)
        runs.append((time.perf_counter() - t0) / 4)
    print(json.dumps(runs))
""")


def numpy_runs(n, threads, unpinned):
    """numpy matmul timings from a subprocess with ``threads`` OpenBLAS threads;
    ``unpinned`` unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (OpenBLAS then picks its
    AVX-512 kernel)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    if unpinned:
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run([sys.executable, "-c", NUMPY_CHILD, str(n)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


FMA_PROBE_IR = textwrap.dedent("""
    define i64 @fma_probe(i64 %iters) {
    entry:
      br label %loop
    loop:
      %i = phi i64 [ 0, %entry ], [ %next, %loop ]
    """) + "".join(
    f"  %acc{k} = phi <16 x float> [ <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, "
    "float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, "
    f"float 1.0, float 1.0, float 1.0>, %entry ], [ %new{k}, %loop ]\n" for k in range(12)) + \
    "".join(f"  %new{k} = call <16 x float> @llvm.fma.v16f32(<16 x float> %acc{k}, "
            "<16 x float> " + "<" + ", ".join(["float 5.000000e-01"] * 16) + ">, "
            f"<16 x float> %acc{k})\n" for k in range(12)) + textwrap.dedent("""
      %next = add i64 %i, 1
      %done = icmp eq i64 %next, %iters
      br i1 %done, label %exit, label %loop
    exit:
    """) + "".join(f"  %e{k} = extractelement <16 x float> %new{k}, i64 0\n" for k in range(12)) + \
    "  %s = fadd float %e0, %e11\n  %r = fptosi float %s to i64\n  ret i64 %r\n}\n" \
    "declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)\n"


def bench_fma_probe(threads_list=(1, 2), iters=20_000_000):
    """Peak fp32 GFLOPS of 12 independent FMA chains of 16 lanes (a JIT'd loop), run on 1
    and 2 Python threads (ctypes releases the GIL)."""
    import llvmlite.binding as llvm

    from pyir.codegen.target import Target
    target = Target.from_string("llvm")
    tm = target.create_target_machine()
    mod = llvm.parse_assembly(FMA_PROBE_IR)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("fma_probe"))
    flop = 12 * 16 * 2 * iters
    out = {}
    for threads in threads_list:
        runs = []
        for _ in range(5):
            ts = [threading.Thread(target=fn, args=(iters,)) for _ in range(threads)]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            runs.append(time.perf_counter() - t0)
        out[str(threads)] = {"gflops": threads * flop / min(runs) / 1e9,
                             "gflops_median": threads * flop / statistics.median(runs) / 1e9}
    out["_engine"] = engine  # keep alive until the caller drops the dict
    return out


TVM_SCRIPT = pathlib.Path(__file__).parent / "peers" / "tvm_matmul.py"


def tvm_version(python):
    """TVM's version as seen by ``python``, or None with the reason it is not importable."""
    try:
        probe = subprocess.run([python, "-c", "import tvm; print(tvm.__version__)"],
                               capture_output=True, text=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cannot run {python}: {e}"
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return None, (f"apache-tvm is not importable by {python} (optional extra 'peers'; "
                      f"pass --tvm-python): {last[:80]}")
    return probe.stdout.strip().splitlines()[-1], None


def tvm_run(n, python, threads, tail=True):
    """One run of bench/peers/tvm_matmul.py (TVM's version of the same schedule, static n)
    in a subprocess with ``TVM_NUM_THREADS=threads``: build, check against numpy (also at
    n - 25 with ``tail``), time. Returns its JSON report."""
    env = dict(os.environ, TVM_NUM_THREADS=str(threads))
    cmd = [python, str(TVM_SCRIPT), "--n", str(n), "--threads", str(threads)]
    if not tail:
        cmd.append("--no-tail")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False,
                          timeout=600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"{TVM_SCRIPT.name} failed: {last[:200]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tvm_timed(n, python, threads, row):
    """A callable for the timing rounds: each call is a fresh TVM subprocess (build, check,
    time); the build times and the first run's checks are collected in ``row``."""
    def once():
        first = "max_rel_error" not in row
        rep = tvm_run(n, python, threads, tail=first)
        if first:
            row.update({"max_rel_error": rep["max_rel_error"], "target": rep["target"],
                        "tvm_version": rep["tvm_version"], "parallel": rep["parallel"],
                        "timer": rep["timer"]})
        for k in ("schedule_s", "compile_s", "load_s"):
            row.setdefault(f"{k[:-2]}_runs_s", []).append(rep[k])
        return rep["runs"]
    return once


def finish_tvm_row(row):
    """Median schedule / compile / load times over the rounds; ``schedule_build_s`` (the
    table's sched+build column) is schedule + compile + load of the shared library, which
    is what pyir.build's time includes too (it returns a callable module)."""
    if "schedule_runs_s" not in row:
        return
    med = {k: statistics.median(row[f"{k}_runs_s"]) for k in ("schedule", "compile", "load")}
    row.update({f"{k}_s": v for k, v in med.items()})
    row["schedule_build_s"] = sum(med.values())


# ---------------------------------------------------------------- report
def run(n, rounds=4, tvm_python=sys.executable):
    """Build and check every variant, then time them all in ``rounds`` interleaved rounds
    (so that a busy spell on a shared machine hits every variant alike)."""
    results = {"n": n}
    timed = {}
    variants = [("pyir static 2T", True, 2, None), ("pyir symbolic 2T", False, 2, None),
                ("pyir static 1T", True, 1, None), ("pyir symbolic 1T", False, 1, None),
                ("pyir tensorized symbolic 2T", False, 2, "ukernel"),
                ("pyir tensorized symbolic 1T", False, 1, "ukernel")]
    rng = np.random.default_rng(1)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    for key, static, threads, tz in variants:
        try:
            intrin = register_ukernel() if tz else None
            lib, info = bench_variant(n, static, threads, tensorize=intrin)
            results[key] = info
            timed[key] = lambda lib=lib: time_runs(lib["matmul"], (a, b, c))
        except Exception as e:  # noqa: BLE001 -- a failed variant is a row of the report
            results[key] = {"error": f"{type(e).__name__}: {e}"}
    for threads in (2, 1):
        for unpinned in (True, False):
            key = f"numpy {'AVX-512 (unpinned)' if unpinned else 'as pinned'} {threads}T"
            results[key] = {}
            timed[key] = lambda t=threads, u=unpinned: numpy_runs(n, t, u)
    # TVM's version of the same schedule (static n), in a subprocess per round.
    version, why_not = tvm_version(tvm_python)
    tvm_rows = {}
    if version is None:
        tvm_info = {"skipped": why_not, "python": tvm_python}
    else:
        tvm_info = {"version": version, "python": tvm_python, "script": str(TVM_SCRIPT),
                    "rows": []}
        for threads in (2, 1):
            key = f"TVM {version} static {threads}T"
            tvm_rows[key] = results[key] = {}
            tvm_info["rows"].append(key)
            timed[key] = tvm_timed(n, tvm_python, threads, tvm_rows[key])
    runs = {k: [] for k in timed}
    for _ in range(rounds):
        for key, fn in timed.items():
            try:
                runs[key].extend(fn())
            except Exception as e:  # noqa: BLE001
                results[key] = {"error": f"{type(e).__name__}: {e}"}
    for key, rs in runs.items():
        if rs and "error" not in results[key]:
            results[key].update(summarise(rs, n))
    for key, row in tvm_rows.items():
        finish_tvm_row(row)
    try:
        probe = bench_fma_probe()
        probe.pop("_engine")
        results["fma probe"] = probe
    except Exception as e:  # noqa: BLE001
        results["fma probe"] = {"error": f"{type(e).__name__}: {e}"}
    results["tvm"] = tvm_info
    return results


def targets(results):
    """(target, value, met) rows."""
    def g(key, which="gflops"):
        return results.get(key, {}).get(which) or 0

    rows = []
    for threads, peer, label in ((2, "numpy AVX-512 (unpinned) 2T", "2 threads ≥ 1.0x numpy AVX-512"),
                                 (1, "numpy AVX-512 (unpinned) 1T", "1 thread vs numpy AVX-512")):
        if g(peer):
            mine = [f"pyir static {threads}T", f"pyir symbolic {threads}T"]
            med = max(g(k) for k in mine) / g(peer)
            best = max(g(k, "gflops_best") for k in mine) / g(peer, "gflops_best")
            rows.append((label, f"{med:.2f}x median, {best:.2f}x best", med >= 1.0))
    tvm = results.get("tvm", {})
    for peer in tvm.get("rows", []):
        threads = int(peer.rsplit(" ", 1)[1].rstrip("T"))
        if g(peer):
            mine = [f"pyir static {threads}T", f"pyir symbolic {threads}T"]
            med = max(g(k) for k in mine) / g(peer)
            best = max(g(k, "gflops_best") for k in mine) / g(peer, "gflops_best")
            label = (f"{threads} thread{'s' if threads > 1 else ''} "
                     f"{'≥ 1.0x' if threads > 1 else 'vs'} TVM (same schedule)")
            rows.append((label, f"{med:.2f}x median, {best:.2f}x best",
                         med >= 1.0 if threads > 1 else None))
    if tvm.get("rows"):
        sb = [results[k]["schedule_build_s"] for k in tvm["rows"]
              if "schedule_build_s" in results.get(k, {})]
        mine = [results[k]["schedule_build_s"] for k in results
                if k.startswith("pyir") and "schedule_build_s" in results[k]]
        if sb and mine:
            half = min(sb) / 2
            rows.append(("schedule + build ≤ ½ TVM's build + load",
                         f"{max(mine) * 1e3:.0f} ms vs ½ × {min(sb) * 1e3:.0f} ms",
                         max(mine) <= half))
    probe = results.get("fma probe", {}).get("1", {})
    if probe.get("gflops"):
        mine = ["pyir static 1T", "pyir symbolic 1T"]
        med = max(g(k) for k in mine) / probe["gflops_median"]
        best = max(g(k, "gflops_best") for k in mine) / probe["gflops"]
        rows.append(("1 thread ≥ 90 % of FMA probe", f"{med:.0%} median, {best:.0%} best",
                     med >= 0.9))
    for threads in (1, 2):
        s, y = results.get(f"pyir static {threads}T", {}), results.get(f"pyir symbolic {threads}T", {})
        if "median_s" in s and "median_s" in y:
            ratio = y["median_s"] / s["median_s"]
            rows.append((f"symbolic ≤ 1.10x static time ({threads}T)", f"{ratio:.2f}x",
                         ratio <= 1.10))
    sb = [results[k]["schedule_build_s"] for k in results
          if k.startswith("pyir") and "schedule_build_s" in results[k]]
    if sb:
        rows.append(("schedule + build ≤ 35 ms", f"{min(sb) * 1e3:.0f}–{max(sb) * 1e3:.0f} ms",
                     max(sb) <= 0.035))
    rb = [results[k]["rebuild_s"] for k in results
          if k.startswith("pyir") and "rebuild_s" in results[k]]
    if rb:
        rows.append(("unchanged rebuild ≤ 1 ms", f"{max(rb) * 1e3:.2f} ms", max(rb) <= 1e-3))
    return rows


def print_table(results, machine):
    from rich.console import Console
    from rich.table import Table
    table = Table(title=f"fp32 matmul {results['n']}³ — {machine['cpu']}, {machine['cores']} "
                        f"cores, load {machine.get('load_1min') or 0:.1f} (medians; range = slowest–fastest run)")
    for col in ("variant", "GFLOPS (median)", "best", "range", "time", "sched+build", "rebuild",
                "max rel. error 1024 / 999"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for key, r in results.items():
        if key in ("n", "fma probe", "tvm") or not isinstance(r, dict):
            continue
        if "error" in r:
            table.add_row(key, f"[red]{r['error'][:90]}[/]", "", "", "", "", "", "")
            continue
        if "gflops" not in r:
            continue
        lo, hi = r.get("gflops_range", (0, 0))
        table.add_row(key, f"{r['gflops']:.0f}", f"{r['gflops_best']:.0f}", f"{lo:.0f}–{hi:.0f}",
                      f"{r['median_s'] * 1e3:.2f} ms",
                      f"{r['schedule_build_s'] * 1e3:.0f} ms" if "schedule_build_s" in r else "",
                      f"{r['rebuild_s'] * 1e6:.0f} µs" if "rebuild_s" in r else "",
                      " / ".join(f"{v:.0e}" for v in r.get("max_rel_error", {}).values()))
    probe = results.get("fma probe", {})
    for t in ("1", "2"):
        if t in probe:
            table.add_row(f"FMA probe {t}T (peak)", f"{probe[t]['gflops_median']:.0f}",
                          f"{probe[t]['gflops']:.0f}", "", "", "", "", "")
    tvm = results.get("tvm", {})
    if "skipped" in tvm:
        table.add_row("TVM", f"skipped: {tvm['skipped']}", "", "", "", "", "", "")
    console = Console(width=max(Console().width, 130))
    console.print(table)
    t2 = Table(title="targets (issue 6)")
    for col in ("target", "measured", "met"):
        t2.add_column(col)
    for name, value, met in targets(results):
        t2.add_row(name, value, "—" if met is None else "[green]yes[/]" if met else "[red]no[/]")
    console.print(t2)


def machine_note():
    cpu = platform.processor()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "pyir": pyir.__version__, "load_1min": load,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "PYIR_NUM_THREADS": os.environ.get("PYIR_NUM_THREADS")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--tvm-python", default=sys.executable,
                    help="interpreter with apache-tvm (the optional 'peers' extra) for the TVM "
                         "rows, run in a subprocess (default: this interpreter)")
    args = ap.parse_args(argv)
    machine = machine_note()
    results = run(args.n, args.rounds, tvm_python=args.tvm_python)
    print_table(results, machine)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report = {"timestamp": stamp, "machine": machine, "results": results,
              "targets": [{"target": a, "measured": b, "met": c} for a, b, c in targets(results)]}
    RESULTS.mkdir(exist_ok=True)
    text = json.dumps(report, indent=2)
    (RESULTS / f"matmul-{stamp}.json").write_text(text)
    (RESULTS / "matmul-latest.json").write_text(text)
    print(f"wrote {RESULTS / ('matmul-' + stamp + '.json')} and matmul-latest.json")


if __name__ == "__main__":
    main()
