"""`gc_paused`: Python's cyclic garbage collector held off while the toolkit compiles.

A build or a schedule step allocates tens of thousands of objects that live until it
ends (IR nodes, arithmetic polynomials, llvmlite instructions); each allocation burst
triggers collections that scan them all and free almost nothing: 10-15 % of a cold
schedule + build of the bench matmul went to `gc` in a sampling profile. IR nodes are
acyclic (reference counting frees them), and codegen breaks the cycles of llvmlite's IR
objects once it has printed them (`pyir.codegen.llvm`); what cyclic garbage is left is
freed by the first collection after the pause. (mypy raises the collector's thresholds
during its builds for the same reason.)
"""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Inside: no cyclic garbage collection (unless something inside turns it on). Nests;
    the collector is turned back on only by the context that turned it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
