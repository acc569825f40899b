"""Audit of the FFI's error messages: the registry and ``pyir.ffi.extern`` messages that no
other test reached, each triggered through the public API and checked for its words."""

import pytest

import pyir
from pyir.script import ParseError
from pyir.script import tensor as T

from source_lines import line_in

COPY_IR = """define void @test_audit_copy(ptr %x, ptr %out) {
  %a = load float, ptr %x
  store float %a, ptr %out
  ret void
}
"""


@pytest.fixture
def names():
    """Names registered by a test, removed after it."""
    taken = []
    yield taken
    for name in taken:
        pyir.ffi.remove_global_func(name)


def test_register_func_refuses_what_is_not_callable(names):
    """A number registered as a function is refused, naming the name."""
    names.append("test.audit_number")
    with pytest.raises(pyir.ArgumentTypeError, match=r"^register_func\('test.audit_number'"
                                                     r"\): 3 is not callable$"):
        pyir.ffi.register_func("test.audit_number", 3)
    assert pyir.ffi.get_global_func("test.audit_number", allow_missing=True) is None


@pytest.mark.parametrize("as_decorator", [False, True])
def test_registering_a_name_twice_needs_override(names, as_decorator):
    """The second registration is refused and the first function stays registered."""
    names.append("test.audit_twice")

    def first():
        return 1

    pyir.ffi.register_func("test.audit_twice", first)
    with pytest.raises(pyir.Error, match=r"^a global function named 'test.audit_twice' is "
                                         r"already registered; pass override=True to replace "
                                         r"it$"):
        if as_decorator:
            pyir.ffi.register_func("test.audit_twice")(lambda: 2)
        else:
            pyir.ffi.register_func("test.audit_twice", lambda: 2)
    assert pyir.ffi.get_global_func("test.audit_twice") is first


def test_declaring_a_kernel_twice_needs_override(names):
    """A second pyir.ffi.extern of one name, without override=True, is refused."""
    names.append("test.audit_kernel")

    @pyir.ffi.extern("test.audit_kernel", llvm_ir=COPY_IR)
    def kernel(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")): ...

    with pytest.raises(pyir.Error, match=r"^a global function named 'test.audit_kernel' is "
                                         r"already registered; pass override=True"):
        @pyir.ffi.extern("test.audit_kernel", llvm_ir=COPY_IR)
        def again(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")): ...
    assert pyir.ffi.get_global_func("test.audit_kernel") is kernel


@pytest.mark.parametrize("options", [{}, {"symbol": object(), "llvm_ir": COPY_IR}])
def test_extern_needs_exactly_one_of_symbol_or_llvm_ir(options):
    """Neither or both of symbol= and llvm_ir= is refused before any declaration."""
    with pytest.raises(pyir.Error, match=r"^pyir.ffi.extern\('test.audit_none'\) needs exactly "
                                         r"one of symbol= \(a ctypes function\) or llvm_ir= "
                                         r"\(LLVM IR text\)$"):
        pyir.ffi.extern("test.audit_none", **options)


@pytest.mark.parametrize("text, count", [
    ("declare void @test_audit_copy(ptr, ptr)\n", 0),
    (COPY_IR + COPY_IR.replace("@test_audit_copy", "@test_audit_other"), 2),
])
def test_llvm_ir_must_define_exactly_one_function(text, count):
    """LLVM IR text defining no function, or two, is refused where it is declared."""
    with pytest.raises(pyir.Error, match=rf"^pyir.ffi.extern\('test.audit_defines'\): the LLVM "
                                         rf"IR text must define exactly one function, it "
                                         rf"defines {count}$"):
        @pyir.ffi.extern("test.audit_defines", llvm_ir=text, override=True)
        def kernel(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")): ...
    assert pyir.ffi.get_global_func("test.audit_defines", allow_missing=True) is None


def test_a_missing_function_suggests_one_of_the_same_last_name(names):
    """get_global_func of an unregistered name names a registered one ending alike."""
    names.append("test.audit_elsewhere.audit_scale_q7")
    pyir.ffi.register_func("test.audit_elsewhere.audit_scale_q7", lambda x: x)
    with pytest.raises(pyir.Error, match=r"^no global function named 'mylib.audit_scale_q7' is "
                                         r"registered; did you mean "
                                         r"'test.audit_elsewhere.audit_scale_q7'\?$"):
        pyir.ffi.get_global_func("mylib.audit_scale_q7")


def test_a_mistake_in_a_kernel_declaration_points_at_its_line():
    """A misspelt dtype in a kernel's declaration is a ParseError at this file's line."""
    with pytest.raises(ParseError) as info:
        @pyir.ffi.extern("test.audit_typo", llvm_ir=COPY_IR, override=True)
        def kernel(x: T.Buffer((1,), "flaot32"), out: T.Buffer((1,), "float32")): ...
    err = info.value
    line = line_in(test_a_mistake_in_a_kernel_declaration_points_at_its_line, '"flaot32"')
    assert (err.filename, err.line) == (__file__, line)
    assert err.message == "unknown dtype 'flaot32'; did you mean 'float32'?"
    assert pyir.ffi.get_global_func("test.audit_typo", allow_missing=True) is None


def test_a_kernel_declaration_with_a_body_is_refused_at_its_line():
    """A body other than ``...`` (after a docstring) was dropped without a word: the
    kernel's code is what symbol= or llvm_ir= gives."""
    with pytest.raises(ParseError) as info:
        @pyir.ffi.extern("test.audit_body", llvm_ir=COPY_IR, override=True)
        def kernel(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")):
            """Copies x."""
            out[0] = x[0]
    err = info.value
    line = line_in(test_a_kernel_declaration_with_a_body_is_refused_at_its_line, "out[0] = x[0]")
    assert (err.filename, err.line) == (__file__, line)
    assert err.message == ("the body of a kernel declaration is ... (a docstring may come "
                           "first): the kernel's code is what symbol= or llvm_ir= gives")
    assert pyir.ffi.get_global_func("test.audit_body", allow_missing=True) is None

    @pyir.ffi.extern("test.audit_body", llvm_ir=COPY_IR, override=True)
    def documented(x: T.Buffer((1,), "float32"), out: T.Buffer((1,), "float32")):
        """Copies x."""
        ...
    pyir.ffi.remove_global_func("test.audit_body")
