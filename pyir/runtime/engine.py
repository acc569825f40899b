"""JIT compilation of LLVM IR text with llvmlite (MCJIT), on two threads.

A `JitEngine` compiles the compile units of one module (`pyir.codegen.llvm.codegen_units`)
for a `Target`. `add` hands a unit to a background thread, which parses, verifies and
optimizes it in an LLVM context of its own and makes its machine code (in one native call,
`pyir.codegen.compile.Machine.object_code`), so that LLVM works on one unit while Python
generates the next. When the
``with`` block ends, the calling thread compiles the units the background thread has not
started (the last one, usually), and one MCJIT engine loads and links every unit's object
code. The engine keeps the code and its target machine alive as long as it lives (MCJIT
owns the target machine it is given, so every engine gets its own). llvmlite is imported
only when something is compiled, never by ``import pyir`` or `pyir.load_module`.
"""

import concurrent.futures
import contextlib
import functools
import numbers
import os
import sys
import threading

from ..errors import ArgumentTypeError, ArgumentValueError, Error

#: Number of `JitEngine`s made (tests check that a cache hit does no LLVM work).
compile_count = 0

_LEVEL_OF_INT = {0: "none", 1: "O1", 2: "O2", 3: "O3"}

#: The interpreter's thread switch interval while a `JitEngine` compiles (seconds): the
#: background thread needs the GIL for a moment after each call into LLVM (one per unit,
#: see `pyir.codegen.unit_compiler`; ~25 through llvmlite's calls), and waits up to this
#: long each time for the thread generating code. Python's default (5 ms) made the bench
#: matmul's build slower than on one thread; 0.5 ms cost 6 ms more than 0.1 ms, and
#: 0.02 ms 1-3 ms less (measured with llvmlite's calls).
SWITCH_INTERVAL = 2e-5

#: Held while a `JitEngine` compiles: one engine at a time per process (it sets the
#: process-wide switch interval and restores it when done).
_ENGINES = threading.RLock()


def ir_level(opt_level):
    """The IR pipeline for ``opt_level``: a name in `pyir.codegen.compile.IR_LEVELS`
    ("none", "fast", "O1".."O3") or an int 0-3 (not a bool or a float, which would pass
    for one of them: True == 1, 2.0 == 2)."""
    from ..codegen.compile import IR_LEVELS
    expected = f"one of {', '.join(map(repr, IR_LEVELS))} or an int 0-3"
    if isinstance(opt_level, bool) or not isinstance(opt_level, (str, numbers.Integral)):
        raise ArgumentTypeError(f"opt_level must be {expected}, got "
                                f"{type(opt_level).__name__} {opt_level!r}")
    level = _LEVEL_OF_INT.get(opt_level, opt_level)
    if level not in IR_LEVELS:
        raise ArgumentValueError(f"opt_level must be {expected}, got {opt_level!r}")
    return level


def prepare(llvm_ir, target, opt_level, reloc="default", what="module"):
    """Parse, verify and optimize ``llvm_ir``; return (module, a new target machine)."""
    from ..codegen.compile import optimize_and_emit
    with ir_rejected(what):
        return optimize_and_emit(llvm_ir, target, ir_level(opt_level), reloc=reloc)


@contextlib.contextmanager
def ir_rejected(what):
    """LLVM's complaint about the IR of ``what`` as an `Error`."""
    try:
        yield
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


def register_symbols(symbols):
    """Make the names generated code calls outside itself resolvable by the JIT: the
    compiler runtime's helpers and ``symbols`` (name -> address of an extern kernel)."""
    import llvmlite.binding as llvm
    _add_runtime_helpers()
    for name, address in (symbols or {}).items():
        llvm.add_symbol(name, address)


_background = None


def _background_thread():
    """The executor that makes machine code beside the calling thread, or None on a
    machine with one core for this process."""
    global _background
    if _background is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count() or 1
        _background = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="pyir-llvm") if cores > 1 else False
    return _background or None


def _forget_background():
    """In a child made by ``fork``: the parent's thread did not come along, and its executor
    would queue units that nothing compiles (the child's first build waited forever)."""
    global _background
    _background = None


os.register_at_fork(after_in_child=_forget_background)


class JitEngine:
    """Machine code for LLVM IR in this process; ``address(name)`` of its functions.

    ``with JitEngine(target) as engine: engine.add(unit_text) ...``: the units are
    compiled and linked when the block ends without an exception.
    """

    def __init__(self, target, opt_level="O3", symbols=None, name="module"):
        global compile_count
        compile_count += 1
        self.target = target
        self.level = ir_level(opt_level)
        self.name = name
        self.units = []       # IR texts, as added
        self._jobs = []       # their (compile, future on the background thread or None)
        self._engine = None
        self._stack = contextlib.ExitStack()
        register_symbols(symbols)

    def __enter__(self):
        self._stack.enter_context(_ENGINES)
        self._stack.callback(sys.setswitchinterval, sys.getswitchinterval())
        self._stack.callback(self._wait)
        sys.setswitchinterval(SWITCH_INTERVAL)
        return self

    def __exit__(self, kind, value, traceback):
        with self._stack:
            if kind is None:
                self._link()

    def add(self, llvm_ir):
        """Compile one unit (see the module docstring)."""
        from .threadpool import ensure_jit_pool, uses_runtime
        if uses_runtime(llvm_ir):
            ensure_jit_pool()
        self.units.append(llvm_ir)
        what = self.name if len(self.units) == 1 else f"{self.name} (unit {len(self.units)})"
        job = functools.partial(_compile, llvm_ir, self.target, self.level, what)
        background = _background_thread()
        self._jobs.append((job, background and background.submit(job)))

    def _link(self):
        import llvmlite.binding as llvm
        objects = [None] * len(self._jobs)
        for k in reversed(range(len(self._jobs))):   # the newest, while the thread is busy
            job, future = self._jobs[k]
            if future is None or future.cancel():
                objects[k] = job()
        # Made while the background thread may still be on its unit (~0.6 ms).
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""),
                                                  self.target.create_target_machine())
        target = self.target   # (not self: the engine would refer back to this object)
        self._engine.set_object_cache(getbuffer_func=lambda module: _empty_object(target))
        for obj, (_, future) in zip(objects, self._jobs):
            obj = obj if obj is not None else future.result()
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()

    def _wait(self):
        """Let the background thread finish this engine's units (also after an error)."""
        concurrent.futures.wait([future for _, future in self._jobs if future is not None])
        self._jobs = []

    def address(self, name):
        from llvmlite.binding import ffi
        # (llvmlite's get_function_address encodes the name as ASCII: "fünf" failed)
        address = ffi.lib.LLVMPY_GetFunctionAddress(self._engine, name.encode("utf-8"))
        if not address:
            raise Error(f"the compiled module has no function named {name!r}")
        return address

    def optimized_ir(self):
        """The units' LLVM IR after the optimization pipeline (run again)."""
        return joined([str(prepare(u, self.target, self.level)[0]) for u in self.units])


_thread_machines = threading.local()


def _machine(target, opt):
    """This thread's `pyir.codegen.compile.Machine` for ``target`` at machine-code level
    ``opt``, made once: a fresh TargetMachine for every unit cost ~1 ms more per unit (its
    subtarget is built at its first use), and each llvmlite call of the background thread
    waits for the GIL."""
    from ..codegen.compile import Machine
    machines = _thread_machines.__dict__.setdefault("by_target", {})
    if (target, opt) not in machines:
        machines[target, opt] = Machine(target, opt=opt)
    return machines[target, opt]


def _compile(llvm_ir, target, level, what):
    """The object code of one unit, parsed and optimized in an LLVM context of its own
    (`pyir.codegen.compile.Machine.object_code`)."""
    from ..codegen.compile import machine_level
    from ..codegen.unit_compiler import MachineCodeError
    machine = _machine(target, machine_level(llvm_ir))
    with ir_rejected(what):
        try:
            return machine.object_code(llvm_ir, level)
        except MachineCodeError as e:   # (a RuntimeError, but not a rejection of the IR)
            raise Error(f"LLVM could not generate machine code for {what}: {e}") from None


_empty_objects = {}


def _empty_object(target):
    """The object code of an empty module for ``target``, made once. MCJIT needs a module
    of its own, and the units come as object code: given through the engine's object
    cache, this saves each build a machine-code pipeline for nothing (2.6 M instructions
    of the bench matmul's 360 M, the pipeline and its target machine's subtarget, on the
    thread that links)."""
    found = _empty_objects.get(target)
    if found is None:
        found = _empty_objects[target] = _machine(target, 0).object_code("", "none")
    return found


def joined(units):
    """One text for the IR of several compile units, each under a heading comment."""
    if len(units) == 1:
        return units[0]
    return "\n".join(f"; ---- compile unit {k} of {len(units)} ----\n{text}"
                     for k, text in enumerate(units, 1))
