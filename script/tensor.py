"""The ``T`` namespace of the script language (``from pyir.script import tensor as T``).

``@T.prim_func`` turns a decorated Python function into a `pyir.ir.PrimFunc` by reading its
source; the function is never run. The other names exist so that annotations evaluated by
Python at definition time (``T.Buffer(...)``, ``T.handle``, ``T.float32``) are harmless and
so that editors can complete ``T.`` names. Calling any of them outside a prim function
raises `pyir.Error`: they only have a meaning to the parser.
"""

import sys
import types

from pyir.errors import Error, kind_of
from pyir.ir import PrimFunc

from .diagnostics import dialect_getattr
from .parser.module import in_module_class, named_decorator, parse_decorated_function


def prim_func(func=None, **options):
    """Parse ``func`` into a PrimFunc; inside an ``@I.ir_module`` class body, leave it to
    the module (which parses the whole class). ``@T.prim_func(name="mylib.f")`` names the
    function where the name is not a Python identifier."""
    name = named_decorator("T.prim_func", func, options)
    if func is None:
        return lambda f: _prim_func(f, sys._getframe(1), name)
    return _prim_func(func, sys._getframe(1), name)


def _prim_func(func, frame, name):
    if in_module_class(frame):
        return func
    if isinstance(func, PrimFunc):
        return func   # decorated twice
    if not isinstance(func, types.FunctionType):
        raise Error(f"T.prim_func takes a Python function (def), not {kind_of(func)}")
    return parse_decorated_function(func, frame, "prim_func", name)


class BufferAnnotation:
    """What ``T.Buffer(shape, dtype, scope)`` evaluates to in a parameter annotation: its
    arguments as written, whatever they are (Python evaluates the annotation when it runs
    the ``def``; the parser reads the source and says, at the user's line, what is wrong
    with them)."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        items = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"T.Buffer({', '.join(items)})"


Buffer = BufferAnnotation


class _Annotation:
    """A scalar type usable bare in annotations (``x: T.float32``, ``h: T.handle``)."""

    def __init__(self, name):
        self.dtype = name
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise _outside(f"T.{self.dtype}")

    def __repr__(self):
        return f"T.{self.dtype}"


def _outside(name):
    return Error(f"{name} is only valid inside @T.prim_func")


def _builtin(name):
    def stub(*args, **kwargs):
        raise _outside(f"T.{name}")
    stub.__name__ = stub.__qualname__ = name.replace(".", "_")
    stub.__doc__ = f"``T.{name}``: understood by the @T.prim_func parser only."
    return stub


class _Axis:
    """``T.axis.spatial / reduce / remap``."""

    spatial = staticmethod(_builtin("axis.spatial"))
    reduce = staticmethod(_builtin("axis.reduce"))
    remap = staticmethod(_builtin("axis.remap"))


axis = _Axis()
handle = _Annotation("handle")

# Loops, blocks and statements.
grid = _builtin("grid")
serial = _builtin("serial")
parallel = _builtin("parallel")
vectorized = _builtin("vectorized")
unroll = _builtin("unroll")
block = _builtin("block")
init = _builtin("init")
where = _builtin("where")
reads = _builtin("reads")
writes = _builtin("writes")
block_attr = _builtin("block_attr")
func_attr = _builtin("func_attr")
alloc_buffer = _builtin("alloc_buffer")
let = _builtin("let")
match_buffer = _builtin("match_buffer")
evaluate = _builtin("evaluate")

# Expressions.
cast = _builtin("cast")
if_then_else = _builtin("if_then_else")
max = _builtin("max")
min = _builtin("min")
exp = _builtin("exp")
log = _builtin("log")
sqrt = _builtin("sqrt")
tanh = _builtin("tanh")
abs = _builtin("abs")
floor = _builtin("floor")
ceil = _builtin("ceil")
sigmoid = _builtin("sigmoid")
sin = _builtin("sin")
cos = _builtin("cos")
pow = _builtin("pow")
erf = _builtin("erf")
rsqrt = _builtin("rsqrt")
checked_index = _builtin("checked_index")
call_extern = _builtin("call_extern")

# Scalar types: annotations, literals (``T.float32(0)``), casts, ``n = T.int64()``.
bool = _Annotation("bool")
int8 = _Annotation("int8")
int16 = _Annotation("int16")
int32 = _Annotation("int32")
int64 = _Annotation("int64")
uint8 = _Annotation("uint8")
uint16 = _Annotation("uint16")
uint32 = _Annotation("uint32")
uint64 = _Annotation("uint64")
float16 = _Annotation("float16")
float32 = _Annotation("float32")
float64 = _Annotation("float64")


__getattr__ = dialect_getattr("T", globals())
