"""The runtime's heap blocks (pyir/runtime/workspace.ll): large blocks are kept for the next
call, within bounds, and generated code gets and gives back its heap buffers through them."""

import ctypes
import resource
import subprocess
import sys

import numpy as np
import pytest
from pyir.script import from_source

import pyir
from pyir.runtime import threadpool

MiB = 1 << 20


@pytest.fixture
def blocks():
    """``(alloc, free)`` of the runtime, its cache emptied before and after."""
    threadpool.ensure_jit_pool()
    engine = threadpool._jit.engine
    alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int64)(
        engine.get_function_address("pyir_alloc"))
    free = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(
        engine.get_function_address("pyir_free"))
    threadpool.release_heap_blocks()
    yield alloc, free
    threadpool.release_heap_blocks()


def test_a_large_block_given_back_is_taken_by_the_next_allocation(blocks):
    alloc, free = blocks
    p = alloc(2 * MiB)
    assert p and p % 64 == 0
    free(p, 2 * MiB)
    assert alloc(2 * MiB) == p          # the same block, no new mapping
    q = alloc(2 * MiB)                  # the cache is empty again: a block of its own
    assert q and q != p
    free(p, 2 * MiB)
    free(q, 2 * MiB)


def test_a_cached_block_serves_requests_up_to_twice_smaller(blocks):
    alloc, free = blocks
    p = alloc(4 * MiB)
    free(p, 4 * MiB)
    small = alloc(MiB)                  # a quarter: the cached block stays cached
    assert small != p
    assert alloc(3 * MiB) == p          # three quarters: taken
    free(small, MiB)
    free(p, 3 * MiB)


def test_a_full_cache_gives_its_smallest_block_up_for_a_larger_one(blocks):
    alloc, free = blocks
    sizes = [2 * MiB, 3 * MiB, 4 * MiB, 5 * MiB]
    ptrs = [alloc(s) for s in sizes]
    for p, s in zip(ptrs, sizes):
        free(p, s)
    big = alloc(6 * MiB)
    assert big not in ptrs
    free(big, 6 * MiB)                  # four slots full: the 2 MiB block is freed
    assert alloc(int(1.5 * MiB)) == ptrs[1]   # the 3 MiB one is the smallest left
    free(ptrs[1], 3 * MiB)


def test_small_blocks_and_null_pass_through(blocks):
    alloc, free = blocks
    p = alloc(4096)
    assert p and p % 64 == 0
    free(p, 4096)
    free(None, 0)
    free(None, 8 * MiB)


_TEMP = """
from pyir.script import tensor as T

@T.prim_func
def twice(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    T.func_attr({"scheduled": True})
    tmp = T.alloc_buffer(("n",), "float32")
    for i in range(n):
        with T.block("t"):
            vi = T.axis.spatial(n, i)
            tmp[vi] = A[vi] * T.float32(2)
    for i in range(n):
        with T.block("b"):
            vi = T.axis.spatial(n, i)
            B[vi] = tmp[vi] + T.float32(1)
"""


def test_a_kernel_with_a_large_temporary_maps_it_once():
    """A 40 MiB temporary (above glibc's largest mmap threshold, so malloc maps and unmaps
    it on every call): the second call faults in almost none of its 10240 pages."""
    lib = pyir.build(from_source(_TEMP))
    assert "pyir_alloc" in lib.source("llvm")
    a = np.arange(10 * MiB, dtype=np.float32)
    b = np.empty_like(a)
    lib["twice"](a, b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    lib["twice"](a, b)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    np.testing.assert_array_equal(b, a * 2 + 1)
    assert faults < 1000
    threadpool.release_heap_blocks()


def test_threads_never_hold_one_block_at_once(blocks):
    """Four threads take and give back large blocks at once (ctypes lets go of the GIL):
    each finds in its block the mark it wrote there until it gives the block back."""
    import threading
    alloc, free = blocks
    errors = []

    def work(mark):
        for k in range(500):
            size = (2 + k % 3) * MiB
            p = alloc(size)
            cell = ctypes.c_int64.from_address(p)
            cell.value = mark
            for _ in range(20):
                if cell.value != mark:
                    errors.append((mark, k))
            free(p, size)

    threads = [threading.Thread(target=work, args=(m,)) for m in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_releasing_before_the_runtime_is_compiled_compiles_nothing():
    """In a process that never compiled the runtime, no block is cached: release returns
    without compiling it (a fresh interpreter, as this one has compiled it)."""
    code = ("from pyir.runtime import threadpool\n"
            "threadpool.release_heap_blocks()\n"
            "print(threadpool._jit is None)\n")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.split() == ["True"]
