"""Every corpus prim function prints, parses back to the same IR, prints the same text
again, passes the verifier, and matches its golden file."""

import pytest

from pyir.ir import assert_structural_equal, verify
from pyir.script import from_source

from tensor_corpus import CASES


@pytest.mark.parametrize("name", sorted(CASES))
def test_roundtrip(name, golden):
    func = CASES[name]()
    verify(func)
    text = func.script()
    again = from_source(text, filename=f"<{name}>")
    assert_structural_equal(func, again)
    assert again.script() == text
    golden(f"script/tensor/{name}.py", text)


def test_corpus_size():
    assert len(CASES) >= 22


@pytest.mark.parametrize("name", ["yield", "async", "await", "while", "import", "del"])
def test_names_that_are_python_keywords_are_renamed(name):
    from pyir.ir import Buffer, BufferStore, FloatImm, For, IntImm, PrimFunc, Var
    A, i = Buffer(name, (IntImm(4),), "float32"), Var(name)
    f = PrimFunc("f", (A,), For(i, IntImm(0), IntImm(4), "serial",
                                BufferStore(A, FloatImm(1.0, "float32"), (i,))))
    text = f.script()
    assert f"{name}_1[" in text
    assert_structural_equal(from_source(text), f)


def test_packed_function_names_are_printed_escaped():
    src = ('from pyir.script import graph as R\n\n'
           '@R.function\n'
           'def main(x: R.Tensor((4,), "float32")):\n'
           '    y = R.call_dps_packed("a\\\\b\\"c", (x,), out_sinfo=R.Tensor((4,), "float32"))\n'
           '    z = R.call_packed("a\\\\b", y, sinfo_args=R.Tensor((4,), "float32"))\n'
           '    return z\n')
    mod = from_source(src)
    assert_structural_equal(from_source(mod.script()), mod)


def test_an_empty_module_round_trips():
    from pyir.ir import IRModule
    assert_structural_equal(from_source(IRModule(()).script()), IRModule(()))


def test_an_expression_too_deep_to_print_is_a_clear_error():
    import pyir
    from pyir.ir import Buffer, BufferLoad, BufferStore, IntImm, PrimFunc
    A = Buffer("A", (IntImm(4),), "float32")
    value = BufferLoad(A, (IntImm(1),))
    for _ in range(3000):
        value = value + BufferLoad(A, (IntImm(1),))
    f = PrimFunc("f", (A,), BufferStore(A, value, (IntImm(0),)))
    with pytest.raises(pyir.Error, match="cannot print PrimFunc f: an expression in it, or its "
                       "loops, ifs and blocks inside one another, nest deeper than Python's "
                       "recursion limit"):
        f.script()


def test_a_shape_variable_only_the_declared_shapes_hold_is_declared():
    """A (0, n) buffer flattens to (0,): n is then only in the "param_shapes" attribute
    and the loops, and the printed function read n as an undefined variable."""
    import pyir
    f = from_source('''from pyir.script import tensor as T

@T.prim_func
def f(A: T.Buffer((0, "n"), "float32"), O: T.Buffer((0, "n"), "float32")):
    for i0, i1 in T.grid(0, n):
        O[i0, i1] = A[i0, i1]
''')
    flat = pyir.transform.flatten_buffers(pyir.ir.IRModule.from_dict({"f": f}))["f"]
    text = flat.script()
    assert text.splitlines()[4:7] == [
        'def f(A: T.Buffer((0,), "float32"), O: T.Buffer((0,), "float32")):',
        "    n = T.int64()",
        '    T.func_attr({"param_shapes": ((T.int64(0), n), (T.int64(0), n))})']
    assert_structural_equal(from_source(text), flat)


def test_a_comparison_of_two_bool_constants_prints_back():
    """``T.bool(True) != T.bool(True)`` printed as ``True != True``, which reads back folded
    to False: the first of two bool constants is printed typed, as numbers are."""
    text = '''from pyir.script import tensor as T


@T.prim_func
def f(B: T.Buffer((4,), "bool"), A: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.bool(True) != True
        A[i] = T.if_then_else(T.bool(False) < True, A[i], T.float32(0.0))
'''
    func = from_source(text)
    assert func.script() == text
    assert_structural_equal(from_source(func.script()), func)
