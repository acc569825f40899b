"""Machine code generation options: loop strength reduction is off for "fast" IR only, and
back on for everything else afterwards (LLVM's option is process-wide); a `Machine` readies
module after module; emission outside llvmlite's lock makes the same object code, and so
does a unit compiled in one native call (`pyir.codegen.unit_compiler`), which names IR that
LLVM rejects in LLVM's words, as llvmlite's calls do."""

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
