"""pyir.schedule: interactive, traced schedules of prim functions.

``Schedule(mod)`` holds the current module; its methods are the primitives (split, fuse,
reorder, parallel, vectorize, unroll, annotate, compute_at, reverse_compute_at,
compute_inline, reverse_compute_inline, cache_read, cache_write, decompose_reduction,
rfactor, transform_layout, blockize, tensorize, sample_perfect_tile). Every step is checked
before it changes anything, recorded in ``sch.trace`` and undoable.
"""

from .errors import ScheduleError
from .handles import BlockRV, ExprRV, LoopRV
from .index_map import IndexMap
from .state import AFTER_EACH_STEP, Diff, Schedule
from .sweep import sweep
from .tensorize import get_tensor_intrin, list_tensor_intrins, register_tensor_intrin
from .trace import Instruction, Trace

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "ExprRV", "IndexMap", "Trace",
           "Instruction", "Diff", "sweep", "register_tensor_intrin", "get_tensor_intrin",
           "list_tensor_intrins", "AFTER_EACH_STEP"]
