"""The native runtime of generated code and its JIT loader: the persistent thread pool that
runs parallel loops (threadpool.ll) and the heap blocks that keep large ones for the next
call (workspace.ll).

Both are LLVM IR calling only libc, so they need no C compiler: the JIT compiles them once
per process, and `export_library` links the same text into shared objects. Generated code
calls ``i32 @pyir_parallel_for(ptr fn, ptr closure, i64 n)`` with ``fn: i32 (i64 begin,
i64 end, ptr closure)`` (see threadpool.ll for the protocol), and ``ptr @pyir_alloc(i64
size)`` / ``void @pyir_free(ptr, i64 size)`` for its heap blocks (see workspace.ll).
"""

import ctypes
import pathlib
import threading

import llvmlite.binding as llvm

from ..codegen.compile import machine_code
from ..errors import Error

from .pool_settings import ENTRY_SYMBOL, configured_threads

NUM_THREADS_SYMBOL = "pyir_num_threads"
#: The heap-block functions generated code calls (workspace.ll).
ALLOC_SYMBOLS = ("pyir_alloc", "pyir_free")
RELEASE_SYMBOL = "pyir_release_blocks"

_IR_FILE = pathlib.Path(__file__).with_name("threadpool.ll")
_WORKSPACE_FILE = pathlib.Path(__file__).with_name("workspace.ll")

# Per architecture: futex syscall number, spin-wait hint instruction, its declaration.
_ARCH_PARTS = {
    "x86_64": (202, "call void @llvm.x86.sse2.pause()", "declare void @llvm.x86.sse2.pause()"),
    "aarch64": (98, "call void @llvm.aarch64.hint(i32 1)", "declare void @llvm.aarch64.hint(i32)"),
}

_lock = threading.Lock()
_jit = None


class _JitPool:
    """What must stay alive for the process: the engine (owning its target machine)."""

    def __init__(self, engine):
        self.engine = engine
        self.address = engine.get_function_address(ENTRY_SYMBOL)
        count_address = engine.get_function_address(NUM_THREADS_SYMBOL)
        self.num_threads = ctypes.CFUNCTYPE(ctypes.c_int32)(count_address)


def threadpool_ir(triple=None):
    """The runtime's LLVM module text (the pool and the heap blocks) for ``triple``
    (default: this process's triple)."""
    triple = triple or llvm.get_process_triple()
    arch, _, system = triple.partition("-")
    if arch not in _ARCH_PARTS or "linux" not in system:
        raise Error(f"the native runtime supports Linux on {', '.join(_ARCH_PARTS)}; "
                    f"target triple {triple!r} is not one of them")
    futex_nr, relax_call, relax_decl = _ARCH_PARTS[arch]
    return (f'target triple = "{triple}"\n\n'
            + _IR_FILE.read_text()
            + f"\n@tp_sys_futex = internal constant i64 {futex_nr}\n\n{relax_decl}\n\n"
            + f"define internal void @tp_relax() {{\nentry:\n  {relax_call}\n  ret void\n}}\n"
            + "\n" + _WORKSPACE_FILE.read_text())


def uses_runtime(llvm_ir):
    """Whether the IR text ``llvm_ir`` calls the runtime (a parallel loop, a heap block)."""
    return any(name in llvm_ir for name in (ENTRY_SYMBOL, *ALLOC_SYMBOLS))


def ensure_jit_pool():
    """Compile the runtime into this process once; return the address of
    `pyir_parallel_for`.

    Its exported functions are also registered with ``llvmlite.binding.add_symbol`` so that
    modules JIT-compiled later resolve calls to them. Worker threads start on the first
    launch.
    """
    global _jit
    with _lock:
        if _jit is None:
            configured_threads()
            _jit = _JitPool(_compile())
            llvm.add_symbol(ENTRY_SYMBOL, _jit.address)
            for name in ALLOC_SYMBOLS:
                llvm.add_symbol(name, _jit.engine.get_function_address(name))
        return _jit.address


def release_heap_blocks():
    """Free the large heap blocks the JIT-compiled runtime keeps for the next call of a
    kernel (workspace.ll); later calls allocate them again. Before the runtime is compiled
    there are none, and nothing is compiled to find that out. (A library written by
    `export_library` links a runtime of its own, whose blocks this leaves alone.)"""
    if _jit is not None:
        ctypes.CFUNCTYPE(None)(_jit.engine.get_function_address(RELEASE_SYMBOL))()


def num_threads():
    """Threads a parallel loop runs on, the calling thread included."""
    ensure_jit_pool()
    return _jit.num_threads()


def _compile():
    """Machine code for the pool, without LLVM's IR pipeline: the IR is hand-written SSA,
    and O2 cost 28 ms of a 52 ms first parallel build for no change in launch time."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target_machine = _host_target_machine()
    module = llvm.parse_assembly(threadpool_ir())
    module.data_layout = str(target_machine.target_data)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, target_machine)
    with machine_code():
        engine.finalize_object()
    return engine


def _host_target_machine():
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:
        features = ""
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=features,
                                        opt=3)
