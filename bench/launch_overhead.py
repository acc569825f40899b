"""Launch overhead of a parallel loop: an empty chunk body over n = num_threads items.

`measure` is the helper bench/run.py uses; run this file for a table of its own. Each run
times a native loop of `launches` back-to-back launches and reports the time per launch.
"""

import ctypes
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


def measure(repeat=200, launches=1000):
    """Time per launch in µs over `repeat` runs of `launches` launches each.

    Returns a dict: median_us, min_us, iqr_us, runs, launches_per_run, threads.
    """
    launch_many = _launcher()
    threads = threadpool.num_threads()
    launch_many(launches, threads)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        launch_many(launches, threads)
        samples.append((time.perf_counter() - start) / launches * 1e6)
    quartiles = statistics.quantiles(samples, n=4)
    return {"median_us": statistics.median(samples), "min_us": min(samples),
            "iqr_us": quartiles[2] - quartiles[0], "runs": repeat,
            "launches_per_run": launches, "threads": threads}


def main():
    from rich.console import Console
    from rich.table import Table

    result = measure()
    table = Table(title=f"parallel-loop launch overhead, {result['threads']} threads "
                        f"(target ≤ 5 µs median)")
    for column in ("median µs", "min µs", "IQR µs", "runs × launches"):
        table.add_column(column, justify="right")
    table.add_row(f"{result['median_us']:.3f}", f"{result['min_us']:.3f}",
                  f"{result['iqr_us']:.3f}",
                  f"{result['runs']} × {result['launches_per_run']}")
    Console().print(table)


if __name__ == "__main__":
    main()
