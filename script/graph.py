"""The ``R`` namespace of the script language (graph level): ``@R.function`` and the names
used inside graph functions.

Struct-info annotations (``R.Tensor``, ``R.Tuple``, ``R.Shape``, ``R.Prim``, ``R.Object``)
are harmless objects, because Python evaluates annotations when it runs the ``def``. Every
other name is only meaningful to the parser: calling it from Python raises pyir.Error.
"""

import sys
import types

from pyir.errors import Error, kind_of
from pyir.ir import Function

from .diagnostics import dialect_getattr
from .parser.module import in_module_class, named_decorator, parse_decorated_function


def function(func=None, **options):
    """Parse a graph function into a `pyir.ir.Function` (never runs it). Inside an
    ``@I.ir_module`` class the function is returned as is; the module parses it.
    ``@R.function(name="mylib.f")`` names the function where the name is not a Python
    identifier."""
    name = named_decorator("R.function", func, options)
    if func is None:
        return lambda f: _function(f, sys._getframe(1), name)
    return _function(func, sys._getframe(1), name)


def _function(func, frame, name):
    if in_module_class(frame):
        return func
    if isinstance(func, Function):
        return func   # decorated twice
    if not isinstance(func, types.FunctionType):
        raise Error(f"R.function takes a Python function (def), not {kind_of(func)}")
    return parse_decorated_function(func, frame, "function", name)


class _Annotation:
    """What an annotation evaluates to at ``def`` time: its arguments as written, whatever
    they are; the parser reads the source and says, at the user's line, what is wrong with
    them. Called (``R.Object(...)``), the same kind with those arguments."""

    def __init__(self, kind, *args, **kwargs):
        self.kind, self.args, self.kwargs = kind, args, kwargs

    def __call__(self, *args, **kwargs):
        return _Annotation(self.kind, *args, **kwargs)

    def __repr__(self):
        items = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"R.{self.kind}({', '.join(items)})"


Tensor = _Annotation("Tensor")
Tuple = _Annotation("Tuple")
Shape = _Annotation("Shape")
Prim = _Annotation("Prim")
Object = _Annotation("Object")


class _ParserOnly:
    """A name that only the parser understands, e.g. ``R.call_tir``."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise Error(f"R.{self._name} is only valid inside @R.function")

    def __repr__(self):
        return f"<R.{self._name}: only valid inside @R.function>"


class _Namespace:
    def __init__(self, prefix, names):
        for name in names:
            setattr(self, name, _ParserOnly(prefix + name))


#: Names of ``R`` handled by the parser (besides the annotations above and the operators).
CALLS = ("dataflow", "output", "call_tir", "call_dps_packed", "call_packed", "match_cast",
         "shape", "prim_value")


def _install():
    from pyir.ir.ops import OPS
    module = sys.modules[__name__]
    for name in CALLS:
        setattr(module, name, _ParserOnly(name))
    nested = {}
    for name in OPS:
        prefix, _, leaf = name.rpartition(".")
        if prefix:
            nested.setdefault(prefix, []).append(leaf)
        else:
            setattr(module, name, _ParserOnly(name))
    for prefix, leaves in nested.items():
        setattr(module, prefix, _Namespace(prefix + ".", leaves))


_install()


__getattr__ = dialect_getattr("R", globals())
