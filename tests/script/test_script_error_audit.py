"""Audit of the parser's error messages: every message of the script language that no other
test reached, each triggered from the public API (``from_source`` text, decorated
functions, the decorators themselves, the printer) and checked for its words and for the
line it points at (the line marked ``# <-``)."""

import textwrap

import pytest

import pyir
from pyir import ir
from pyir.errors import Error
from pyir.script import ParseError, from_source
from pyir.script import graph as R
from pyir.script import ir as I
from pyir.script import tensor as T

from source_lines import line_in

HEADER = "from pyir.script import ir as I, tensor as T, graph as R\n\n"
MARK = "# <-"


def parse_error(src, filename="audit.py"):
    """The ParseError of ``from_source`` on ``HEADER + src`` and the text parsed."""
    text = HEADER + textwrap.dedent(src).lstrip("\n")
    with pytest.raises(ParseError) as info:
        from_source(text, filename)
    return info.value, text


def check(src, words, underlined=None):
    """``src`` fails to parse at its line marked ``# <-``: the error names the file and that
    line, shows it with a caret (under ``underlined`` if given) and its message holds
    ``words``."""
    err, text = parse_error(src)
    lines = text.splitlines()
    marked = [k for k, line in enumerate(lines, 1) if MARK in line]
    assert len(marked) == 1, "mark exactly one line"
    assert (err.filename, err.line) == ("audit.py", marked[0]), str(err)
    assert words in err.message, str(err)
    shown = str(err).splitlines()
    assert shown[0].startswith(f"audit.py:{err.line}:")
    source, caret = shown[1:3]
    assert source == f"{err.line:>5} | {lines[err.line - 1].strip()}"
    assert caret.strip() and set(caret.strip()) == {"^"}
    if underlined is not None:
        assert source[caret.index("^"):caret.rindex("^") + 1] == underlined, str(err)
    return err


def prim(body, params='A: T.Buffer((4,), "float32")'):
    """A prim function ``f(params)`` whose body is ``body`` (indented by four)."""
    return (f"@T.prim_func\ndef f({params}):\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")


def prim_signature(params):
    """A prim function ``f(params)`` storing into ``A``, its def line marked."""
    return f"@T.prim_func\ndef f({params}):  # <-\n    A[0] = 0.0\n"


def graph(body, params='x: R.Tensor(("n",), "float32")'):
    """A graph function ``f(params)`` whose body is ``body`` (indented by four)."""
    return (f"@R.function\ndef f({params}):\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")


def graph_signature(params):
    """A graph function ``f(params)`` returning ``x``, its def line marked."""
    return f"@R.function\ndef f({params}):  # <-\n    return x\n"


def in_block(body, loops="for i in range(4):", params='A: T.Buffer((4,), "float32")'):
    """``body`` directly inside ``with T.block("a"):`` inside ``loops``."""
    inner = textwrap.indent(textwrap.dedent(body).strip("\n"), "        ")
    return prim(f'{loops}\n    with T.block("a"):\n{inner}', params)


# ---------------------------------------------------------------- prim function signatures
SIGNATURES = [
    pytest.param('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):  # <-\n    ...\n',
                 "prim function 'f' has no body", None, id="no-body"),
    pytest.param('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")) -> T.int32:  # <-\n'
                 '    A[0] = 0.0\n',
                 "a prim function returns nothing; it writes its results into output buffers",
                 "T.int32", id="return-annotation"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32"), B=1'),
                 "prim function 'f': parameters must be plain annotated names (no defaults, "
                 "*args, keyword-only or / markers)", None, id="default-value"),
    pytest.param(prim_signature("A"), "parameter 'A' has no annotation", "A",
                 id="no-annotation"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32"), A: T.Buffer((8,), "float32")'),
                 "parameter 'A' is defined twice", 'A: T.Buffer((8,), "float32")',
                 id="parameter-twice"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32"), x: int'),
                 "parameter 'x' has an unsupported annotation", "int",
                 id="unsupported-annotation"),
    pytest.param(prim_signature('A: T.Buffer(("n",), "float32"), n: T.int32'),
                 "n is a shape variable, so it is int64, not int32", "T.int32",
                 id="int32-shape-variable"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32", "global", 1)'),
                 "T.Buffer takes (shape, dtype, scope)",
                 'T.Buffer((4,), "float32", "global", 1)', id="buffer-four-arguments"),
    pytest.param(prim_signature('A: T.Buffer(dtype="float32")'), "T.Buffer needs a shape",
                 'T.Buffer(dtype="float32")', id="buffer-without-shape"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32", foo=1)'),
                 "T.Buffer got an unexpected or repeated argument 'foo'", "1",
                 id="buffer-unknown-keyword"),
    pytest.param(prim_signature('A: T.Buffer((4,), "float32", scope="shared")'),
                 "unknown buffer scope 'shared'", '"shared"', id="unknown-scope"),
    pytest.param(prim_signature('A: T.Buffer("n", "float32")'),
                 "a shape is a tuple of dimensions", '"n"', id="shape-not-a-tuple"),
    pytest.param(prim_signature('A: T.Buffer((-4,), "float32")'),
                 "a shape entry cannot be negative (-4)", "-4", id="negative-shape-entry"),
]


@pytest.mark.parametrize("src, words, underlined", SIGNATURES)
def test_a_bad_prim_function_signature_is_reported_at_its_line(src, words, underlined):
    """Each mistake in a prim function's signature names itself at the def line."""
    check(src, words, underlined)


# ---------------------------------------------------------------- prim function statements
STATEMENTS = [
    pytest.param(prim("for i in range(4):\n    A[i] = 0.0\nelse:\n    A[0] = 1.0  # <-"),
                 "for ... else is not supported in prim functions", None, id="for-else"),
    pytest.param(prim("for i in A:  # <-\n    A[0] = 0.0"),
                 "a for loop iterates over range(...), T.grid(...), or T.serial / "
                 "T.parallel / T.vectorized / T.unroll(...)", "A", id="loop-over-a-buffer"),
    pytest.param(prim("for i, j in range(4):  # <-\n    A[0] = 0.0"),
                 "range gives one loop variable, not 2", "i, j", id="range-two-variables"),
    pytest.param(prim("for i in range(0, 4, 2):  # <-\n    A[i] = 0.0"),
                 "range takes (extent) or (start, stop); a step is not supported",
                 "range(0, 4, 2)", id="range-step"),
    pytest.param(prim("for A[0] in range(4):  # <-\n    A[0] = 0.0"),
                 "a loop variable must be a plain name", "A[0]", id="loop-variable-subscript"),
    pytest.param(prim("for i in T.grid(4, k=1):  # <-\n    A[0] = 0.0"),
                 "T.grid takes only extents", "T.grid(4, k=1)", id="grid-keyword"),
    pytest.param(prim("for i in range(4, annotations={}):  # <-\n    A[0] = 0.0"),
                 "range has no argument 'annotations'", "{}", id="range-annotations"),
    pytest.param(prim("for i in T.serial(4, annotations=[1]):  # <-\n    A[i] = 0.0"),
                 "annotations are a dict literal", "[1]", id="annotations-not-a-dict"),
    pytest.param(prim('T.func_attr({1: 1})  # <-\nA[0] = 0.0'),
                 "annotation keys are strings", "1", id="annotation-key-not-a-string"),
    pytest.param(prim('T.func_attr({"a": A})  # <-\nA[0] = 0.0'),
                 "annotation values are constants (numbers, strings, bools), expressions, or "
                 "tuples of them", "A", id="annotation-value-a-buffer"),
    pytest.param(prim('with open("x") as fh:  # <-\n    A[0] = 0.0'),
                 'a with statement in a prim function is with T.block("name"):, with '
                 "T.init():, with T.alloc_buffer(...) as X: or with T.let(value) as x:", None,
                 id="with-open"),
    pytest.param(prim('with T.alloc_buffer((4,), "float32") as (X, Y):  # <-\n    A[0] = 0.0'),
                 "the name after 'as' must be a plain name", "(X, Y)", id="with-as-tuple"),
    pytest.param(prim("with T.let(1, 2) as x:  # <-\n    A[0] = 0.0"),
                 "T.let takes one value", "T.let(1, 2)", id="let-two-values"),
    pytest.param(prim("x = y = A[0]  # <-\nA[1] = x"),
                 "chained assignment is not supported", None, id="chained-assignment"),
    pytest.param(prim("x, y = A[0], A[1]  # <-\nA[1] = x"),
                 "tuple assignment is only used with T.axis.remap", "x, y",
                 id="tuple-assignment"),
    pytest.param(prim("x: T.float32  # <-\nA[1] = 0.0"),
                 "an annotated assignment binds a scalar name to a value", None,
                 id="annotation-without-value"),
    pytest.param(prim("x: float = 1.0  # <-\nA[1] = x"),
                 "the annotation of a scalar is a T dtype", "float", id="python-annotation"),
    pytest.param(prim("x: T.int32 = A[0]  # <-\nA[1] = 0.0"),
                 "x is declared int32 but the value is float32", "A[0]",
                 id="annotated-dtype-mismatch"),
    pytest.param(prim("x = A[0]\nx += 1.0  # <-\nA[1] = x"),
                 "augmented assignment only updates buffer elements; scalars are immutable",
                 None, id="augmented-scalar"),
    pytest.param(prim("A[0] **= 2.0  # <-"),
                 "this augmented assignment operator is not supported", None,
                 id="augmented-power"),
    pytest.param(prim("A = 1.0  # <-"),
                 "A is a buffer; write its elements with A[...] = value", "A",
                 id="assign-to-a-buffer-name"),
    pytest.param(prim('X = T.alloc_buffer((4,), "float32")\n'
                      'X = T.alloc_buffer((4,), "float32")  # <-\nA[0] = X[0]'),
                 "X is already defined in this scope", "X", id="allocation-twice"),
    pytest.param(prim('for i in range(4):\n    B = T.match_buffer(h, (4,), "float32")  # <-\n'
                      '    A[i] = 0.0', 'A: T.Buffer((4,), "float32"), h: T.handle'),
                 "T.match_buffer is only valid at the top of a prim function body", None,
                 id="match-buffer-in-a-loop"),
    pytest.param(prim('B = T.match_buffer(A, (4,), "float32")  # <-\nB[0] = 0.0'),
                 "the first argument of T.match_buffer is a T.handle parameter",
                 'T.match_buffer(A, (4,), "float32")', id="match-buffer-of-a-buffer"),
    pytest.param(prim('A = T.match_buffer(h, (4,), "float32")\n'
                      'B = T.match_buffer(h, (4,), "float32")  # <-', "h: T.handle"),
                 "handle 'h' is matched twice", "h", id="handle-matched-twice"),
    pytest.param(prim('A = T.match_buffer(h, (4,), "float32")  # <-',
                      'h: T.handle, A: T.Buffer((4,), "float32")'),
                 "A is already defined", "A", id="match-buffer-name-taken"),
    pytest.param(prim("n = T.int32()  # <-\nA[0] = 0.0"),
                 "T.int32() declares a shape variable, and shape variables are int64",
                 "T.int32()", id="int32-declaration"),
    pytest.param(prim("for i in range(4):\n    n = T.int64()  # <-\n    A[i] = 0.0",
                      'A: T.Buffer(("n",), "float32")'),
                 "T.int64() declares a shape variable and is only valid at the top of a prim "
                 "function body", "n = T.int64()", id="declaration-in-a-loop"),
    pytest.param(prim("A[0]  # <-"), "this expression statement has no effect", "A[0]",
                 id="expression-statement"),
    pytest.param(prim("T.evaluate(1, 2)  # <-"), "T.evaluate takes one expression",
                 "T.evaluate(1, 2)", id="evaluate-two"),
    pytest.param(prim('for i in range(4):\n    T.func_attr({"b": 1})  # <-\n    A[i] = 0.0'),
                 "T.func_attr is only valid at the top of a prim function body",
                 'T.func_attr({"b": 1})', id="func-attr-in-a-loop"),
    pytest.param(prim("T.func_attr(x=1)  # <-\nA[0] = 0.0"), "T.func_attr takes one dict",
                 "T.func_attr(x=1)", id="func-attr-keyword"),
]


@pytest.mark.parametrize("src, words, underlined", STATEMENTS)
def test_a_bad_prim_function_statement_is_reported_at_its_line(src, words, underlined):
    """Each unsupported or malformed statement names itself at its own line."""
    check(src, words, underlined)


# ---------------------------------------------------------------- blocks
BLOCKS = [
    pytest.param(prim('with T.block("a", "b"):  # <-\n    A[0] = 0.0'),
                 "T.block takes one argument, the block name", 'T.block("a", "b")',
                 id="block-two-names"),
    pytest.param(prim("with T.block(1):  # <-\n    A[0] = 0.0"),
                 "the block name must be a string", "1", id="block-name-not-a-string"),
    pytest.param(prim('with T.block("a"):\n    with T.init(1):  # <-\n        A[0] = 0.0\n'
                      '    A[0] = 1.0'), "T.init takes no arguments", "T.init(1)",
                 id="init-argument"),
    pytest.param(prim('with T.block("a"):\n    with T.init():\n        A[0] = 0.0\n'
                      '    with T.init():  # <-\n        A[0] = 0.0\n    A[0] = 1.0'),
                 "block 'a' has two T.init() sections", None, id="two-inits"),
    pytest.param(in_block("vi, vj = T.axis.spatial(4, i)  # <-\nA[vi] = 0.0"),
                 "T.axis.spatial declares one block iterator", "vi, vj",
                 id="spatial-two-targets"),
    pytest.param(in_block("vi = T.axis.spatial(4)  # <-\nA[vi] = 0.0"),
                 "T.axis.spatial takes the iterator's extent and its binding",
                 "T.axis.spatial(4)", id="spatial-one-argument"),
    pytest.param(in_block('vi, vj = T.axis.remap("SS")  # <-\nA[vi] = 0.0',
                          "for i, j in T.grid(4, 4):", 'A: T.Buffer((4, 4), "float32")'),
                 "T.axis.remap takes a kinds string and a list of loop variables",
                 'T.axis.remap("SS")', id="remap-one-argument"),
    pytest.param(in_block("vi, vj = T.axis.remap(1, [i, j])  # <-\nA[vi, vj] = 0.0",
                          "for i, j in T.grid(4, 4):", 'A: T.Buffer((4, 4), "float32")'),
                 "the first argument of T.axis.remap is a string of 'S' and 'R' letters", "1",
                 id="remap-kinds-not-a-string"),
    pytest.param(in_block('vi, vj = T.axis.remap("SS", [i])  # <-\nA[vi, vj] = 0.0',
                          "for i, j in T.grid(4, 4):", 'A: T.Buffer((4, 4), "float32")'),
                 "T.axis.remap needs a list of 2 loop variable(s)", "[i]",
                 id="remap-too-few-loops"),
    pytest.param(in_block('vi = T.axis.remap("S", [i])  # <-\nA[vi] = 0.0',
                          "for i in range(1, 4):"),
                 "loop i does not start at 0, so T.axis.remap cannot take its domain from it",
                 "i", id="remap-loop-not-from-zero"),
    pytest.param(in_block('vi, A[0] = T.axis.remap("SS", [i, j])  # <-\nA[vi] = 0.0',
                          "for i, j in T.grid(4, 4):"),
                 "a block iterator must be a plain name", "A[0]", id="iterator-subscript"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.where()  # <-\nA[vi] = 0.0"),
                 "T.where takes one condition", "T.where()", id="where-empty"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.where(i < 4)\nT.where(i < 3)  # <-\n"
                          "A[vi] = 0.0"),
                 "block 'a' has two T.where conditions", "T.where(i < 3)", id="two-wheres"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.where(i)  # <-\nA[vi] = 0.0"),
                 "T.where needs a bool condition, not int64", "i", id="where-not-bool"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.reads(A[vi], x=1)  # <-\nA[vi] = 0.0"),
                 "T.reads takes buffer regions only", "T.reads(A[vi], x=1)",
                 id="reads-keyword"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.writes(A[vi])\nT.writes(A[vi])  # <-\n"
                          "A[vi] = 0.0"),
                 "block 'a' has two T.writes(...) statements", "T.writes(A[vi])",
                 id="two-writes"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.reads(A)  # <-\nA[vi] = 0.0"),
                 "a region is a buffer indexed by points and slices", "A",
                 id="region-of-a-whole-buffer"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.reads(x[0])  # <-\nA[vi] = 0.0",
                          params='A: T.Buffer((4,), "float32"), x: T.float32'),
                 "only buffers have regions", "x", id="region-of-a-scalar"),
    pytest.param(in_block("vi = T.axis.spatial(4, i)\nT.writes(A[0:4:2])  # <-\nA[vi] = 0.0"),
                 "a region slice has no step", "2", id="region-step"),
    pytest.param(in_block('vi = T.axis.spatial(4, i)\nT.block_attr({"a": 1}, 2)  # <-\n'
                          "A[vi] = 0.0"),
                 "T.block_attr takes one dict", 'T.block_attr({"a": 1}, 2)',
                 id="block-attr-two"),
]


@pytest.mark.parametrize("src, words, underlined", BLOCKS)
def test_a_bad_block_is_reported_at_its_line(src, words, underlined):
    """Each malformed block, iterator or region names itself at its own line."""
    check(src, words, underlined)


# ---------------------------------------------------------------- expressions
def store(value, params='A: T.Buffer((4,), "float32")'):
    """A prim function storing ``value`` into ``A[0]``, that line marked."""
    return prim(f"A[0] = {value}  # <-", params)


EXPRESSIONS = [
    pytest.param(store("A.shape"), "attribute access is not supported in prim functions",
                 "A.shape", id="attribute"),
    pytest.param(store("T"), "T is the T namespace, not a value", "T", id="namespace"),
    pytest.param(store("T.float32"), "T.float32 is a type; call it to make a value",
                 "T.float32", id="type-as-value"),
    pytest.param(store("None"), "None is not a valid value in a prim function", "None",
                 id="none"),
    pytest.param(prim("T.evaluate(A)  # <-"),
                 "buffer A is used as a value; index it to read an element", "A",
                 id="buffer-as-value"),
    pytest.param(prim('T.evaluate("x")  # <-'), "the string 'x' cannot be used as a value",
                 '"x"', id="string-as-value"),
    pytest.param(store("True", 'A: T.Buffer((4,), "int32")'),
                 "a bool literal cannot be used as int32", "True", id="bool-into-int32"),
    pytest.param(store("2", 'A: T.Buffer((4,), "bool")'), "2 is not a bool value", "2",
                 id="two-into-bool"),
    pytest.param(store("A[1] ** 2"), "operator Pow is not supported", "A[1] ** 2",
                 id="power"),
    pytest.param(store("~A[1]"), "operator '~' is not supported", "~A[1]", id="invert"),
    pytest.param(prim("if A[0] is None:  # <-\n    A[0] = 1.0"),
                 "comparison Is is not supported", "A[0] is None", id="is"),
    pytest.param(prim("if A[0] and A[1]:  # <-\n    A[0] = 1.0"),
                 "'and' needs bool operands, not float32", "A[0] and A[1]",
                 id="and-of-floats"),
    pytest.param(store("A[1] + A[2]", 'A: T.Buffer((4,), "bool")'),
                 "'+' is not defined on bool values", "A[1] + A[2]", id="bool-plus"),
    pytest.param(prim("if not A[0]:  # <-\n    A[0] = 1.0"),
                 "'not' needs a bool operand, not float32", "not A[0]", id="not-of-a-float"),
    pytest.param(store("-A[1]", 'A: T.Buffer((4,), "bool")'),
                 "unary '-' is not defined on bool values", "-A[1]", id="minus-bool"),
    pytest.param(store("T.float32(1.0 / 0)"), "division by zero", "1.0 / 0",
                 id="constant-division-by-zero"),
    pytest.param(store("x[0]", 'A: T.Buffer((4,), "float32"), x: T.float32'),
                 "only buffers can be indexed, and this is the scalar x (float32)", "x",
                 id="index-a-scalar"),
    pytest.param(store("A[0:2]"),
                 "a slice cannot be used to access A here; slices belong in T.reads / "
                 "T.writes", "0:2", id="slice"),
    pytest.param(store("T.if_then_else(A[1], 1.0, 2.0)"),
                 "the condition must be bool, not float32", "A[1]", id="select-not-bool"),
    pytest.param(store("T.cast(A[1])"), "T.cast takes a value and a dtype", "T.cast(A[1])",
                 id="cast-one-argument"),
    pytest.param(store("T.max(A[1], A[2])", 'A: T.Buffer((4,), "bool")'),
                 "T.max needs numbers, not bool", "T.max(A[1], A[2])", id="max-of-bools"),
    pytest.param(store("T.abs(A[1])", 'A: T.Buffer((4,), "bool")'),
                 "T.abs needs a number, not bool", "T.abs(A[1])", id="abs-of-a-bool"),
    pytest.param(store("T.float32(1, 2)"),
                 "T.float32(...) takes one argument: a literal or a value to cast",
                 "T.float32(1, 2)", id="dtype-two-arguments"),
    pytest.param(store('T.int32("inf")', 'A: T.Buffer((4,), "int32")'),
                 "T.int32('inf') is not a literal", '"inf"', id="int-inf"),
    pytest.param(store("T.int32(1.5)", 'A: T.Buffer((4,), "int32")'),
                 "1.5 is not an integer, so it cannot be an int32 literal", "1.5",
                 id="int-of-a-fraction"),
    pytest.param(store("T.exp()"), "T.exp takes 1 argument(s), got 0", "T.exp()",
                 id="exp-no-argument"),
    pytest.param(store("T.pow(A[0], B[0])",
                       'A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")'),
                 "T.pow arguments must have one dtype; got float32 and float64", "B[0]",
                 id="pow-mixed-dtypes"),
    pytest.param(store("T.exp(i)", 'A: T.Buffer((4,), "int64"), i: T.int64'),
                 "T.exp needs a float argument, not int64", "T.exp(i)", id="exp-of-an-int"),
    pytest.param(store("T.checked_index(x, 4, 1)", 'A: T.Buffer((4,), "int64"), x: T.int32'),
                 "T.checked_index takes int64 values, not int32", "x",
                 id="checked-index-int32"),
    pytest.param(store("T.checked_index(1, 2, 0)", 'A: T.Buffer((4,), "int64")'),
                 "the status of T.checked_index must be a positive integer constant", "0",
                 id="checked-index-status"),
    pytest.param(prim("T.evaluate(T.call_extern())  # <-"),
                 "T.call_extern needs the kernel name first", "T.call_extern()",
                 id="call-extern-without-name"),
    pytest.param(prim("T.evaluate(T.call_extern(1, A))  # <-"),
                 "the first argument of T.call_extern must be the kernel name, a string", "1",
                 id="call-extern-name-not-a-string"),
    pytest.param(prim('T.evaluate(T.call_extern("expf", A[0], foo=1))  # <-'),
                 "T.call_extern has no argument 'foo'", "1", id="call-extern-keyword"),
]


@pytest.mark.parametrize("src, words, underlined", EXPRESSIONS)
def test_a_bad_prim_function_expression_is_reported_at_its_line(src, words, underlined):
    """Each unsupported or ill-typed expression names itself, underlined at its line."""
    check(src, words, underlined)


# ---------------------------------------------------------------- graph functions
GRAPH = [
    pytest.param(graph("R.exp(x)  # <-\nreturn x"),
                 "the value of this expression would be lost; bind it to a name", None,
                 id="unbound-expression"),
    pytest.param(graph('y = "a"  # <-\nreturn x'), "'a' is not a graph value", '"a"',
                 id="string-value"),
    pytest.param(graph('y = R.call_dps_packed("f", (x,), out_sinfo=R.Tensor((x, 4), '
                       '"float32"))  # <-\nreturn y'),
                 "x is a graph variable, not a shape variable", "x", id="graph-var-in-shape"),
    pytest.param(graph('y = R.call_dps_packed("f", (x,), out_sinfo=R.Tensor(4, "float32"))'
                       "  # <-\nreturn y"),
                 "a shape must be a tuple of dimensions", "4", id="shape-not-a-tuple"),
    pytest.param(graph('y = R.call_dps_packed("f", (x,), out_sinfo=R.Tensor((4,)))  # <-\n'
                       "return y"), "R.Tensor needs a dtype", "R.Tensor((4,))",
                 id="tensor-without-dtype"),
    pytest.param(graph_signature('x: R.Tuple(R.Tensor((4,), "float32"), k=1)'),
                 "R.Tuple takes only struct infos", "k=1", id="tuple-keyword"),
    pytest.param(graph_signature("x: R.Prim()"), "R.Prim needs a dtype", "R.Prim()",
                 id="prim-without-dtype"),
    pytest.param(graph('y = R.call_dps_packed("f", (x,), out_sinfo=[])  # <-\nreturn y'),
                 "R.call_dps_packed: out_sinfo lists no outputs", "[]", id="no-outputs"),
    pytest.param(graph('y = R.call_dps_packed("f", (x,), out_sinfo=R.Shape([4]))  # <-\n'
                       "return y"),
                 "R.call_dps_packed: out_sinfo must be R.Tensor(...) or a list of them",
                 "R.Shape([4])", id="shape-out-sinfo"),
    pytest.param(graph("y, z = R.exp(x), R.exp(x)  # <-\nreturn y"),
                 "a binding assigns exactly one name", "y, z", id="tuple-target"),
    pytest.param(graph("y = z = R.exp(x)  # <-\nreturn y"),
                 "a binding assigns exactly one name", "y = z = R.exp(x)",
                 id="chained-binding"),
    pytest.param(graph("n = R.exp(x)  # <-\nreturn n"),
                 "'n' is a shape variable of this function; choose another name for the graph "
                 "variable", "n", id="binding-named-like-a-shape-variable"),
    pytest.param(graph('y: R.Tensor(("n",), "float32")  # <-\nreturn x'),
                 "an annotated binding needs a value", None, id="annotation-without-value"),
    pytest.param(graph('y: R.Tensor(("k",), "float32") = R.match_cast(x, R.Tensor(("k",), '
                       '"float32"))  # <-\nreturn y'),
                 "R.match_cast gives its own struct info; drop the annotation",
                 'R.Tensor(("k",), "float32")', id="annotated-match-cast"),
    pytest.param(graph("y = R.match_cast(x)  # <-\nreturn y"),
                 "R.match_cast takes a value and a struct info", "R.match_cast(x)",
                 id="match-cast-one-argument"),
    pytest.param(graph('with open("f"):  # <-\n    y = R.exp(x)\nreturn y'),
                 "graph code supports only `with R.dataflow():`", None, id="with-open"),
    pytest.param(graph("with R.dataflow():\n    with R.dataflow():  # <-\n        y = R.exp(x)"
                       "\n        R.output(y)\n    R.output(y)\nreturn y"),
                 "dataflow blocks do not nest", None, id="nested-dataflow"),
    pytest.param(graph("with R.dataflow():\n    y = R.exp(x)  # <-\nreturn y"),
                 "a dataflow block must end with R.output(...) listing the variables used "
                 "after it", None, id="dataflow-without-output"),
    pytest.param(graph("with R.dataflow():\n    y = R.exp(x)\n    R.output(y=y)  # <-\n"
                       "return y"), "R.output takes variable names only", "y=y",
                 id="output-keyword"),
    pytest.param(graph("with R.dataflow():\n    y = R.exp(x)\n    R.output(y[0])  # <-\n"
                       "return y"),
                 "R.output takes the names of variables bound in the block", "y[0]",
                 id="output-subscript"),
    pytest.param(graph("with R.dataflow():\n    y = R.exp(x)\n    R.output(y, y)  # <-\n"
                       "return y"), "'y' is listed twice in R.output", "y", id="output-twice"),
    pytest.param(graph("return n  # <-"), "'n' is a shape variable, not a graph value", "n",
                 id="shape-variable-returned"),
    pytest.param(graph("t = (x, x)\nreturn t[1.5]  # <-"),
                 "a tuple index must be an integer constant", "1.5", id="float-tuple-index"),
    pytest.param(graph("y = print(x)  # <-\nreturn y"), "graph code calls only R.* functions",
                 "print", id="python-call"),
    pytest.param(graph("y = R.add(*x)  # <-\nreturn y"), "R.add does not take *args",
                 "R.add(*x)", id="starred-argument"),
    pytest.param(graph('y = R.call_dps_packed("f", x, out_sinfo=R.Tensor((4,), "float32"))'
                       "  # <-\nreturn y"),
                 "R.call_dps_packed takes its arguments as a tuple", "x",
                 id="arguments-not-a-tuple"),
    pytest.param(graph('y = R.call_dps_packed("", (x,), out_sinfo=R.Tensor((4,), "float32"))'
                       "  # <-\nreturn y"),
                 "R.call_dps_packed needs the registered function's name as a string", '""',
                 id="empty-packed-name"),
    pytest.param(graph('y = R.call_dps_packed((x,), out_sinfo=R.Tensor((4,), "float32"))'
                       "  # <-\nreturn y"),
                 "R.call_dps_packed needs a function name and arguments", None,
                 id="dps-without-name"),
    pytest.param(graph("y = R.call_packed()  # <-\nreturn y"),
                 "R.call_packed needs the registered function's name", "R.call_packed()",
                 id="packed-without-name"),
    pytest.param(graph('y = R.call_packed("f", x, foo=1)  # <-\nreturn y'),
                 "R.call_packed has no argument 'foo'; it takes the name, the arguments and "
                 "sinfo_args", "foo=1", id="packed-keyword"),
    pytest.param(graph('y = R.call_packed("f", x, sinfo_args=[R.Object, R.Object])  # <-\n'
                       "return y"),
                 "sinfo_args takes one struct info; use R.Tuple(...) for several results",
                 "[R.Object, R.Object]", id="two-sinfo-args"),
    pytest.param(graph("y = R.shape(1, 2)  # <-\nreturn y"),
                 "R.shape takes one list of dimensions", "R.shape(1, 2)", id="shape-two"),
    pytest.param(graph("y = R.prim_value()  # <-\nreturn y"), "R.prim_value needs a value",
                 "R.prim_value()", id="prim-value-empty"),
    pytest.param(graph_signature('x: R.Tensor((4,), "float32", 1, 2)'),
                 "R.Tensor takes at most 3 positional argument(s): shape, dtype, ndim", "2",
                 id="tensor-four-arguments"),
    pytest.param(graph_signature('x: R.Tensor((4,), "float32", foo=1)'),
                 "R.Tensor has no argument 'foo'; it takes shape, dtype, ndim", "foo=1",
                 id="tensor-unknown-keyword"),
    pytest.param(graph_signature('x: R.Tensor((4,), "float32", dtype="float32")'),
                 "R.Tensor got argument 'dtype' twice", 'dtype="float32"',
                 id="tensor-dtype-twice"),
    pytest.param(graph_signature("x: int"), "expected a struct info annotation", "int",
                 id="python-annotation"),
    pytest.param(graph("return x  # <-\nreturn x"),
                 "return must be the last statement of the graph function, after any dataflow "
                 "block", None, id="two-returns"),
    pytest.param(graph("y = R.exp(x)  # <-"),
                 "graph function 'f' must end with a return of its result", None,
                 id="no-return"),
    pytest.param(graph_signature('x: R.Tensor(("n",), "float32"), *args'),
                 "graph function 'f' may only have plain parameters", None, id="star-args"),
    pytest.param(graph('y = R.exp(R.match_cast(x, R.Tensor(("k",), "float32")))  # <-\n'
                       "return x"),
                 "R.match_cast must be the whole right side of a binding",
                 'R.match_cast(x, R.Tensor(("k",), "float32"))', id="match-cast-inside-a-call"),
    pytest.param(graph("y = R.exp(R.output(x))  # <-\nreturn y"),
                 "R.output(...) must be the last statement of a `with R.dataflow():` block",
                 "R.output(x)", id="output-as-a-value"),
    pytest.param(graph("y = R.dataflow()  # <-\nreturn x"),
                 "R.dataflow() opens a block: `with R.dataflow():`", "R.dataflow()",
                 id="dataflow-as-a-value"),
    pytest.param(graph("y = R.function(x)  # <-\nreturn x"),
                 "@R.function decorates a definition; it is not a value", "R.function(x)",
                 id="function-as-a-value"),
    pytest.param(graph('y = R.Tensor((4,), "float32")  # <-\nreturn x'),
                 "R.Tensor(...) is a struct info annotation, not a value",
                 'R.Tensor((4,), "float32")', id="struct-info-as-a-value"),
]


@pytest.mark.parametrize("src, words, underlined", GRAPH)
def test_a_bad_graph_function_is_reported_at_its_line(src, words, underlined):
    """Each malformed graph statement, call or annotation names itself at its line."""
    check(src, words, underlined)


CALLEE = """
@I.ir_module
class M:
    @T.prim_func
    def g(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        B[0] = A[0]

    @R.function
    def f(x: R.Tensor((4,), "float32")):
        y = CALL  # <-
        return y
"""


@pytest.mark.parametrize("call, words, underlined", [
    ('R.call_tir(cls.g, (x,))', "R.call_tir needs out_sinfo, the struct info of its output(s)",
     "R.call_tir(cls.g, (x,))"),
    ('R.call_tir(cls.g, out_sinfo=R.Tensor((4,), "float32"))', "R.call_tir needs args",
     'R.call_tir(cls.g, out_sinfo=R.Tensor((4,), "float32"))'),
    ('R.call_tir(cls.g, x, out_sinfo=R.Tensor((4,), "float32"))',
     "R.call_tir takes its arguments as a tuple", "x"),
    ('R.call_tir("g", (x,), out_sinfo=R.Tensor((4,), "float32"))',
     "R.call_tir calls a prim function of the module", '"g"'),
])
def test_a_malformed_call_tir_is_reported_at_its_line(call, words, underlined):
    """R.call_tir without its parts, or naming its callee by a string."""
    check(CALLEE.replace("CALL", call), words, underlined)


# ---------------------------------------------------------------- modules and text
def test_a_module_class_holds_only_functions():
    """An assignment in an @I.ir_module class is named as such."""
    check("""
        @I.ir_module
        class M:
            x = 1  # <-
        """, "only decorated functions may appear in an @I.ir_module class, not Assign",
          "x = 1")


def test_a_function_defined_twice_in_a_module():
    """The second definition is refused, naming the line of the first."""
    err = check("""
        @I.ir_module
        class M:
            @R.function
            def f(x: R.Tensor((4,), "float32")):
                return x

            @R.function
            def f(x: R.Tensor((4,), "float32")):  # <-
                return x
        """, "function 'f' is defined twice in module 'M' (first at line 6)")
    assert err.col == 4


def test_text_with_other_statements_is_refused():
    """from_source text holds imports and definitions only."""
    check("""
        x = 1  # <-
        """, "from_source text may hold only imports, one @I.ir_module class or decorated "
             "functions", "x = 1")


@pytest.mark.parametrize("defs, found, line", [
    ("", 0, 1),
    (prim("A[0] = 0.0") + "\n\n" + prim("A[0] = 1.0").replace("def f", "def g"), 2, 9),
])
def test_text_must_define_exactly_one_thing(defs, found, line):
    """Zero definitions are refused at the text's first statement, two at the second's def
    line (it had pointed at the import)."""
    with pytest.raises(ParseError) as info:
        from_source(HEADER + defs, "audit.py")
    err = info.value
    assert err.message == ("from_source text must define exactly one module or function, "
                           f"found {found}")
    assert (err.filename, err.line) == ("audit.py", line)
    if found == 2:
        assert (HEADER + defs).splitlines()[line - 1] == 'def g(A: T.Buffer((4,), "float32")):'


@pytest.mark.parametrize("text, words, line", [
    ("def f(:\n", "invalid Python syntax: invalid syntax", 1),
    ("x = 1\ndef f(\n", "invalid Python syntax: '(' was never closed", 2),
    ("if 1:\n\tx = 1\n        y = 2\n",
     "invalid Python syntax: inconsistent use of tabs and spaces in indentation", 3),
])
def test_text_python_cannot_parse_is_a_parse_error(text, words, line):
    """A SyntaxError becomes a ParseError at the line Python names."""
    with pytest.raises(ParseError) as info:
        from_source(text, "audit.py")
    assert info.value.message == words
    assert (info.value.filename, info.value.line) == ("audit.py", line)
    assert str(info.value).splitlines()[1] == f"{line:>5} | {text.splitlines()[line - 1].strip()}"


# ---------------------------------------------------------------- decorated functions


def test_try_in_a_decorated_prim_function():
    """try/except is named as unsupported, at the try line of this file."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            try:
                A[0] = T.float32(1)
            except Exception:
                A[0] = T.float32(2)
    err = info.value
    assert (err.filename, err.line) == (__file__, line_in(
        test_try_in_a_decorated_prim_function, "try:"))
    assert err.message == "try/except is not supported in tensor-level (T) code"


def test_lambda_in_a_decorated_prim_function():
    """A lambda is named as unsupported, underlined at its line."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            g = lambda x: x  # noqa: E731
            A[0] = T.float32(1)
    err = info.value
    assert (err.filename, err.line) == (__file__, line_in(
        test_lambda_in_a_decorated_prim_function, "g = lambda"))
    assert err.message == "a lambda is not supported in tensor-level (T) expression code"
    source, caret = str(err).splitlines()[1:3]
    assert source[caret.index("^"):caret.rindex("^") + 1] == "lambda x: x"


def test_list_comprehension_in_a_decorated_prim_function():
    """A list comprehension is named as unsupported at its line."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = [A[i] for i in range(4)]
    err = info.value
    assert (err.filename, err.line) == (__file__, line_in(
        test_list_comprehension_in_a_decorated_prim_function, "[A[i] for i"))
    assert err.message == ("a list comprehension is not supported in tensor-level (T) "
                           "expression code")


def test_misspelt_loop_kind_in_a_decorated_prim_function():
    """T.paralel suggests T.parallel at the loop's line."""
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.paralel(4):
                A[i] = T.float32(0)
    err = info.value
    assert (err.filename, err.line) == (__file__, line_in(
        test_misspelt_loop_kind_in_a_decorated_prim_function, "T.paralel(4)"))
    assert err.message == "unknown name T.paralel; did you mean T.parallel?"


def test_a_shape_constant_from_python_must_be_int64():
    """A Python tuple holding a float, used as a shape, is refused at the annotation."""
    shape = (1.5,)
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def f(A: T.Buffer(shape, "float32")):
            A[0] = T.float32(0)
    err = info.value
    assert (err.filename, err.line) == (__file__, line_in(
        test_a_shape_constant_from_python_must_be_int64, "def f(A: T.Buffer(shape"))
    assert err.message == "a shape entry must be int64, not float32"


def test_ir_module_decorates_a_class_only():
    """@I.ir_module on a def says what it takes."""
    with pytest.raises(Error, match=r"^@I.ir_module decorates a class, not a function$"):
        @I.ir_module
        def f():
            pass


def test_r_function_takes_a_python_function():
    """R.function called on something that is no def says so."""
    with pytest.raises(Error, match=r"^R.function takes a Python function \(def\), not an int$"):
        R.function(3)


def test_a_function_without_source_is_a_parse_error():
    """Code compiled from a string has no file to read its definition from."""
    code = compile('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
                   '    A[0] = T.float32(1)\n', "<generated>", "exec")
    with pytest.raises(ParseError) as info:
        exec(code, {"T": T})
    err = info.value
    assert err.message == ("cannot find the source of 'f' (file '<generated>' is not "
                           "readable); define it in a file or a notebook cell, or use "
                           "pyir.script.from_source(text)")
    assert (err.filename, err.line) == ("<generated>", 1)


def test_a_definition_missing_from_its_file_is_a_parse_error(tmp_path):
    """The file a function says it came from does not define it (changed since)."""
    path = tmp_path / "edited.py"
    path.write_text("x = 1\n")
    code = compile('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
                   '    A[0] = T.float32(1)\n', str(path), "exec")
    with pytest.raises(ParseError) as info:
        exec(code, {"T": T})
    assert info.value.message == (f"cannot find the definition of 'f' in {path} near line 1; "
                                  "was the file changed after it was imported?")
    assert (info.value.filename, info.value.line) == (str(path), 1)


# ---------------------------------------------------------------- the printer
def test_the_printer_names_what_it_cannot_print():
    """pyir.script.script on a value that is no IR node."""
    with pytest.raises(Error, match=r"^the printer does not know how to print int$"):
        pyir.script.script(5)


def test_the_printer_refuses_an_annotation_value_of_another_kind():
    """A prim function made in code with a list as an attribute value."""
    func = ir.PrimFunc("f", (), ir.Evaluate(ir.IntImm(0, "int32")), (("a", [1]),))
    with pytest.raises(Error, match=r"^cannot print annotation value \[1\]; annotations hold "
                                    r"plain constants and expressions$"):
        func.script()


def test_the_printer_refuses_a_shape_that_is_no_shape_expression():
    """A graph function made in code with a float dimension."""
    sinfo = ir.TensorStructInfo((ir.FloatImm(1.0, "float32"),), "float32")
    x = ir.GraphVar("x", sinfo)
    func = ir.Function("f", (x,), ir.SeqExpr((), x), sinfo)
    with pytest.raises(Error, match=r"^cannot print FloatImm\(value=1.0, dtype='float32'\) as "
                                    r"a shape expression; shapes use integers, shape variables "
                                    r"and \+ - \* // %$"):
        func.script()

