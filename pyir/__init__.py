"""pyir: a Python-first, scriptable IR toolkit for tensor programs, compiled through LLVM.

Heavy parts (llvmlite, the parser, the schedule) load on first use, so ``import pyir``
stays cheap.
"""

import importlib

from .errors import ArgumentTypeError, ArgumentValueError, Error, IRError, MissingNameError
from . import ir

__version__ = "0.1.0"

_LAZY_MODULES = ("arith", "transform", "codegen", "runtime", "script", "schedule", "ffi")


def build(mod_or_func, target="llvm", **options):
    """Compile an IRModule, PrimFunc or graph Function; return a `runtime.Executable`."""
    from .driver import build as _build
    return _build(mod_or_func, target=target, **options)


def load_module(path):
    """Load a shared object written by ``Executable.export_library``."""
    from .runtime import load_module as _load
    return _load(path)


def __getattr__(name):
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pyir' has no attribute {name!r}")


__all__ = ["Error", "ArgumentTypeError", "ArgumentValueError", "IRError", "MissingNameError",
           "ir", "build", "load_module", *_LAZY_MODULES]
