"""Handles to blocks, loops and sampled values.

A handle names what it points at by something every later state keeps: a block by its
function and block name, a loop by its function and loop variable (a `Var` is an identity
node that primitives reuse for a loop they keep). The schedule looks the handle up in its
current state on each use; a handle whose block or loop is gone is stale.
"""


class BlockRV:
    """A handle to a block, valid while the block exists."""

    __slots__ = ("func_name", "name")

    def __init__(self, func_name, name):
        self.func_name, self.name = func_name, name

    def __repr__(self):
        return f"BlockRV({self.func_name}.{self.name})"


class LoopRV:
    """A handle to a loop, valid while the loop exists."""

    __slots__ = ("func_name", "loop_var")

    def __init__(self, func_name, loop_var):
        self.func_name, self.loop_var = func_name, loop_var

    def __repr__(self):
        return f"LoopRV({self.func_name}.{self.loop_var.name})"


class ExprRV(int):
    """An integer chosen by a sampling step; an int everywhere, named in the trace."""

    def __repr__(self):
        return f"ExprRV({int(self)})"


HANDLE_TYPES = (BlockRV, LoopRV, ExprRV)
