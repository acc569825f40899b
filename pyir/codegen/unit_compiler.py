"""A compile unit from LLVM IR text to object code in one native call (unit_compiler.ll).

Through llvmlite, a unit takes about 15 calls into LLVM: make a context, parse, verify, set
the triple and the data layout, run the IR passes, make machine code, read the buffer,
dispose of it all. Each call lets go of the GIL and takes it back on return, and the thread
that compiles units beside Python's code generation (`pyir.runtime.engine.JitEngine`) waits
for it there each time. unit_compiler.ll makes the same llvmlite C functions' calls in
sequence, natively, so that a unit takes the GIL once (`compile_unit`). On the 2-core
machine kind (Xeon), beside a thread running Python, the bench matmul's main unit took
6.3 -> 7.4 ms through llvmlite's calls and 6.0 -> 6.2 ms in one call; its schedule + build
(medians of 15, mean over 5-8 runs) took 30.6 -> 28.8 ms static, 40.7 -> 39.1 ms
symbolic, 53.1 -> 49.6 ms tensorized.

Where this llvmlite does not expose its C functions as ctypes functions (``_cfn``, which
`pyir.codegen.compile.emit_object_unlocked` also reads), `compile_unit` returns None and
the caller takes llvmlite's calls.
"""

import ctypes
import pathlib
import threading

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from .target import init_llvm

#: The llvmlite C functions unit_compiler.ll calls, in the order of its table.
FUNCTIONS = ("LLVMPY_ContextCreate", "LLVMPY_ParseAssembly", "LLVMPY_VerifyModule",
             "LLVMPY_DisposeString", "LLVMPY_SetTarget", "LLVMPY_SetDataLayout",
             "LLVMPY_RunNewModulePassManager", "LLVMPY_TargetMachineEmitToMemory",
             "LLVMPY_GetBufferStart", "LLVMPY_GetBufferSize", "LLVMPY_DisposeModule",
             "LLVMPY_ContextDispose")
_IR_FILE = pathlib.Path(__file__).with_name("unit_compiler.ll")
_P = ctypes.c_void_p
_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int32, _P, ctypes.c_char_p, ctypes.c_char_p,
                              ctypes.c_char_p, _P, _P, _P, _P, _P)


class MachineCodeError(RuntimeError):
    """LLVM could not make machine code for a module it parsed and verified."""


class _Native:
    """The JIT-compiled unit_compiler.ll, the table of llvmlite functions it calls, and
    those llvmlite functions that end a call without needing LLVM long enough to let go of
    the GIL for (``PYFUNCTYPE``: disposing of a buffer or a message)."""

    def __init__(self, addresses):
        init_llvm()
        mod = llvm.parse_assembly(_IR_FILE.read_text())
        mod.verify()
        self.engine = llvm.create_mcjit_compiler(
            mod, llvm.Target.from_default_triple().create_target_machine(opt=0))
        self.engine.finalize_object()
        self.table = (_P * len(FUNCTIONS))(*[addresses[name] for name in FUNCTIONS])
        self.call = _SIGNATURE(self.engine.get_function_address("pyir_compile_unit"))
        self.dispose_buffer = ctypes.PYFUNCTYPE(None, _P)(addresses["LLVMPY_DisposeMemoryBuffer"])
        self.dispose_string = ctypes.PYFUNCTYPE(None, _P)(addresses["LLVMPY_DisposeString"])


def _addresses():
    """The addresses of `FUNCTIONS` and of LLVMPY_DisposeMemoryBuffer, or None."""
    out = {}
    for name in (*FUNCTIONS, "LLVMPY_DisposeMemoryBuffer"):
        cfn = getattr(getattr(ffi.lib, name, None), "_cfn", None)
        if cfn is None:
            return None
        out[name] = ctypes.cast(cfn, _P).value
    return out


_lock = threading.Lock()
_native = None


def _get_native():
    global _native
    with _lock:
        if _native is None:
            addresses = _addresses()
            _native = _Native(addresses) if addresses is not None else False
    return _native or None


def compile_unit(llvm_ir, triple, data_layout, tm, pipeline):
    """The object code (bytes) of the IR text ``llvm_ir`` parsed in an LLVM context of its
    own, verified, given ``triple`` and ``data_layout``, optimized by ``pipeline`` (a
    `pyir.codegen.compile.Pipeline`) and compiled by TargetMachineRef ``tm``; None where
    llvmlite does not allow it (see the module docstring). RuntimeError with LLVM's
    message for IR that LLVM rejects (the words llvmlite's own calls use),
    `MachineCodeError` when machine code fails."""
    native = _get_native()
    if native is None:
        return None
    passes = pipeline.native_passes()
    out = (_P * 3)()
    err = _P()
    status = native.call(native.table, llvm_ir.encode("utf-8"), triple.encode("utf-8"),
                         data_layout.encode("utf-8"), *passes, tm._ptr, out,
                         ctypes.byref(err))
    if status:
        message = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
        if err.value:
            native.dispose_string(err)
        if status == 1:
            raise RuntimeError(f"LLVM IR parsing error\n{message}")
        raise (RuntimeError if status == 2 else MachineCodeError)(message)
    try:
        return ctypes.string_at(out[1], out[2])
    finally:
        native.dispose_buffer(out[0])
