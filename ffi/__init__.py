"""pyir.ffi: the global function registry and the packed calling convention."""

from .extern import ExternKernel, extern
from .registry import get_global_func, list_global_funcs, register_func, remove_global_func

__all__ = ["extern", "ExternKernel", "register_func", "get_global_func", "list_global_funcs",
           "remove_global_func"]
