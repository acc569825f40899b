"""Structural equality and hashing: equal up to renaming of definitions, every other
difference found, hashes consistent with equality, readable first-difference messages."""

import pytest

import pyir
from pyir.ir import (Binary, Buffer, BufferLoad, BufferStore, FloatImm, For, IntImm, PrimFunc, Var,
                     assert_structural_equal, structural_equal, structural_hash)


def copy_func(loop_name="i", dtype="float32", value=1.0, swap=False, n_name="n"):
    """``for i in range(n): B[i] = A[i] + value`` built fresh each call."""
    n = Var(n_name)
    A = Buffer("A", (n,), dtype)
    B = Buffer("B", (n,), dtype)
    i = Var(loop_name)
    src = B if swap else A
    body = BufferStore(B, Binary("add", BufferLoad(src, (i,)), FloatImm(value, dtype)), (i,))
    return PrimFunc("copy", (A, B), For(i, IntImm(0), n, "serial", body))


def test_equal_up_to_renaming():
    a, b = copy_func(), copy_func(loop_name="k", n_name="m")
    assert a is not b
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert_structural_equal(a, b)


@pytest.mark.parametrize("change", [dict(value=2.0), dict(dtype="float64"), dict(swap=True)])
def test_differences_are_found(change):
    a, b = copy_func(), copy_func(**change)
    assert not structural_equal(a, b)
    assert structural_hash(a) != structural_hash(b)


def test_float_constants_compare_as_they_hash():
    """-0.0 is not 0.0 (x * -0.0 and x * 0.0 differ in sign), and a NaN constant is equal to
    itself (a module holding one was not equal to itself, nor to its parsed print)."""
    neg, pos = copy_func(value=-0.0), copy_func(value=0.0)
    assert not structural_equal(neg, pos) and structural_hash(neg) != structural_hash(pos)
    nan = copy_func(value=float("nan"))
    assert structural_equal(nan, nan) and structural_equal(nan, copy_func(value=float("nan")))
    assert_structural_equal(pyir.script.from_source(nan.script()), nan)


def test_variables_must_correspond_one_to_one():
    x, y = Var("x"), Var("y")
    p, q = Var("p"), Var("q")
    assert structural_equal(Binary("add", x, y), Binary("add", p, q))
    assert not structural_equal(Binary("add", x, y), Binary("add", p, p))
    assert not structural_equal(Binary("add", x, x), Binary("add", p, q))


def test_hash_is_deterministic_and_ignores_names():
    func = copy_func()
    assert structural_hash(func) == structural_hash(func)
    assert structural_hash(Var("a")) == structural_hash(Var("b"))
    assert structural_hash(Var("a", "int32")) != structural_hash(Var("a", "int64"))


def test_assert_message_shows_path_and_both_sides():
    with pytest.raises(pyir.Error) as info:
        assert_structural_equal(copy_func(value=1.0), copy_func(value=2.0))
    message = str(info.value)
    assert message.startswith("IR differs at <root>.body.body.value.b.value: values differ")
    assert "lhs: 1.0" in message
    assert "rhs: 2.0" in message


def test_assert_message_names_node_types():
    with pytest.raises(pyir.Error) as info:
        assert_structural_equal(Binary("add", IntImm(1), IntImm(2)), Binary("mul", IntImm(1),
                                                                          IntImm(2)))
    assert "IR differs at <root>.op: values differ" in str(info.value)
    assert "lhs: 'add'" in str(info.value) and "rhs: 'mul'" in str(info.value)
    with pytest.raises(pyir.Error, match=r"<root>.b: node types differ \(IntImm vs Var\)"):
        assert_structural_equal(Binary("add", IntImm(1), IntImm(2)),
                                Binary("add", IntImm(1), Var("x")))


def test_float_immediates_are_equal_bit_for_bit():
    """-0.0 is another constant than 0.0 (``x * -0.0`` keeps a sign), and a NaN is the same
    constant as itself: node equality (and so every cache keyed by nodes) says so."""
    assert FloatImm(-0.0) != FloatImm(0.0)
    assert hash(FloatImm(-0.0)) != hash(FloatImm(0.0))
    assert FloatImm(float("nan")) == FloatImm(float("nan"))
    assert FloatImm(1.5) == FloatImm(1.5) and FloatImm(1.5) != FloatImm(1.5, "float64")


def test_ir_pickles_and_copies():
    """pickle, copy.copy and copy.deepcopy keep every node whole: a Binary's dtype is kept
    outside its fields, and a copied ``n + 3`` had none (AttributeError on .dtype)."""
    import copy
    import pickle

    import numpy as np

    from pyir.ir import lt
    from pyir.schedule import Schedule
    from pyir.script import from_source
    n = Var("n")
    for e in (pickle.loads(pickle.dumps(n + 3)), copy.copy(n * 2), copy.deepcopy(lt(n // 4, n))):
        assert e.dtype in ("int64", "bool")
    sch = Schedule(from_source('''
from pyir.script import tensor as T

@T.prim_func
def twice(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)
'''))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 8])
    again = pickle.loads(pickle.dumps(sch.mod))
    assert structural_equal(again, sch.mod)
    a = np.arange(13, dtype="float32")
    out = np.zeros_like(a)
    pyir.build(again)["twice"](a, out)
    np.testing.assert_array_equal(out, a * 2)


def test_each_function_of_a_module_has_its_own_definitions():
    """A module holding one function under two names shares its parameters' objects between
    them; its printed and parsed copy has each function's own. The copy was "a different
    definition" of A, so a module of `sch.mod["f"]` beside `f` did not equal its script."""
    f = copy_func()
    mod = pyir.ir.IRModule.from_dict({"f": f, "g": f})
    again = pyir.ir.IRModule.from_dict({"f": copy_func(), "g": copy_func(loop_name="k")})
    assert structural_equal(mod, again)
    assert structural_hash(mod) == structural_hash(again)
    assert_structural_equal(pyir.script.from_source(mod.script()), mod)
    other = pyir.ir.IRModule.from_dict({"f": f, "h": f})
    assert not structural_equal(mod, other)
    assert structural_hash(mod) != structural_hash(other)
    with pytest.raises(pyir.Error, match=r"IR differs at <root>\.functions\[1\]\[0\]: values "
                                         r"differ\n  lhs: 'g'\n  rhs: 'h'"):
        assert_structural_equal(mod, other)
    changed = pyir.ir.IRModule.from_dict({"f": f, "g": copy_func(value=2.0)})
    with pytest.raises(pyir.Error, match=r"IR differs at <root>\.functions\[1\]\[1\]\.body\."
                                         r"body\.value\.b\.value: values differ"):
        assert_structural_equal(mod, changed)
