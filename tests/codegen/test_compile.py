"""Machine code generation options: loop strength reduction is off for "fast" IR and every
unit of an "auto" build, and back on for everything else afterwards, also when two threads
compile at once (LLVM's option is process-wide); a `Machine` readies
module after module; emission outside llvmlite's lock makes the same object code, and so
does a unit compiled in one native call (`pyir.codegen.unit_compiler`), which names IR that
LLVM rejects in LLVM's words, as llvmlite's calls do."""

import threading

import llvmlite.binding as llvm
import pytest

import pyir
from pyir.codegen import compile as C
from pyir.codegen import unit_compiler
from pyir.runtime import engine
from pyir.codegen.target import Target

#: ``sum(a[i * s] + a[i * s + n])``: strength reduction turns ``i * s`` into a pointer bump.
STRIDED = '''
define float @f(ptr %a, i64 %n, i64 %s) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %acc = phi float [0.0, %entry], [%acc3, %loop]
  %x = mul i64 %i, %s
  %p = getelementptr float, ptr %a, i64 %x
  %v = load float, ptr %p
  %x2 = add i64 %x, %n
  %q = getelementptr float, ptr %a, i64 %x2
  %w = load float, ptr %q
  %acc2 = fadd float %acc, %v
  %acc3 = fadd float %acc2, %w
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret float %acc3
}
'''


def machine_asm(level):
    """Assembly of STRIDED (no IR passes) with the machine options of ``level``."""
    mod, tm = C.optimize_and_emit(STRIDED, Target.from_string("llvm"), "none")
    with C.machine_code(level):
        return tm.emit_assembly(mod)


def test_strength_reduction_is_off_for_fast_ir_only_and_comes_back():
    assert "imul" not in machine_asm("O3")
    assert "imul" in machine_asm("fast")
    assert "imul" not in machine_asm("O3")


def test_strength_reduction_comes_back_after_a_failed_compilation():
    with pytest.raises(RuntimeError):
        with C.machine_code("fast"):
            raise RuntimeError("LLVM failed")
    assert "imul" not in machine_asm("O3")


def reference_object(ir_level, machine_level, text=STRIDED):
    """Object code of ``text`` optimized at ``ir_level`` with the machine options of
    ``machine_level``, on this thread."""
    machine = C.Machine(Target.from_string("llvm"))
    mod = machine.prepare(text, ir_level, llvm.create_context())
    with C.machine_code(machine_level):
        return C.emit_object_unlocked(machine.tm, mod)


def test_every_unit_of_an_auto_build_gets_machine_code_without_strength_reduction():
    machine = C.Machine(Target.from_string("llvm"))
    assert machine.object_code(STRIDED, "auto") == reference_object("fast", "fast") \
        != reference_object("fast", "O3")
    with_loops = C.LOOPS_FOR_LLVM + "\n" + STRIDED     # loops left to LLVM: "O3" IR passes
    assert machine.object_code(with_loops, "auto") == reference_object("O3", "fast") \
        != reference_object("O3", "O3")


def test_threads_that_need_the_option_otherwise_take_turns():
    """Two threads compile at once, one "fast" (without strength reduction), one "none"
    (with it): each gets the object code it gets alone."""
    expected = {level: reference_object(level, level) for level in ("fast", "none")}
    assert expected["fast"] != reference_object("fast", "none")
    results = {level: [] for level in expected}

    def compile_many(level):
        machine = C.Machine(Target.from_string("llvm"))
        results[level] += [machine.object_code(STRIDED, level) for _ in range(15)]

    threads = [threading.Thread(target=compile_many, args=(level,)) for level in expected]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for level, codes in results.items():
        assert codes == [expected[level]] * 15, level


def test_a_thread_cannot_change_the_option_inside_its_own_machine_code():
    with C.machine_code("O3"):
        with pytest.raises(RuntimeError, match=r"machine code for 'fast' IR inside "
                           r"machine_code\('O3'\) on the same thread: LLVM's loop strength "
                           r"reduction option cannot change there"):
            with C.machine_code("fast"):
                pass
        with C.machine_code(None), C.machine_code("O1"):   # the option as it is: no change
            pass
    assert "imul" in machine_asm("fast")


@pytest.mark.parametrize("level", ["fast", "O3"])
def test_a_machine_prepares_module_after_module(level):
    """A `Machine` keeps its "fast" pipeline for the next module; LLVM's default pipelines
    (which fail an assertion when run twice) are built anew each time. Every module comes
    out the same."""
    import llvmlite.binding as llvm
    machine = C.Machine(Target.from_string("llvm"))
    texts = [str(machine.prepare(STRIDED, level, llvm.create_context())) for _ in range(3)]
    assert texts[0] == texts[1] == texts[2]
    assert len(machine._pipelines) == (level == "fast")


def test_unlocked_emission_makes_the_same_object_code():
    machine = C.Machine(Target.from_string("llvm"))
    mod = machine.prepare(STRIDED, "fast")
    with C.machine_code("fast"):
        assert C.emit_object_unlocked(machine.tm, mod) == machine.tm.emit_object(mod)


@pytest.mark.parametrize("level", ["none", "fast", "O3"])
def test_one_native_call_makes_the_object_code_llvmlites_calls_make(level):
    assert unit_compiler._get_native() is not None   # this llvmlite's C functions are at hand
    machine = C.Machine(Target.from_string("llvm"))
    with C.machine_code(level):
        native = machine.object_code(STRIDED, level)
        mod = machine.prepare(STRIDED, level, llvm.create_context())
        assert native == C.emit_object_unlocked(machine.tm, mod)


@pytest.fixture(params=["one native call", "llvmlite's calls"])
def unit_path(request, monkeypatch):
    if request.param == "llvmlite's calls":
        monkeypatch.setattr(unit_compiler, "_native", False)
    return request.param


def test_without_llvmlites_c_functions_a_unit_compiles_through_its_calls(monkeypatch):
    machine = C.Machine(Target.from_string("llvm"))
    with C.machine_code("fast"):
        native = machine.object_code(STRIDED, "fast")
        monkeypatch.setattr(unit_compiler, "_native", False)
        pipeline = machine._pipeline(STRIDED, "fast")
        assert unit_compiler.compile_unit(STRIDED, machine.target.triple, machine.data_layout,
                                          machine.tm, pipeline) is None
        assert machine.object_code(STRIDED, "fast") == native


@pytest.mark.parametrize("text, words", [
    ("define i32 @f(ptr %s) {\n  ret i64 0\n}\n",
     r"LLVM IR parsing error\n<string>:2:7: error: value doesn't match function result type "
     r"'i32'"),
    ("define i32 @f() {\nentry:\n  %x = add i32 %y, 1\n  %y = add i32 0, 0\n  ret i32 %x\n}\n",
     r"Instruction does not dominate all uses!\n  %y = add i32 0, 0\n  %x = add i32 %y, 1\n$"),
])
def test_ir_llvm_rejects_is_named_in_llvms_words(unit_path, text, words):
    with pytest.raises(pyir.Error, match=r"LLVM rejected the IR of module: " + words):
        with engine.JitEngine(Target.from_string("llvm")) as jit:
            jit.add(text)
