"""Function names that are not Python identifiers (a kernel's "mylib.saxpy"): the script
writes them as ``@T.prim_func(name="...")`` / ``@R.function(name="...")`` above a ``def``
the module's code refers to them by; every other decorator argument is refused."""

import numpy as np
import pytest

import pyir
from pyir.ir import BufferStore, Function, IRModule, PrimFunc, assert_structural_equal
from pyir.script import ParseError, from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

HEADER = "from pyir.script import ir as I, tensor as T, graph as R\n"


@T.prim_func
def fill(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(3)


def test_a_module_of_dotted_names_prints_and_reads_back():
    """A module keyed "my.fill" printed ``def my.fill(``, which is not Python."""
    mod = from_source(HEADER + '''
@I.ir_module
class M:
    @T.prim_func(name="my.fill")
    def fill(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(3)

    @R.function(name="my-main")
    def main() -> R.Tensor((4,), "float32"):
        y = R.call_tir(cls.fill, (), out_sinfo=R.Tensor((4,), "float32"))
        return y

    @T.prim_func
    def my_fill(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)
''')
    assert [name for name, _ in mod.functions] == ["my.fill", "my-main", "my_fill"]
    assert mod["my-main"].body.blocks[0].bindings[0].value.func.name == "my.fill"
    text = mod.script()
    assert '@T.prim_func(name="my.fill")\n    def my_fill_1(' in text
    assert '@R.function(name="my-main")\n    def my_main(' in text
    assert "R.call_tir(cls.my_fill_1, ()" in text
    assert "@T.prim_func\n    def my_fill(" in text
    assert_structural_equal(from_source(text), mod)
    np.testing.assert_array_equal(pyir.build(mod)["my-main"](), np.full(4, 3, "float32"))
    keyed = IRModule.from_dict({"lib.fill": fill, "for": fill, "for_": fill})
    text = keyed.script()
    assert '@T.prim_func(name="for")\n    def for__1(' in text
    assert_structural_equal(from_source(text), keyed)


def test_the_decorators_take_a_name():
    @T.prim_func(name="lib.fill")
    def fill_it(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    assert isinstance(fill_it, PrimFunc) and fill_it.name == "lib.fill"
    made = T.prim_func(plain_def, name="lib.plain")
    assert made.name == "lib.plain" and isinstance(made.body, BufferStore)

    @R.function(name="lib.ident")
    def ident(x: R.Tensor((4,), "float32")):
        return x

    assert isinstance(ident, Function) and ident.name == "lib.ident"

    @I.ir_module
    class M:
        @T.prim_func(name="lib.fill")
        def fill_it(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

        @R.function
        def main() -> R.Tensor((4,), "float32"):
            y = R.call_tir(cls.fill_it, (), out_sinfo=R.Tensor((4,), "float32"))
            return y

    assert [name for name, _ in M.functions] == ["lib.fill", "main"]
    assert M["main"].body.blocks[0].bindings[0].value.func.name == "lib.fill"
    assert_structural_equal(from_source(M.script()), M)
    out = pyir.build(M)["main"]()
    assert out[0] == 1


def plain_def(A: T.Buffer((4,), "float32")):
    A[1] = T.float32(2)


@pytest.mark.parametrize("make, words", [
    (lambda: R.function(pure=False), r'^@R.function takes one argument, name="..." \(the '
     r"function's name where it is not a Python identifier\) \(given: pure\); write "
     r'@R.function or @R.function\(name="mylib.kernel"\) above the definition$'),
    (lambda: R.function(), r'^@R.function takes one argument, name="..." \(the function\'s '
     r"name where it is not a Python identifier\); write @R.function or"),
    (lambda: T.prim_func(name=3), r'^@T.prim_func takes one argument, name="..." .*\(given: '
     r"name\)"),
    (lambda: T.prim_func(name=""), r"^@T.prim_func takes one argument"),
    (lambda: I.ir_module(name="x"), r"^@I.ir_module takes no arguments \(given: name\)"),
])
def test_other_decorator_arguments_are_refused(make, words):
    """Python's own TypeError (an unexpected keyword argument, a missing function)."""
    with pytest.raises(pyir.Error, match=words):
        make()


@pytest.mark.parametrize("decorator, words", [
    ("@T.prim_func(private=True)", '@T.prim_func takes one argument, name="...": the '
                                   "function's name where it is not a Python identifier"),
    ('@T.prim_func("f")', None),
    ("@T.prim_func(name=f)", None),
    ('@T.prim_func(name="")', None),
    ('@T.prim_func(name="f", private=True)', None),
])
def test_text_with_other_decorator_arguments_is_refused_at_their_line(decorator, words):
    """In text the parser ignored every argument of a decorator (``private=True`` was
    accepted and dropped)."""
    with pytest.raises(ParseError) as info:
        from_source(HEADER + f'\n{decorator}\ndef f(A: T.Buffer((4,), "float32")):\n'
                             "    A[0] = T.float32(1)\n")
    assert (info.value.line, info.value.message) == (3, words or (
        '@T.prim_func takes one argument, name="...": the function\'s name where it is not '
        "a Python identifier"))


def test_a_module_class_with_arguments_or_two_functions_of_one_name_is_refused():
    with pytest.raises(ParseError) as info:
        from_source(HEADER + "\n@I.ir_module(x=1)\nclass M:\n    pass\n")
    assert (info.value.line, info.value.message) == (3, "@I.ir_module takes no arguments")
    with pytest.raises(ParseError) as info:
        from_source(HEADER + '''
@I.ir_module
class M:
    @T.prim_func(name="g")
    def f(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(2)
''')
    assert (info.value.line, info.value.message) == (
        10, "function 'g' is named 'g', as is function 'f' at line 6 of module 'M'")
