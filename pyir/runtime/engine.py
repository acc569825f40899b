"""JIT compilation of LLVM IR text with llvmlite (MCJIT).

A `JitEngine` parses, verifies and optimizes one module for a `Target` (with
`pyir.codegen.compile`), compiles it to machine code in memory and keeps the engine and
its target machine alive as long as it lives (MCJIT owns the target machine it is given,
so every engine gets its own). llvmlite is imported only when something is compiled, never
by ``import pyir`` or `pyir.load_module`.
"""

from ..errors import Error

#: Number of `JitEngine`s made (tests check that a cache hit does no LLVM work).
compile_count = 0

_LEVEL_OF_INT = {0: "none", 1: "O1", 2: "O2", 3: "O3"}


def ir_level(opt_level):
    """The IR pipeline for ``opt_level``: a name in `pyir.codegen.compile.IR_LEVELS`
    ("none", "fast", "O1".."O3") or an int 0-3."""
    from ..codegen.compile import IR_LEVELS
    level = _LEVEL_OF_INT.get(opt_level, opt_level)
    if level not in IR_LEVELS:
        raise Error(f"opt_level {opt_level!r} is not one of {', '.join(IR_LEVELS)} or 0-3")
    return level


def prepare(llvm_ir, target, opt_level, reloc="default", what="module"):
    """Parse, verify and optimize ``llvm_ir``; return (module, a new target machine)."""
    from ..codegen.compile import optimize_and_emit
    try:
        return optimize_and_emit(llvm_ir, target, ir_level(opt_level), reloc=reloc)
    except RuntimeError as e:
        raise Error(f"LLVM rejected the IR of {what}: {e}") from None


#: Compiler runtime functions LLVM's machine code may call (float16 conversions without a
#: machine instruction, e.g. float64 -> float16), taken from libgcc_s when present.
RUNTIME_HELPERS = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__extendhfdf2",
                   "__powisf2", "__powidf2")
_helpers_added = False


def _add_runtime_helpers():
    """Give the JIT the `RUNTIME_HELPERS` (unresolved, a call jumped to address 0)."""
    global _helpers_added
    if _helpers_added:
        return
    import ctypes
    import ctypes.util

    import llvmlite.binding as llvm
    _helpers_added = True
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("gcc_s") or "libgcc_s.so.1")
    except OSError:
        return
    for name in RUNTIME_HELPERS:
        fn = getattr(lib, name, None)
        if fn is not None:
            llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)


def register_symbols(llvm_ir, symbols):
    """Make the names ``llvm_ir`` calls outside itself resolvable by the JIT: the thread
    pool's ``pyir_parallel_for``, the compiler runtime's helpers, and ``symbols`` (name ->
    address of an extern kernel)."""
    import llvmlite.binding as llvm
    _add_runtime_helpers()
    if "pyir_parallel_for" in llvm_ir:
        from .threadpool import ensure_jit_pool
        ensure_jit_pool()
    for name, address in (symbols or {}).items():
        llvm.add_symbol(name, address)


class JitEngine:
    """Machine code for ``llvm_ir`` in this process; ``address(name)`` of its functions."""

    def __init__(self, llvm_ir, target, opt_level="O3", symbols=None, name="module"):
        global compile_count
        compile_count += 1
        import llvmlite.binding as llvm

        from ..codegen.compile import machine_code
        register_symbols(llvm_ir, symbols)
        self.module, tm = prepare(llvm_ir, target, opt_level, what=name)
        self._engine = llvm.create_mcjit_compiler(self.module, tm)
        with machine_code(ir_level(opt_level)):
            self._engine.finalize_object()
        self._engine.run_static_constructors()

    def address(self, name):
        address = self._engine.get_function_address(name)
        if not address:
            raise Error(f"the compiled module has no function named {name!r}")
        return address

    def optimized_ir(self):
        """The module's LLVM IR after the optimization pipeline."""
        return str(self.module)
