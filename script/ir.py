"""The ``I`` namespace of the script language: ``@I.ir_module``."""

import sys

from .parser.module import parse_decorated_class


def ir_module(cls):
    """Parse a class of decorated functions into an `pyir.ir.IRModule` (never runs them)."""
    return parse_decorated_class(cls, sys._getframe(1))
