"""TVM's version of the bench/matmul.py schedule: fp32 matmul n x n x n (static n), a 7x32
register tile and B packed into 32-column panels, built for the host CPU.

Run by ``bench/matmul.py`` in a subprocess (with the interpreter given by ``--tvm-python``)
so that TVM (the optional ``peers`` extra) never has to be importable by pyir itself::

    TVM_NUM_THREADS=2 python bench/peers/tvm_matmul.py --n 1024 --threads 2

The schedule, written with TVM's TensorIR schedule API (``s_tir.Schedule`` in TVM >= 0.27,
``tir.Schedule`` before):

- B is packed by ``cache_read`` + ``transform_layout`` into ``[n/32, n, 32]`` panels (the
  packing loop is vectorized by 32 and parallel over k);
- C is split i by 7 and j by 32, reordered to ``j0, i0, k, i1, j1`` (the column panels
  outside, so that one panel of packed B stays in L2 while the row tiles read it); with n
  at least 1024 (``pyir.schedule.gemm.grouped_panels``), j is split into groups of 4
  panels instead, ``j0, i0, j1, k, i1, j2``, so that a row tile of A is read once per
  group; the 7x32 tile accumulates in a ``cache_write(..., "local")`` buffer written back
  after the k loop (``reverse_compute_at`` at the row tile, or at the group's panel),
  initialised by ``decompose_reduction``; i1 unrolled, the tile's columns vectorized;
- with more than one thread the groups (or the column panels) run in parallel (with fewer
  than 8 panels, the row tiles), as in ``pyir.schedule.gemm``; with one thread the
  ``parallel`` steps are left out (as in the pyir 1-thread variant).

The result is checked against numpy (float64 reference) at n and, unless ``--no-tail``, at
n - 25 (partial tiles), then timed with ``time_evaluator``. Prints one JSON object on
stdout: ``runs`` (seconds per call), GFLOPS median/best, build time (schedule + compile),
TVM version and target.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def _import_tvm():
    import tvm
    from tvm import te
    try:  # TVM >= 0.27: schedulable TIR lives in tvm.s_tir
        from tvm.s_tir import Schedule
    except ImportError:  # older TVM
        from tvm.tir import Schedule
    return tvm, te, Schedule


def _get_block(sch, name):
    return sch.get_sblock(name) if hasattr(sch, "get_sblock") else sch.get_block(name)


def matmul_prim_func(te, n):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


#: Column panels per group, as `pyir.schedule.gemm.PANEL_GROUP`.
PANEL_GROUP = 4


def schedule(Schedule, func, n, tile_i=7, tile_j=32, parallel=True):
    sch = Schedule(func)
    c = _get_block(sch, "C")
    # Packed B: B_global[j // 32, k, j % 32].
    bp = sch.cache_read(c, 1, "global")
    sch.transform_layout(bp, ("write", 0), lambda k, j: (j // tile_j, k, j % tile_j),
                         pad_value=0.0 if n % tile_j else None)
    loops = sch.get_loops(bp)
    if len(loops) == 2:  # n % 32 == 0: the packing block still iterates over (k, j)
        pk, pj = loops
        _, lanes = sch.split(pj, factors=[None, tile_j])
    else:  # padded: TVM rewrote it to iterate over the panels (j // 32, k, j % 32)
        pk, lanes = loops[0], loops[-1]
    sch.vectorize(lanes)
    if parallel:
        sch.parallel(pk)
    # 7x32 register tile.
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, factors=[None, tile_i])
    grouped = n >= tile_j * PANEL_GROUP * 8
    if grouped:
        outer, j0, j1 = sch.split(j, factors=[None, PANEL_GROUP, tile_j])
        sch.reorder(outer, i0, j0, k, i1, j1)
    else:
        j0, j1 = sch.split(j, factors=[None, tile_j])
        outer = j0
        sch.reorder(j0, i0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0 if grouped else i0)
    # Vectorize / parallelize over the update while it is still a complete reduction block
    # (TVM refuses both once decompose_reduction has taken its init away); the init loops
    # that decompose_reduction creates are then annotated separately.
    sch.unroll(i1)
    sch.vectorize(j1)
    if parallel:
        sch.parallel(outer if grouped or -(-n // tile_j) >= 8 else i0)
    init = sch.decompose_reduction(c, k)
    for blk in (init, cw):
        a, b = sch.get_loops(blk)[-2:]
        sch.unroll(a)
        sch.vectorize(b)
    return sch


def build(tvm, te, Schedule, n, target, parallel, tile=(7, 32)):
    """Schedule + compile, then load the compiled module (TVM >= 0.20: ``Executable.jit``
    writes a shared library and loads it). Returns (module, main, schedule_s, compile_s,
    load_s)."""
    t0 = time.perf_counter()
    sch = schedule(Schedule, matmul_prim_func(te, n), n, *tile, parallel=parallel)
    t1 = time.perf_counter()
    if hasattr(tvm, "compile"):
        lib = tvm.compile(sch.mod, target=target)
        t2 = time.perf_counter()
        mod = lib.jit() if hasattr(lib, "jit") else lib
    else:  # older TVM
        lib = tvm.build(sch.mod, target=target)
        t2 = time.perf_counter()
        mod = lib
    f = mod["main"]
    t3 = time.perf_counter()
    return mod, f, t1 - t0, t2 - t1, t3 - t2


def _array(tvm, x, dev):
    if hasattr(tvm.runtime, "tensor"):
        return tvm.runtime.tensor(x, dev)
    return tvm.nd.array(x, dev)


def check(tvm, f, n, dev, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = _array(tvm, np.zeros((n, n), np.float32), dev)
    f(_array(tvm, a, dev), _array(tvm, b, dev), c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.max(np.abs(c.numpy() - ref) / np.maximum(np.abs(ref), 1)))
    if not err < 1e-4:
        raise AssertionError(f"TVM matmul at n={n}: max relative error {err:.2e}")
    return err


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("TVM_NUM_THREADS", "1")))
    ap.add_argument("--mcpu", default=None, help="LLVM CPU name (default: TVM's host CPU)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.25, help="seconds over all repeats")
    ap.add_argument("--warmup", type=float, default=0.1, help="seconds of warm-up calls")
    ap.add_argument("--no-tail", action="store_true", help="skip the check at n - 25")
    ap.add_argument("--tile", default="7x32", help="register tile, rows x columns")
    args = ap.parse_args(argv)
    if os.environ.get("TVM_NUM_THREADS") != str(args.threads):
        # The runtime thread pool reads TVM_NUM_THREADS when it starts: re-exec with it set.
        env = dict(os.environ, TVM_NUM_THREADS=str(args.threads))
        os.execve(sys.executable, [sys.executable, *sys.argv], env)

    t_import = time.perf_counter()
    tvm, te, Schedule = _import_tvm()
    t_import = time.perf_counter() - t_import
    mcpu = args.mcpu
    if mcpu is None:
        from tvm.target import codegen
        mcpu = codegen.llvm_get_system_cpu()
    # TVM 0.27 takes targets as dicts ("llvm -mcpu=... -num-cores=..." is refused).
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu, "num-cores": args.threads})
    dev = tvm.cpu(0)
    parallel = args.threads > 1
    n = args.n

    tile = tuple(int(x) for x in args.tile.split("x"))
    f_mod, f, sched_s, compile_s, load_s = build(tvm, te, Schedule, n, target, parallel, tile)
    errors = {str(n): check(tvm, f, n, dev)}
    if not args.no_tail:
        tail = n - 25
        _, ft, _, _, _ = build(tvm, te, Schedule, tail, target, parallel, tile)
        errors[str(tail)] = check(tvm, ft, tail, dev)

    rng = np.random.default_rng(1)
    a = _array(tvm, rng.random((n, n), dtype=np.float32), dev)
    b = _array(tvm, rng.random((n, n), dtype=np.float32), dev)
    c = _array(tvm, np.empty((n, n), np.float32), dev)
    f(a, b, c)
    t0 = time.perf_counter()
    f(a, b, c)
    one = max(time.perf_counter() - t0, 1e-6)
    number = max(1, int(args.min_time / args.repeats / one))
    # A fresh process: let the thread pool and the page tables settle before timing (the
    # pyir rows are timed in a process that has already run the kernel many times).
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.warmup:
        f(a, b, c)
    try:
        evaluator = f_mod.time_evaluator("main", dev, number=number, repeat=args.repeats)
    except Exception:  # noqa: BLE001 -- fall back to a plain perf_counter loop
        evaluator = None
    if evaluator is not None:
        runs = list(evaluator(a, b, c).results)
    else:
        runs = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(number):
                f(a, b, c)
            runs.append((time.perf_counter() - t0) / number)
    flop = 2.0 * n ** 3
    med, best = statistics.median(runs), min(runs)
    print(json.dumps({
        "tvm_version": tvm.__version__, "target": str(target), "threads": args.threads,
        "tile": args.tile,
        "parallel": parallel, "n": n, "runs": runs, "timer": "time_evaluator" if evaluator
        is not None else "perf_counter", "gflops": flop / med / 1e9,
        "gflops_best": flop / best / 1e9, "schedule_s": sched_s, "compile_s": compile_s,
        "load_s": load_s,
        "schedule_build_s": sched_s + compile_s, "schedule_build_load_s": sched_s + compile_s + load_s,
        "import_s": t_import,
        "max_rel_error": errors}))


if __name__ == "__main__":
    main()
