"""IRModule: named prim functions and graph functions together."""

import dataclasses
from dataclasses import dataclass

from ..errors import Error, MissingNameError
from .node import Node


@dataclass(frozen=True, slots=True)
class IRModule(Node):
    """An ordered, immutable mapping of function names to PrimFunc / Function.

    ``functions`` is a tuple of (name, function) pairs; use ``mod[name]``,
    ``mod.with_function(name, f)`` and ``mod.without(name)``.
    """

    functions: tuple = ()
    attrs: tuple = ()

    @staticmethod
    def from_dict(functions, attrs=()):
        """A module of ``functions`` (name -> function), each renamed to its key if needed
        (as `with_function` does)."""
        return IRModule(tuple((n, _named(n, f)) for n, f in functions.items()), tuple(attrs))

    def __getitem__(self, name):
        for n, f in self.functions:
            if n == name:
                return f
        raise MissingNameError(f"IRModule has no function named {name!r}; it has "
                               f"{', '.join(self.names()) or 'none'}")

    def __contains__(self, name):
        return any(n == name for n, _ in self.functions)

    def __iter__(self):
        return iter(self.names())

    def __len__(self):
        return len(self.functions)

    def names(self):
        return [n for n, _ in self.functions]

    def items(self):
        return list(self.functions)

    def with_function(self, name, func):
        """A module with ``name`` bound to ``func`` (replacing it in place, or appended);
        the function is renamed to ``name`` if needed."""
        func = _named(name, func)
        if name in self:
            funcs = tuple((n, func if n == name else f) for n, f in self.functions)
        else:
            funcs = self.functions + ((name, func),)
        return IRModule(funcs, self.attrs)

    def without(self, name):
        return IRModule(tuple((n, f) for n, f in self.functions if n != name), self.attrs)


def _named(name, func):
    """``func`` (a prim or graph function) named ``name``."""
    if not isinstance(name, str) or not (isinstance(func, Node) and hasattr(func, "params")):
        raise Error(f"an IRModule maps names (str) to prim or graph functions, got "
                    f"{name!r}: {type(func).__name__}")
    return func if func.name == name else dataclasses.replace(func, name=name)
