"""The ``I`` namespace of the script language: ``@I.ir_module``."""

import sys

from pyir.errors import Error, kind_of

from .diagnostics import dialect_getattr
from .parser.module import bare_decorator, parse_decorated_class


def ir_module(cls=None, **options):
    """Parse a class of decorated functions into an `pyir.ir.IRModule` (never runs them)."""
    bare_decorator("I.ir_module", cls, options)
    if not isinstance(cls, type):
        raise Error(f"@I.ir_module decorates a class, not {kind_of(cls)}")
    return parse_decorated_class(cls, sys._getframe(1))


__getattr__ = dialect_getattr("I", globals())
