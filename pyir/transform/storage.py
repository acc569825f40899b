"""Storage for allocated buffers.

Every Allocate gets a storage class recorded in the function attribute "storage" (a tuple
of (buffer name, "stack" | "heap") pairs): "stack" for a constant size of at most
`STACK_LIMIT_BYTES`, "heap" (64-byte aligned, freed on every path out) otherwise.
Allocated buffers with clashing names are renamed ``name_1``, ``name_2`` ... so that the
names identify them.
"""

import dataclasses

from ..ir import dtype as dt
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.node import rewrite
from .common import prim_func_pass, replace_func, set_attrs

STACK_LIMIT_BYTES = 16 * 1024
HEAP_ALIGNMENT = 64


def storage_class(buffer):
    """"stack" or "heap" for an allocated buffer."""
    size = dt.nbytes(buffer.dtype)
    for s in buffer.shape:
        if not isinstance(s, E.IntImm):
            return "heap"
        size *= s.value
    return "stack" if size <= STACK_LIMIT_BYTES else "heap"


def _unique_names(func):
    taken = {p.name for p in func.params}
    renames = {}
    for n in S.walk_stmts(func.body):
        if isinstance(n, S.Allocate) and n.buffer not in renames:
            name, k = n.buffer.name, 0
            while name in taken:
                k += 1
                name = f"{n.buffer.name}_{k}"
            taken.add(name)
            if name != n.buffer.name:
                renames[n.buffer] = dataclasses.replace(n.buffer, name=name)
    if not renames:
        return func
    body = rewrite(func.body, lambda n: renames.get(n) if isinstance(n, E.Buffer) else None)
    return replace_func(func, body=body)


@prim_func_pass
def plan_storage(func):
    """Record a storage class for every Allocate (see the module docstring)."""
    func = _unique_names(func)
    plan = tuple((n.buffer.name, storage_class(n.buffer))
                 for n in S.walk_stmts(func.body) if isinstance(n, S.Allocate))
    if not plan:
        return func
    return set_attrs(func, storage=plan)
