"""pyir.transform: the lowering passes for prim functions, in the order the build runs them.

Each pass is a function ``IRModule -> IRModule``; graph functions pass through untouched.
`PIPELINE` is the whole list; `lower` runs it. Analyses the passes share with the schedule
and the parser: `linear` (how an index moves with a variable), `dependence` (which loops'
iterations depend on each other), `concurrency` (which may run at the same time) and
`regions` (what a block reads and writes, and whether its declared regions cover that).
"""

from .common import LowerError
from .default_schedule import default_schedule
from .entry_conditions import entry_conditions
from .flatten import flatten_buffers
from .lower_blocks import lower_blocks
from .register_tiles import compact_buffers, split_tail_loops
from .simplify import simplify
from .storage import plan_storage

PIPELINE = [
    default_schedule,
    lower_blocks,
    entry_conditions,
    compact_buffers,
    plan_storage,
    split_tail_loops,
    flatten_buffers,
    simplify,
]


#: Callables ``check(mod, pass_name)`` run after every pass; the test suite registers
#: `pyir.ir.verify` here so every build in the tests is verified pass by pass.
AFTER_EACH_PASS = []


def lower(mod, default_schedule=True, target="llvm"):
    """Run `PIPELINE` over ``mod`` (skipping the default schedule when told to). The default
    schedule is the one for ``target`` (its register tiles fit the target's registers); the
    other passes do not depend on the target."""
    for p in PIPELINE:
        if p.__name__ == "default_schedule":
            if not default_schedule:
                continue
            mod = p(mod, target=target)
        else:
            mod = p(mod)
        for check in AFTER_EACH_PASS:
            check(mod, p.__name__)
    return mod


__all__ = ["PIPELINE", "AFTER_EACH_PASS", "lower", "LowerError", "default_schedule", "lower_blocks",
           "compact_buffers", "split_tail_loops",
           "plan_storage", "entry_conditions", "flatten_buffers", "simplify"]
