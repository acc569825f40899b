"""From LLVM IR text to optimized modules and object code.

A `Machine` (a TargetMachine with its data layout and IR pipelines) readies module after
module, or turns IR text into object code in one native call (`Machine.object_code`, see
`pyir.codegen.unit_compiler`); `emit_object_unlocked` makes object code outside llvmlite's
process-wide lock. Either way `pyir.runtime.engine.JitEngine` compiles two modules at once.

``IR_LEVELS`` name the IR pipelines: "none"; "fast" (inline, SROA, simplifycfg, and loop
unrolling where codegen asked for it: cheap, and enough for IR that codegen already
vectorized, tiled and constant-folded); "O1".."O3" (LLVM's standard pipelines through the
new pass manager); "auto", the default: "O3" for a compile unit that codegen marked as
holding loops it left to LLVM (`LOOPS_FOR_LLVM`: an innermost loop of scalar code, such as
a row sum the default schedule lets LLVM vectorize, or vector math such as exp, whose
iterations LLVM interleaves), "fast" for the others (`unit_level`).
Machine code is always generated at opt level 3.

"fast" runs no instcombine: on the scheduled matmul it was 85-90 % of the pipeline's time
(12-30 ms of 13-34) and changed neither the machine code's speed nor, once codegen folded
integer constants itself, what SROA promotes to registers.

Machine code for "fast" IR is generated without loop strength reduction: on the scheduled
matmul it was a quarter of machine-code time (LSR and its IV users: 3.2 of 17 ms with one
thread, 7.5 of 26 ms with the parallel closures; 1.8 ms for a 38-instruction packing
loop), and codegen already gives it what it would find -- loop-invariant address parts
hoisted to preheaders and constant offsets last (`pyir.codegen.builder`), so that row
addresses become base + k * 4 + constant. LLVM reads the option when it builds the
machine pipeline, process-wide; `machine_code` sets it for each compilation (setting an
option parses LLVM's whole option table, ~0.25 ms, so it changes only when the level does),
and compilations that need it otherwise take turns.

Default "auto": the O3 IR passes cost 10-24 ms per kernel against 5 ms for "fast" (Zen 5),
and loops left to LLVM ran 3-5x faster for them (row sum 512x4096: 1.3 ms vs 6.8 ms), vector
exp 10 % faster; code that pyir vectorized itself ran as fast after "fast" (a
default-scheduled 1024x1024 add, column sum or register-tiled matmul) and built 1.5-10x
sooner. Its machine code, "O3" units' too, is made without loop strength reduction, as
for "fast": with it, the bench matmul's units took ~1 ms longer each (schedule + build of
the symbolic one 41.6 -> 39.5 ms without it) and the symbolic kernel ran 4-5 % slower at
n = 1024, 1-2 % at 999 (the static one 0.7-0.9 % faster), while the "O3" units of a
default-scheduled row sum, column sum and exp over 512 x 4096 ran as fast without it
(Intel Xeon, rocketlake).
"""

import contextlib
import ctypes
import threading

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from .target import Target, init_llvm
from .unit_compiler import MachineCodeError, compile_unit

IR_LEVELS = ("none", "fast", "auto", "O1", "O2", "O3")
DEFAULT_IR_LEVEL = "auto"
#: The first line of a compile unit's text that holds loops codegen left to LLVM's loop
#: passes (see the module docstring).
LOOPS_FOR_LLVM = "; pyir: loops for LLVM to vectorize"


def unit_level(llvm_ir, level):
    """The IR pipeline for the compile unit(s) ``llvm_ir`` at ``level``: "auto" resolved
    (see the module docstring), any other level as it is."""
    if level != "auto":
        return level
    return "O3" if LOOPS_FOR_LLVM in llvm_ir else "fast"


_options = threading.Condition()   # guards the three below
_lsr_disabled = False
_running = 0        # compilations inside `machine_code`
_held = threading.local()   # .levels: this thread's `machine_code` levels, outermost first


@contextlib.contextmanager
def machine_code(level=None):
    """Around one machine-code generation for IR optimized at ``level`` (an IR level, or
    "auto" for a unit of an "auto" build): without loop strength reduction for "fast" and
    "auto", with it for the others. LLVM's option is process-wide: compilations that need
    it alike run at once (a build's units, one per thread), one that needs it otherwise
    waits until none runs. ``level=None`` takes the option as it is set (hand-written IR
    such as the thread pool's, code at machine level 0). Inside its own `machine_code`, a
    thread cannot change the option (it would wait for itself): RuntimeError."""
    global _lsr_disabled, _running
    levels = _held.__dict__.setdefault("levels", [])
    disable = None if level is None else level in ("fast", "auto")
    with _options:
        if disable is not None and disable != _lsr_disabled:
            if levels:
                raise RuntimeError(f"machine code for {level!r} IR inside machine_code"
                                   f"({levels[-1]!r}) on the same thread: LLVM's loop "
                                   "strength reduction option cannot change there")
            while _running:
                _options.wait()
            init_llvm()
            llvm.set_option("pyir", f"--disable-lsr={str(disable).lower()}")
            _lsr_disabled = disable
        _running += 1
    levels.append(level)
    try:
        yield
    finally:
        levels.pop()
        with _options:
            _running -= 1
            _options.notify_all()


def parse(llvm_ir, context=None):
    """A verified ModuleRef from IR text (in LLVM's global context unless ``context``)."""
    init_llvm()
    mod = llvm.parse_assembly(llvm_ir, context)
    mod.verify()
    return mod


def infer_attributes(mod, fn):
    """Let LLVM infer the attributes of the functions of ModuleRef ``mod`` in place (its
    post-order function-attributes pass: what each pointer argument is used for, such as
    ``readonly``), ``fn`` among them even if nothing calls it (it is made external: LLVM's
    call graph starts from external functions)."""
    fn.linkage = "external"
    pb = llvm.create_pass_builder(Target.from_string("llvm").create_target_machine(),
                                  llvm.create_pipeline_tuning_options())
    pm = llvm.create_new_module_pass_manager()
    pm.add_post_order_function_attributes_pass()
    pm.run(mod, pb)


class Pipeline:
    """The IR pipeline ``level`` for machine ``tm``; `run` optimizes a module. A "fast" or
    "none" pipeline runs over any number of modules; LLVM's default pipelines ("O1".."O3"),
    as llvmlite builds them, only once (a second run fails an LLVM assertion).

    ``unroll=False`` leaves the loop unroller out of "fast" (for IR whose loops carry no
    unroll hint: unrolling them unasked doubled machine-code time for scheduled kernels).
    """

    def __init__(self, tm, level="O3", unroll=True):
        self.reusable = level in ("none", "fast")
        if level not in IR_LEVELS or level == "auto":
            raise ValueError(f"unknown IR pipeline {level!r}; expected one of "
                             f"{', '.join(x for x in IR_LEVELS if x != 'auto')} (a compile "
                             "unit's level: 'auto' is resolved by unit_level)")
        self._passes = None
        if level == "none":
            return
        pto = llvm.create_pipeline_tuning_options(
            speed_level=1 if level == "fast" else int(level[1]))
        pb = llvm.create_pass_builder(tm, pto)
        if level == "fast":
            pm = llvm.create_new_module_pass_manager()
            pm.add_always_inliner_pass()
            pm.add_sroa_pass()
            pm.add_simplify_cfg_pass()
            if unroll:
                pm.add_loop_unroll_pass()
                pm.add_sroa_pass()  # tiles indexed by an unrolled loop become registers
        else:
            pm = pb.getModulePassManager()
        self._passes = (pm, pb, pto)

    def run(self, mod):
        """Optimize ModuleRef ``mod`` in place; return it."""
        if self._passes is not None:
            pm, pb, _ = self._passes
            pm.run(mod, pb)
        return mod

    def native_passes(self):
        """(module pass manager, pass builder) as pointers for
        `pyir.codegen.unit_compiler`; (None, None) for no passes."""
        if self._passes is None:
            return None, None
        pm, pb, _ = self._passes
        return pm._ptr, pb._ptr


def optimize(mod, tm, level="O3", unroll=True):
    """Run the IR pipeline ``level`` over ModuleRef ``mod`` in place for machine ``tm``
    (see `Pipeline`)."""
    return Pipeline(tm, level, unroll).run(mod)


class Machine:
    """A TargetMachine for ``target`` (``reloc`` as in `optimize_and_emit`; ``opt``, the
    machine-code optimization level), its data layout and its IR pipelines, made once:
    `prepare` readies any number of modules for it, one thread at a time. (A JIT engine
    takes ownership of the machine it is given: give it a machine of its own.)"""

    def __init__(self, target, reloc="default", opt=3):
        self.target = Target.from_string(target)
        self.opt = opt
        self.tm = self.target.create_target_machine(reloc=reloc, opt=opt)
        self.data_layout = str(self.tm.target_data)
        self._pipelines = {}

    def prepare(self, llvm_ir, level=DEFAULT_IR_LEVEL, context=None):
        """``llvm_ir`` parsed (in ``context``, see `parse`), for this machine, optimized."""
        mod = parse(llvm_ir, context)
        mod.triple = self.target.triple
        mod.data_layout = self.data_layout
        return self._pipeline(llvm_ir, level).run(mod)

    def object_code(self, llvm_ir, level=DEFAULT_IR_LEVEL):
        """The object code of ``llvm_ir`` parsed in an LLVM context of its own, verified,
        optimized at ``level`` for this machine, in one native call where llvmlite allows
        (`pyir.codegen.unit_compiler`), else through llvmlite's calls, under the
        `machine_code` of ``level``. RuntimeError for IR that LLVM rejects,
        `MachineCodeError` when machine code fails."""
        pipeline = self._pipeline(llvm_ir, level)
        with machine_code(level if self.opt else None):
            code = compile_unit(llvm_ir, self.target.triple, self.data_layout, self.tm,
                                pipeline)
            if code is not None:
                return code
            mod = self.prepare(llvm_ir, level, llvm.create_context())
            try:
                return emit_object_unlocked(self.tm, mod)
            except RuntimeError as e:
                raise MachineCodeError(str(e)) from None
            finally:
                mod.close()

    def _pipeline(self, llvm_ir, level):
        key = (unit_level(llvm_ir, level),
               any(f"llvm.loop.unroll.{k}" in llvm_ir for k in ("full", "enable", "count")))
        pipeline = self._pipelines.get(key) or Pipeline(self.tm, *key)
        if pipeline.reusable:
            self._pipelines[key] = pipeline
        return pipeline


def machine_level(llvm_ir):
    """The machine-code optimization level for the module ``llvm_ir``: 0 when each function
    it defines is ``optnone`` (`pyir.codegen.emit_stmt.unoptimized`) or inlined into one
    (internal and ``alwaysinline``), else 3. Such glue LLVM's O0 machine-code pipeline
    compiles in a third of the time of the O3 one (the bench matmul's entry unit: 1.0 ms
    instead of 2.9), to code that differs in register allocation only."""
    for line in llvm_ir.splitlines():
        if line.startswith("define ") and " optnone" not in line and not (
                line.startswith("define internal ") and " alwaysinline" in line):
            return 3
    return 0


def optimize_and_emit(llvm_ir, target="llvm", level=DEFAULT_IR_LEVEL, reloc="default"):
    """Parse and optimize ``llvm_ir``; return (ModuleRef, a fresh TargetMachine at
    `machine_level`).

    ``reloc="pic"`` for object code that goes into a shared library, ``"default"`` for
    the JIT (hand the machine to exactly one engine: the engine takes ownership).
    """
    machine = Machine(target, reloc, machine_level(llvm_ir))
    return machine.prepare(llvm_ir, level), machine.tm


def emit_object_unlocked(tm, mod):
    """``tm.emit_object(mod)`` outside llvmlite's process-wide lock, so that two threads
    generate machine code at once (ctypes lets go of the GIL during the call).

    llvmlite serializes every call into LLVM; LLVM itself needs only that no two threads
    share an LLVMContext or a TargetMachine. Callers give each module its own context
    (`parse`) and each thread its own machine, and hold `machine_code` around it.
    """
    emit = getattr(ffi.lib.LLVMPY_TargetMachineEmitToMemory, "_cfn", None)
    if emit is None:   # an llvmlite without the unlocked function: take turns
        return tm.emit_object(mod)
    with ffi.OutputString() as err:
        buffer = emit(tm, mod, 1, err)
        if not buffer:
            raise RuntimeError(str(err))
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer),
                                ffi.lib.LLVMPY_GetBufferSize(buffer))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)


def emit_assembly(llvm_ir, target="llvm", level=DEFAULT_IR_LEVEL):
    """The assembly of ``llvm_ir`` as `Machine.object_code` makes its machine code."""
    mod, tm = optimize_and_emit(llvm_ir, target, level)
    with machine_code(level):
        return tm.emit_assembly(mod)
