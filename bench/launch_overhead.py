"""Launch overhead of a parallel loop: an empty chunk body over n = num_threads items.

`measure` is the helper bench/run.py uses; run this file for a table of its own.
- back to back: each run times a native loop of `launches` launches (time per launch);
- co-located: the same with every thread of the process pinned to one CPU, as happens when
  the scheduler puts the caller and a worker on one CPU while another process holds the
  other (the cause of a 31 µs median seen on this shared machine, when the pool spun 15 µs
  before yielding);
- wake from sleep: one launch after the workers went to sleep (a 5 ms pause), from
  Python, minus the same call with n = 1 (run inline, no pool).
"""

import ctypes
import os
import statistics
import time

import llvmlite.binding as llvm

from pyir.runtime import threadpool

_BENCH_IR = r"""
declare i32 @pyir_parallel_for(ptr, ptr, i64)

define i32 @empty(i64 %begin, i64 %end, ptr %closure) {
entry:
  ret i32 0
}

define i32 @launch_many(i64 %launches, i64 %n) {
entry:
  br label %check
check:
  %k = phi i64 [ 0, %entry ], [ %next, %body ]
  %more = icmp slt i64 %k, %launches
  br i1 %more, label %body, label %done
body:
  %status = call i32 @pyir_parallel_for(ptr @empty, ptr null, i64 %n)
  %next = add i64 %k, 1
  br label %check
done:
  ret i32 0
}
"""

_engines = []


def _launcher():
    threadpool.ensure_jit_pool()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(), opt=2)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(_BENCH_IR), machine)
    engine.finalize_object()
    _engines.append(engine)
    address = engine.get_function_address("launch_many")
    return ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64)(address)


def _stats(samples):
    quartiles = statistics.quantiles(samples, n=4)
    return {"median_us": statistics.median(samples), "min_us": min(samples),
            "iqr_us": quartiles[2] - quartiles[0], "runs": len(samples)}


def _back_to_back(launch_many, threads, repeat, launches):
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        launch_many(launches, threads)
        samples.append((time.perf_counter() - start) / launches * 1e6)
    return _stats(samples)


def _wake(launch_many, threads, repeat):
    """Statistics of one launch after a sleep, less the median of the inline (n = 1) call
    measured the same way, so the Python call cost is not counted."""
    woken, inline = [], []
    for _ in range(repeat):
        for n, out in ((threads, woken), (1, inline)):
            time.sleep(0.005)
            start = time.perf_counter()
            launch_many(1, n)
            out.append((time.perf_counter() - start) * 1e6)
    base = statistics.median(inline)
    return _stats([max(0.0, t - base) for t in woken])


def _co_located(launch_many, threads, repeat, launches):
    """Back to back with every thread pinned to one CPU (the affinity is restored)."""
    tasks = [int(t) for t in os.listdir("/proc/self/task")]
    saved = {t: os.sched_getaffinity(t) for t in tasks}
    cpu = min(saved[tasks[0]])
    try:
        for t in tasks:
            os.sched_setaffinity(t, {cpu})
        return _back_to_back(launch_many, threads, repeat, launches)
    finally:
        for t, cpus in saved.items():
            os.sched_setaffinity(t, cpus)


def measure(repeat=200, launches=1000):
    """Time per launch in µs over `repeat` runs of `launches` launches each, back to back.

    Returns a dict: median_us, min_us, iqr_us, runs, launches_per_run, threads, and the
    same statistics for "co_located" and "wake" (see the module docstring).
    """
    launch_many = _launcher()
    threads = threadpool.num_threads()
    launch_many(launches, threads)
    result = _back_to_back(launch_many, threads, repeat, launches)
    result.update(launches_per_run=launches, threads=threads,
                  co_located=_co_located(launch_many, threads, repeat // 4, launches // 4),
                  wake=_wake(launch_many, threads, repeat // 4))
    return result


def main():
    from rich.console import Console
    from rich.table import Table

    result = measure()
    table = Table(title=f"parallel-loop launch overhead, {result['threads']} threads "
                        f"(target ≤ 5 µs median)")
    for column in ("case", "median µs", "min µs", "IQR µs", "runs"):
        table.add_column(column, justify="right")
    for case, r in (("back to back", result), ("co-located", result["co_located"]),
                    ("wake from sleep", result["wake"])):
        table.add_row(case, f"{r['median_us']:.3f}", f"{r['min_us']:.3f}",
                      f"{r['iqr_us']:.3f}", str(r["runs"]))
    Console().print(table)


if __name__ == "__main__":
    main()
