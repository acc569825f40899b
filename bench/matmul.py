"""fp32 matmul with the register-tile, packed-B schedule written with pyir.schedule,
against numpy (and TVM when the optional ``peers`` extra is installed) in one run.

The schedule (`schedule_matmul`: `pyir.schedule.gemm`, which the default schedule also gives
an unscheduled float matmul) is TVM's hand schedule for this kernel, for a register tile
of R rows x C columns (C two vectors; `default_tile`: 7x32 with AVX-512, the issue's tile,
and 6x16 with AVX2, whose 16 vector registers 7 x 2 accumulators would overflow):

- B is packed by ``cache_read`` + ``transform_layout`` into panels ``[n/C, n, C]`` so that
  the C columns a tile needs are contiguous for every k (the packing loop is parallel and
  vectorized);
- C is computed in R x C tiles: ``split`` i by R and j by C, ``reorder`` to
  ``j0, i0, k, i1, j1`` (a panel of packed B stays in L2 while every row tile reads it);
  with n symbolic or at least 32C (n = 1024), j is split into groups of 4 panels instead,
  ``j0, i0, j1, k, i1, j2``, so that a row tile of A is read from memory once per group,
  not once per panel (`pyir.schedule.gemm.PANEL_GROUP`; not in the tensorized variant);
  the tile accumulates in a ``cache_write(..., "local")`` buffer written back after the k
  loop (``reverse_compute_at``), initialised by ``decompose_reduction``; i1 is unrolled
  and the tile's columns vectorized (2 vectors), so the 2R accumulators live in vector
  registers;
- the column panels (or their groups) run in parallel (the row tiles, with fewer than 8).

Variants: ``static`` (n = 1024 in the types) and ``symbolic`` (``n`` a shape variable),
2 threads (parallel outer tiles on the pool) and 1 thread (the same schedule without the
``parallel`` steps), and ``tensorized`` (the tile update replaced by a hand-written LLVM IR
micro-kernel through ``sch.tensorize``; i1 and j1 are unrolled and vectorized first, so that
the partial tiles the kernel cannot take still run as vector code). Every variant is
checked against numpy at n = 1024 and n = 999 (partial tiles) before it is timed; the
symbolic kernels are also timed at n = 999, where every row of tiles ends in a partial one.

numpy is measured in subprocesses with 1 and 2 threads: with the environment as it is
(which on this machine kind pins ``OPENBLAS_CORETYPE=Haswell``) and with
``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` unset (OpenBLAS then picks the kernel for
the CPU, AVX-512 where there is one). A JIT'd FMA-chain probe on the widest vectors gives
the machine's peak for the "90 % of peak" target; it is timed in every round beside the
kernels (`FmaProbe`), so that a slow spell of a shared host lowers both alike. Beside it,
`TileProbe` times the register tile's inner loop alone on panels that stay in L1: the most
the tile's instructions reach on this core, which the 1-thread kernel cannot beat. The FMA
probe's counterpart for the build times is `python_probe`, a fixed loop of Python code timed
before each build (a build is mostly Python).

TVM (the optional ``peers`` extra, ``apache-tvm``): ``bench/peers/tvm_matmul.py`` is TVM's
version of the same schedule and tile (static n; TensorIR schedule, built for the host CPU),
run in a fresh subprocess per timing round with ``TVM_NUM_THREADS`` = 2 and 1 by the
interpreter given by ``--tvm-python`` (default: this one), and checked against numpy at n
and n - 25. When that interpreter cannot import tvm, the table says so and the rows are
skipped.

Run: ``python bench/matmul.py [--n 1024] [--rounds 4] [--tile auto|RxC] [--tvm-python PATH]``.
Prints a rich table and writes ``bench/results/matmul-<stamp>.json`` and
``bench/results/matmul-latest.json``.
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
from pyir.codegen.emit_stmt import TILE_LOOP_UNROLL
from pyir.schedule import Schedule, gemm
from pyir.script import from_source

import pyir

RESULTS = pathlib.Path(__file__).parent / "results"
#: The issue's register tile: 7 rows x 2 vectors of 16 floats (14 zmm accumulators).
TILE = (7, 32)
#: The tensor intrinsic `register_ukernel` registers for `TILE`.
INTRIN = f"bench.ukernel_{TILE[0]}x{TILE[1]}"


def vector_lanes():
    """float32 lanes of the host's widest vector registers."""
    from pyir.codegen.target import Target
    return Target.from_string("llvm").vector_bits // 32


def default_tile():
    """The register tile for this host (`pyir.schedule.gemm.register_tile`)."""
    return gemm.register_tile("float32")


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
def schedule_matmul(func, parallel=True, tensorize=None, tile=TILE):
    """The register-tile (``tile`` = rows, columns; 7x32 by default), packed-B schedule of
    `pyir.schedule.gemm` (read it there: a dozen primitives). With ``tensorize`` (a
    registered tensor intrinsic name) the tile update of one k step is replaced by that
    micro-kernel in whole tiles; partial tiles keep the unrolled, vectorized loops."""
    return gemm.schedule_matmul(Schedule(func), "C", tile, parallel, tensorize)


# ---------------------------------------------------------------- a micro-kernel
def ukernel_ir(rows, cols, lanes):
    """LLVM IR of the ``rows`` x ``cols`` update C[0:rows, 0:cols] += A[0:rows, 0] *
    B[0, 0:cols] for one k, in vectors of ``lanes`` floats: the accumulator tile is loaded,
    updated with FMAs and stored back (after inlining, SROA keeps it in registers across
    the k loop). Row strides: C ``cols``, A ``lda``."""
    vt = f"<{lanes} x float>"
    fma = f"@llvm.fma.v{lanes}f32"
    vecs = range(cols // lanes)
    out = [(f"define internal void @pyir_ukernel_{rows}x{cols}(ptr noalias %c, ptr noalias %a, "
            "ptr noalias %b, i64 %lda) alwaysinline {"), "entry:"]
    for v in vecs:
        out += [f"  %bp{v} = getelementptr float, ptr %b, i64 {v * lanes}",
                f"  %b{v} = load {vt}, ptr %bp{v}, align 4"]
    for r in range(rows):
        out += [f"  %ao{r} = mul i64 %lda, {r}", *_broadcast_ir(f"av{r}", "%a", f"%ao{r}", lanes)]
        for v in vecs:
            out += [f"  %cp{r}_{v} = getelementptr float, ptr %c, i64 {r * cols + v * lanes}",
                    f"  %c{r}_{v} = load {vt}, ptr %cp{r}_{v}, align 4",
                    f"  %d{r}_{v} = call {vt} {fma}({vt} %av{r}, {vt} %b{v}, {vt} %c{r}_{v})",
                    f"  store {vt} %d{r}_{v}, ptr %cp{r}_{v}, align 4"]
    out += ["  ret void", "}", f"declare {vt} {fma}({vt}, {vt}, {vt})", ""]
    return "\n".join(out)


def _broadcast_ir(name, ptr, index, lanes):
    """IR lines that load the float ``ptr[index]`` and broadcast it into ``%<name>``, a
    vector of ``lanes``."""
    vt = f"<{lanes} x float>"
    return [f"  %{name}.p = getelementptr float, ptr {ptr}, i64 {index}",
            f"  %{name}.s = load float, ptr %{name}.p, align 4",
            f"  %{name}.i = insertelement {vt} poison, float %{name}.s, i64 0",
            f"  %{name} = shufflevector {vt} %{name}.i, {vt} poison, <{lanes} x i32> "
            "zeroinitializer"]


UKERNEL_DESC_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def ukernel_desc(C: T.Buffer(({rows}, {cols}), "float32"), A: T.Buffer(({rows}, "lda"), "float32"),
                 B: T.Buffer((1, {cols}), "float32")):
    for i, j in T.grid({rows}, {cols}):
        with T.block("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi, vj] + A[vi, 0] * B[0, vj]
'''


def register_ukernel(tile=(7, 32)):
    """Declare the LLVM IR micro-kernel for ``tile`` with pyir.ffi.extern and register it as
    the tensor intrinsic ``bench.ukernel_<rows>x<cols>`` (idempotent); return its name."""
    from pyir.ffi import extern
    from pyir.schedule import register_tensor_intrin
    from pyir.script import tensor as T
    rows, cols = tile
    lanes = vector_lanes()
    if cols % lanes:
        raise ValueError(f"tile {rows}x{cols}: columns are not whole vectors of {lanes}")
    name = f"bench.ukernel_{rows}x{cols}"

    def ukernel(C: T.Buffer((rows, cols), "float32"), A: T.Buffer((rows, "lda"), "float32"),
                B: T.Buffer((1, cols), "float32"), lda: T.int64): ...

    extern(f"{name}.impl", llvm_ir=ukernel_ir(rows, cols, lanes), override=True)(ukernel)
    register_tensor_intrin(name, from_source(UKERNEL_DESC_SRC.format(rows=rows, cols=cols)),
                           f"{name}.impl", override=True)
    return name


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


def paired_ratio(first, second, args, pairs=41, clock=time.perf_counter):
    """The median over ``pairs`` back-to-back pairs of calls of second's time over
    first's, the order alternating from pair to pair: a busy spell on a shared machine
    slows both calls of a pair alike, where it slows one variant's separately timed runs
    and not the other's (in one run on a noisy host the symbolic over static ratio of the
    medians read 1.27x on two threads where the pairs read 1.05x)."""
    first(*args)
    second(*args)
    ratios = []
    for k in range(pairs):
        times = {}
        for fn in ((first, second) if k % 2 == 0 else (second, first)):
            t0 = clock()
            fn(*args)
            times[fn] = clock() - t0
        ratios.append(times[second] / times[first])
    return statistics.median(ratios)


def summarise(runs, n):
    runs = sorted(runs)
    med = statistics.median(runs)
    return {"median_s": med, "min_s": runs[0], "max_s": runs[-1], "runs": len(runs),
            "gflops": gflops(n, med), "gflops_best": gflops(n, runs[0]),
            "gflops_range": [gflops(n, runs[-1]), gflops(n, runs[0])]}


WARM_UP_SRC = '''
from pyir.script import tensor as T

@T.prim_func
def warm_up(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
'''


def warm_up():
    """Build and run a small parallel kernel: the process's one-time costs (imports, LLVM
    and thread-pool start-up) are paid here, not by the first variant. Returns seconds."""
    t0 = time.perf_counter()
    lib = pyir.build(from_source(WARM_UP_SRC), use_cache=False)
    x = np.ones(1 << 16, np.float32)
    lib["warm_up"](x, np.empty_like(x))
    return time.perf_counter() - t0


#: Iterations of `python_probe`'s loop (5-10 ms on the AMD EPYC measured, quiet to busy).
PYTHON_PROBE_ITERATIONS = 100_000


def python_probe():
    """Seconds of a fixed loop of Python code: how fast this host runs Python now. A build
    is mostly Python (the schedule, the passes and code generation), and a shared host runs
    the same build up to 1.5x slower in a busy spell (the static one: 33 ms median in one run,
    50 ms in a run half an hour later), so the report gives the probe beside the builds."""
    t0 = time.perf_counter()
    x = 0
    for i in range(PYTHON_PROBE_ITERATIONS):
        x += i * i % 7
    return time.perf_counter() - t0


def timed_builds(n, static, threads, tensorize=None, tile=TILE, builds=5):
    """Schedule + build, cold, ``builds`` times: (the last schedule, its library, the
    medians and minimum of the wall time and the minimum CPU time of this process, of both
    its compiling threads). `run` times every variant's builds before any numpy reference
    is computed: OpenBLAS's threads spin on after a call, and a build timed then shares the
    cores with them (measured: the first build 10 ms slower, the median of five 1.3 ms).
    Cold means that no build reuses what an earlier one worked out: the answers the
    symbolic analyzers share (`pyir.arith.clear_cache`) are forgotten before each. Also
    the median of `python_probe`, timed before each build."""
    func = matmul_func(n if static else None)
    times, cpu, probes = [], [], []
    for _ in range(builds):
        probes.append(python_probe())
        pyir.arith.clear_cache()
        c0, t0 = time.process_time(), time.perf_counter()
        sch = schedule_matmul(func, parallel=threads > 1, tensorize=tensorize, tile=tile)
        t1 = time.perf_counter()
        lib = pyir.build(sch.mod, opt_level="fast", use_cache=False)
        times.append((t1 - t0, time.perf_counter() - t1))
        cpu.append(time.process_time() - c0)
    info = {"schedule_s": statistics.median(t[0] for t in times),
            "build_s": statistics.median(t[1] for t in times),
            "schedule_build_s": statistics.median(sum(t) for t in times),
            "schedule_build_min_s": min(sum(t) for t in times),
            "schedule_build_cpu_min_s": min(cpu),
            "python_probe_s": statistics.median(probes)}
    return sch, lib, info


def bench_variant(n, static, threads, built, tensorize=None, tile=TILE):
    """After `timed_builds` (``built``): a cache-hit rebuild (the median of 5: a single
    one read 4 ms once, 0.05 ms in every other run), a replayed schedule's rebuild, checks
    at n and 999. Returns (library, info)."""
    sch, lib, info = built
    func = matmul_func(n if static else None)
    pyir.build(sch.mod, opt_level="fast")  # fills the cache
    rebuilds = []
    for _ in range(5):
        t3 = time.perf_counter()
        pyir.build(sch.mod, opt_level="fast")
        rebuilds.append(time.perf_counter() - t3)
    rebuild = statistics.median(rebuilds)
    t4 = time.perf_counter()
    again = schedule_matmul(func, parallel=threads > 1, tensorize=tensorize, tile=tile)
    pyir.build(again.mod, opt_level="fast")
    replay_rebuild = time.perf_counter() - t4
    errors = {n: check(lib, "matmul", n)}
    tail = 999 if n != 999 else 1000
    if static:
        tail_lib = pyir.build(schedule_matmul(matmul_func(tail), parallel=threads > 1,
                                              tensorize=tensorize, tile=tile).mod,
                              opt_level="fast")
        errors[tail] = check(tail_lib, "matmul", tail)
    else:
        errors[tail] = check(lib, "matmul", tail)
    info = dict(info, rebuild_s=rebuild, schedule_and_rebuild_s=replay_rebuild,
                max_rel_error={str(k): v for k, v in errors.items()})
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
    ``unpinned`` unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (OpenBLAS then picks the
    kernel for the CPU: AVX-512 where there is one)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    if unpinned:
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run([sys.executable, "-c", NUMPY_CHILD, str(n)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def fma_probe_ir(lanes, chains=12):
    """LLVM IR of ``i64 @fma_probe(i64 iters)``: ``chains`` independent FMA chains of
    ``lanes`` floats (one vector register each) run ``iters`` times."""
    vt = f"<{lanes} x float>"
    fma = f"@llvm.fma.v{lanes}f32"
    ones = "<" + ", ".join(["float 1.0"] * lanes) + ">"
    halves = "<" + ", ".join(["float 5.000000e-01"] * lanes) + ">"
    out = ["define i64 @fma_probe(i64 %iters) {", "entry:", "  br label %loop", "loop:",
           "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]"]
    out += [f"  %acc{k} = phi {vt} [ {ones}, %entry ], [ %new{k}, %loop ]" for k in range(chains)]
    out += [f"  %new{k} = call {vt} {fma}({vt} %acc{k}, {vt} {halves}, {vt} %acc{k})"
            for k in range(chains)]
    out += ["  %next = add i64 %i, 1", "  %done = icmp eq i64 %next, %iters",
            "  br i1 %done, label %exit, label %loop", "exit:"]
    out += [f"  %e{k} = extractelement {vt} %new{k}, i64 0" for k in range(chains)]
    out += [f"  %s = fadd float %e0, %e{chains - 1}", "  %r = fptosi float %s to i64",
            "  ret i64 %r", "}", f"declare {vt} {fma}({vt}, {vt}, {vt})", ""]
    return "\n".join(out)


def tile_probe_ir(rows, vectors, lanes, k, unroll=TILE_LOOP_UNROLL):
    """LLVM IR of ``void @tile_probe(ptr a, ptr b, ptr c, i64 reps)``: the register tile's
    inner loop alone -- per step of ``k``, ``vectors`` vector loads of a ``k`` x
    ``vectors * lanes`` panel ``b``, one broadcast of ``a`` per row and ``rows * vectors``
    FMAs into accumulators in registers, ``unroll`` steps per iteration (``k`` a multiple),
    as codegen has LLVM unroll the tile's loop (`pyir.codegen.emit_stmt.TILE_LOOP_UNROLL`)
    -- then the tile added to ``c``, ``reps`` times."""
    vt = f"<{lanes} x float>"
    fma = f"@llvm.fma.v{lanes}f32"
    tiles = rows * vectors
    out = ["define void @tile_probe(ptr %a, ptr %b, ptr %c, i64 %reps) {", "entry:",
           "  br label %outer", "outer:", "  %r = phi i64 [ 0, %entry ], [ %r1, %after ]",
           "  br label %loop", "loop:", "  %k = phi i64 [ 0, %outer ], [ %k1, %loop ]"]
    last = f"s{unroll - 1}_"
    out += [f"  %acc{q} = phi {vt} [ zeroinitializer, %outer ], [ %{last}new{q}, %loop ]"
            for q in range(tiles)]
    for u in range(unroll):
        s, acc = f"s{u}_", "%acc" if u == 0 else f"%s{u - 1}_new"
        out += [f"  %{s}k = add i64 %k, {u}", f"  %{s}row = mul i64 %{s}k, {vectors * lanes}"]
        for v in range(vectors):
            out += [f"  %{s}bi{v} = add i64 %{s}row, {v * lanes}",
                    f"  %{s}bp{v} = getelementptr float, ptr %b, i64 %{s}bi{v}",
                    f"  %{s}bv{v} = load {vt}, ptr %{s}bp{v}, align 4"]
        for i in range(rows):
            out += [f"  %{s}ai{i} = add i64 %{s}k, {i * k}",
                    *_broadcast_ir(f"{s}ab{i}", "%a", f"%{s}ai{i}", lanes)]
            out += [f"  %{s}new{i * vectors + v} = call {vt} {fma}({vt} %{s}ab{i}, "
                    f"{vt} %{s}bv{v}, {vt} {acc}{i * vectors + v})" for v in range(vectors)]
    out += [f"  %k1 = add i64 %k, {unroll}", f"  %kd = icmp eq i64 %k1, {k}",
            "  br i1 %kd, label %after, label %loop", "after:"]
    for q in range(tiles):
        out += [f"  %cp{q} = getelementptr float, ptr %c, i64 {q * lanes}",
                f"  %co{q} = load {vt}, ptr %cp{q}, align 4",
                f"  %cs{q} = fadd {vt} %co{q}, %{last}new{q}",
                f"  store {vt} %cs{q}, ptr %cp{q}, align 4"]
    out += ["  %r1 = add i64 %r, 1", "  %rd = icmp eq i64 %r1, %reps",
            "  br i1 %rd, label %exit, label %outer", "exit:", "  ret void", "}",
            f"declare {vt} {fma}({vt}, {vt}, {vt})", ""]
    return "\n".join(out)


def _jit(llvm_ir, name, prototype):
    """(engine, ctypes function ``name`` of ``prototype``) for the IR text ``llvm_ir``,
    compiled for the host (keep the engine alive as long as the function)."""
    import llvmlite.binding as llvm

    from pyir.codegen.target import Target
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(llvm_ir),
                                        Target.from_string("llvm").create_target_machine())
    engine.finalize_object()
    return engine, prototype(engine.get_function_address(name))


class FmaProbe:
    """Peak fp32 GFLOPS: 12 independent FMA chains of the host's widest vectors (a JIT'd
    loop), run on 1 or 2 Python threads at once (ctypes releases the GIL). `runs` times it in
    every round beside the kernels, so that the ratio to its peak compares runs made in the
    same spells of a shared machine."""

    def __init__(self, iters=20_000_000):
        lanes = vector_lanes()
        self._engine, self._fn = _jit(fma_probe_ir(lanes), "fma_probe",
                                      ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64))
        self.iters = iters
        self.flop = 12 * lanes * 2 * iters

    def runs(self, threads, repeats=3):
        """Seconds of ``repeats`` runs, each of ``threads`` threads at once."""
        out = []
        for _ in range(repeats):
            ts = [threading.Thread(target=self._fn, args=(self.iters,)) for _ in range(threads)]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            out.append(time.perf_counter() - t0)
        return out


class TileProbe:
    """What the register tile's instructions reach on this core with nothing to wait for:
    its inner loop (`tile_probe_ir`, unrolled as codegen has it) over panels of A and B that
    stay in L1 (64 steps of k), one thread. The 1-thread kernel cannot beat it; its ratio
    to `FmaProbe` is the part of the "90 % of the FMA probe" target that the tile itself
    allows on this CPU (the loads and broadcasts beside the FMAs)."""

    K = 64

    def __init__(self, tile=TILE, reps=400_000):
        lanes = vector_lanes()
        rows, vectors = tile[0], tile[1] // lanes
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int64)
        self._engine, self._fn = _jit(tile_probe_ir(rows, vectors, lanes, self.K),
                                      "tile_probe", prototype)
        self._a = np.ones(rows * self.K, np.float32)
        self._b = np.ones(self.K * vectors * lanes, np.float32)
        self._c = np.zeros(rows * vectors * lanes, np.float32)
        self.reps = reps
        self.flop = 2 * rows * vectors * lanes * self.K * reps

    def runs(self, repeats=3):
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            self._fn(self._a.ctypes.data, self._b.ctypes.data, self._c.ctypes.data, self.reps)
            out.append(time.perf_counter() - t0)
        return out


def probe_gflops(flop, runs):
    """GFLOPS of a probe that did ``flop`` in each of ``runs`` (seconds): at its best and
    its median run."""
    return {"gflops": flop / min(runs) / 1e9,
            "gflops_median": flop / statistics.median(runs) / 1e9}


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


def tvm_run(n, python, threads, tail=True, tile=TILE):
    """One run of bench/peers/tvm_matmul.py (TVM's version of the same schedule, static n)
    in a subprocess with ``TVM_NUM_THREADS=threads``: build, check against numpy (also at
    n - 25 with ``tail``), time. Returns its JSON report."""
    env = dict(os.environ, TVM_NUM_THREADS=str(threads))
    cmd = [python, str(TVM_SCRIPT), "--n", str(n), "--threads", str(threads),
           "--tile", f"{tile[0]}x{tile[1]}"]
    if not tail:
        cmd.append("--no-tail")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False,
                          timeout=600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"{TVM_SCRIPT.name} failed: {last[:200]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tvm_timed(n, python, threads, row, tile=TILE):
    """A callable for the timing rounds: each call is a fresh TVM subprocess (build, check,
    time); the build times and the first run's checks are collected in ``row``."""
    def once():
        first = "max_rel_error" not in row
        rep = tvm_run(n, python, threads, tail=first, tile=tile)
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
def run(n, rounds=4, tvm_python=sys.executable, tile=TILE):
    """Time every variant's builds, then rebuild and check each, then time them all in
    ``rounds`` interleaved rounds (so that a busy spell on a shared machine hits every
    variant alike), and compare symbolic with static in pairs of calls (`paired_ratio`)."""
    results = {"n": n, "tile": list(tile)}
    timed, sizes = {}, {}
    variants = [("pyir static 2T", True, 2, None), ("pyir symbolic 2T", False, 2, None),
                ("pyir static 1T", True, 1, None), ("pyir symbolic 1T", False, 1, None),
                ("pyir tensorized symbolic 2T", False, 2, "ukernel"),
                ("pyir tensorized symbolic 1T", False, 1, "ukernel")]
    rng = np.random.default_rng(1)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    tail = n - 25
    at_tail = (a[:tail, :tail].copy(), b[:tail, :tail].copy(), c[:tail, :tail].copy())
    results["process_warm_up_s"] = warm_up()
    built, libs = {}, {}
    for key, static, threads, tz in variants:
        try:
            intrin = register_ukernel(tile) if tz else None
            built[key] = intrin, timed_builds(n, static, threads, tensorize=intrin, tile=tile)
        except Exception as e:  # noqa: BLE001 -- a failed variant is a row of the report
            results[key] = {"error": f"{type(e).__name__}: {e}"}
    for key, static, threads, _ in variants:
        if key not in built:
            continue
        intrin, builds = built[key]
        try:
            lib, info = bench_variant(n, static, threads, builds, tensorize=intrin, tile=tile)
            results[key] = info
            libs[key] = lib
            timed[key] = lambda lib=lib: time_runs(lib["matmul"], (a, b, c))
            if not static and intrin is None:
                results[f"{key}, n = {tail}"] = {}
                timed[f"{key}, n = {tail}"] = lambda lib=lib: time_runs(lib["matmul"], at_tail)
                sizes[f"{key}, n = {tail}"] = tail
        except Exception as e:  # noqa: BLE001 -- a failed variant is a row of the report
            results[key] = {"error": f"{type(e).__name__}: {e}"}
    for threads in (2, 1):
        for unpinned in (True, False):
            key = f"numpy {'unpinned' if unpinned else 'as pinned'} {threads}T"
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
            timed[key] = tvm_timed(n, tvm_python, threads, tvm_rows[key], tile)
    probe_threads = {}
    try:
        probe = FmaProbe()
        for threads in (1, 2):
            probe_threads[f"fma probe {threads}T"] = threads
            timed[f"fma probe {threads}T"] = lambda t=threads: probe.runs(t)
    except Exception as e:  # noqa: BLE001
        results["fma probe"] = {"error": f"{type(e).__name__}: {e}"}
    try:
        tile_probe = TileProbe(tile)
        timed["tile probe"] = tile_probe.runs
    except Exception as e:  # noqa: BLE001
        results["tile probe"] = {"error": f"{type(e).__name__}: {e}"}
    runs = {k: [] for k in timed}
    for _ in range(rounds):
        for key, fn in timed.items():
            try:
                runs[key].extend(fn())
            except Exception as e:  # noqa: BLE001
                results[key] = {"error": f"{type(e).__name__}: {e}"}
    for threads in (2, 1):
        pair = (libs.get(f"pyir static {threads}T"), libs.get(f"pyir symbolic {threads}T"))
        if all(pair):
            results.setdefault("symbolic over static, paired", {})[f"{threads}T"] = \
                paired_ratio(pair[0]["matmul"], pair[1]["matmul"], (a, b, c))
    for key, threads in probe_threads.items():
        rs = runs.pop(key)
        if rs:
            results.setdefault("fma probe", {})[str(threads)] = probe_gflops(
                threads * probe.flop, rs)
        elif key in results:
            results["fma probe"] = results.pop(key)
    rs = runs.pop("tile probe", None)
    if rs:
        results["tile probe"] = probe_gflops(tile_probe.flop, rs)
    for key, rs in runs.items():
        if rs and "error" not in results[key]:
            results[key].update(summarise(rs, sizes.get(key, n)))
    for key, row in tvm_rows.items():
        finish_tvm_row(row)
    results["tvm"] = tvm_info
    return results


def targets(results):
    """(target, value, met) rows."""
    def g(key, which="gflops"):
        return results.get(key, {}).get(which) or 0

    rows = []
    for threads, peer, label in ((2, "numpy unpinned 2T", "2 threads ≥ 1.0x numpy (unpinned)"),
                                 (1, "numpy unpinned 1T", "1 thread vs numpy (unpinned)")):
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
    for peer in tvm.get("rows", []):
        # TVM builds the static kernel: compare each of pyir's builds with it, same threads
        # (the 35 ms is half of TVM's build + JIT on its machine).
        threads = peer.rsplit(" ", 1)[1]
        theirs = results.get(peer, {}).get("schedule_build_s")
        for kind in ("static", "symbolic", "tensorized symbolic"):
            mine = results.get(f"pyir {kind} {threads}", {}).get("schedule_build_s")
            if theirs and mine:
                rows.append((f"{kind} schedule + build ≤ ½ TVM's static build + load "
                             f"({threads})", f"{mine * 1e3:.0f} ms vs ½ × {theirs * 1e3:.0f} ms",
                             mine <= theirs / 2))
    probe = results.get("fma probe", {}).get("1", {})
    if probe.get("gflops"):
        mine = ["pyir static 1T", "pyir symbolic 1T"]
        med = max(g(k) for k in mine) / probe["gflops_median"]
        best = max(g(k, "gflops_best") for k in mine) / probe["gflops"]
        ceiling = results.get("tile probe", {}).get("gflops")
        rows.append(("1 thread ≥ 90 % of FMA probe", f"{med:.0%} median, {best:.0%} best"
                     + (f" (the tile in L1: {ceiling / probe['gflops']:.0%})" if ceiling else ""),
                     med >= 0.9))
    paired = results.get("symbolic over static, paired", {})
    for threads in (1, 2):
        s = results.get(f"pyir static {threads}T", {})
        y = results.get(f"pyir symbolic {threads}T", {})
        ratio = paired.get(f"{threads}T")
        if ratio is not None and "median_s" in s and "median_s" in y:
            rows.append((f"symbolic ≤ 1.10x static time ({threads}T)",
                         f"{ratio:.2f}x paired calls ({y['median_s'] / s['median_s']:.2f}x "
                         "of the medians)", ratio <= 1.10))
    for kind in ("static", "symbolic", "tensorized symbolic"):
        sb = [r["schedule_build_s"] for k, r in results.items()
              if k.startswith(f"pyir {kind} ") and "schedule_build_s" in r]
        fastest = [r["schedule_build_min_s"] for k, r in results.items()
                   if k.startswith(f"pyir {kind} ") and "schedule_build_min_s" in r]
        if sb:
            rows.append((f"{kind} schedule + build ≤ 35 ms",
                         f"{min(sb) * 1e3:.0f}–{max(sb) * 1e3:.0f} ms median, "
                         f"{min(fastest) * 1e3:.0f}–{max(fastest) * 1e3:.0f} ms fastest",
                         max(sb) <= 0.035))
    rb = [results[k]["rebuild_s"] for k in results
          if k.startswith("pyir") and "rebuild_s" in results[k]]
    if rb:
        rows.append(("unchanged rebuild ≤ 1 ms", f"{max(rb) * 1e3:.2f} ms", max(rb) <= 1e-3))
    return rows


def print_table(results, machine):
    from rich.console import Console
    from rich.table import Table
    tile = "x".join(map(str, results["tile"]))
    table = Table(title=f"fp32 matmul {results['n']}³, {tile} register tile — {machine['cpu']}, "
                        f"{machine['vector_bits']}-bit vectors, {machine['cores']} "
                        f"cores, load {machine.get('load_1min') or 0:.1f} "
                        "(medians; range = slowest–fastest run)")
    for col in ("variant", "GFLOPS (median)", "best", "range", "time", "sched+build", "rebuild",
                "max rel. error 1024 / 999"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for key, r in results.items():
        if key in ("n", "tile", "fma probe", "tile probe", "tvm") or not isinstance(r, dict):
            continue
        if "error" in r:
            table.add_row(key, f"[red]{r['error'][:90]}[/]", "", "", "", "", "", "")
            continue
        if "gflops" not in r:
            continue
        lo, hi = r.get("gflops_range", (0, 0))
        table.add_row(key, f"{r['gflops']:.0f}", f"{r['gflops_best']:.0f}", f"{lo:.0f}–{hi:.0f}",
                      f"{r['median_s'] * 1e3:.2f} ms",
                      (f"{r['schedule_build_s'] * 1e3:.0f} ms"
                       + (f" (min {r['schedule_build_min_s'] * 1e3:.0f}, "
                          f"cpu {r['schedule_build_cpu_min_s'] * 1e3:.0f})"
                          if "schedule_build_cpu_min_s" in r else ""))
                      if "schedule_build_s" in r else "",
                      f"{r['rebuild_s'] * 1e6:.0f} µs" if "rebuild_s" in r else "",
                      " / ".join(f"{v:.0e}" for v in r.get("max_rel_error", {}).values()))
    probe = results.get("fma probe", {})
    for t in ("1", "2"):
        if t in probe:
            table.add_row(f"FMA probe {t}T (peak)", f"{probe[t]['gflops_median']:.0f}",
                          f"{probe[t]['gflops']:.0f}", "", "", "", "", "")
    ceiling = results.get("tile probe", {})
    if "gflops" in ceiling:
        table.add_row(f"{tile} tile in L1 1T (ceiling)", f"{ceiling['gflops_median']:.0f}",
                      f"{ceiling['gflops']:.0f}", "", "", "", "", "")
    elif "error" in ceiling:
        table.add_row("tile probe", f"[red]{ceiling['error'][:90]}[/]", "", "", "", "", "", "")
    tvm = results.get("tvm", {})
    if "skipped" in tvm:
        table.add_row("TVM", f"skipped: {tvm['skipped']}", "", "", "", "", "", "")
    console = Console(width=max(Console().width, 130))
    console.print(table)
    if "process_warm_up_s" in results:
        console.print(f"pyir sched+build: median (min; least CPU time, of both threads: LLVM "
                      "compiles beside Python's code generation) of 5 cold builds, after a "
                      "one-time process "
                      f"warm-up (imports, LLVM and thread-pool start-up) of "
                      f"{results['process_warm_up_s'] * 1e3:.0f} ms; TVM: schedule + compile + "
                      "load, median over rounds")
    probes = [r["python_probe_s"] for r in results.values()
              if isinstance(r, dict) and "python_probe_s" in r]
    if probes:
        console.print(f"Python speed beside the builds (`python_probe`, a fixed loop of "
                      f"{PYTHON_PROBE_ITERATIONS:,} iterations): {min(probes) * 1e3:.1f}–"
                      f"{max(probes) * 1e3:.1f} ms, the medians of the variants")
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
    return {"cpu": cpu, "cores": os.cpu_count(), "vector_bits": vector_lanes() * 32,
            "python": platform.python_version(),
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
    ap.add_argument("--tile", default="auto",
                    help="register tile ROWSxCOLS, e.g. 7x32; 'auto' (default) is 7 x 2 vectors "
                         "with AVX-512 and 6 x 2 vectors with 16 vector registers (AVX2)")
    args = ap.parse_args(argv)
    tile = default_tile() if args.tile == "auto" else tuple(int(x) for x in args.tile.split("x"))
    machine = machine_note()
    results = run(args.n, args.rounds, tvm_python=args.tvm_python, tile=tile)
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
