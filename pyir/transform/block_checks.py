"""What a block states that its body and the loops around it must bear out: its declared
regions cover what its body accesses (`pyir.transform.regions.declared_miss`), and each
iterator's binding stays in the iterator's domain over those loops (`binding_outside`).

The parser checks both as it reads a script. `block_fault` checks IR that no parser read
(built or edited by hand), where the first schedule step on a function and the default
schedule would otherwise trust it: their legality checks read the declared regions, and
lowering runs a block for every value of its bindings (a reduction bound as
``T.axis.reduce(4, k)`` over ``range(n)`` summed n elements, and at n = 0 left its output
unchanged).
"""

from .. import arith
from ..ir import (Binary, BlockRealize, BufferStore, Call, Evaluate, For, IfThenElse, IntImm,
                  LetStmt, Range, SeqStmt, Var, is_true, walk)
from ..ir.stmt import Allocate, stmt_children, walk_stmts
from ..runtime.exprtext import expr_text
from .regions import declared_miss, miss_message


def binding_outside(realize, analyzer, loops):
    """``(iter_var, lo, hi)`` for the first iterator of BlockRealize ``realize`` whose
    binding takes values from ``lo`` to ``hi`` outside its domain, over the loops (and the
    iterators of blocks around) that the Analyzer ``analyzer()`` bounds; else None.
    ``loops`` maps loop variables to their ``(start, extent)``: a binding that is one of
    them over exactly the iterator's domain (``T.axis.remap``'s) needs no analysis. A block
    that its own predicate, an ``if`` in it or the predicate of a block inside may cut short
    is left to them (the split of a loop with a tail binds past the domain, and a predicate
    cuts that off); so is a binding whose bounds cannot be stated."""
    block = realize.block
    if not is_true(realize.predicate) or any(
            isinstance(n, IfThenElse) or isinstance(n, BlockRealize) and not is_true(n.predicate)
            for part in (block.body, block.init) if part is not None for n in walk_stmts(part)):
        return None
    ana = None
    for iv, binding in zip(block.iter_vars, realize.iter_values):
        start, extent = loops.get(binding, (None, None)) if isinstance(binding, Var) \
            else (None, None)
        if isinstance(start, IntImm) and start.value == 0 and extent == iv.extent:
            continue
        if ana is None:
            ana = analyzer()
        lo, hi = ana.symbolic_bound(binding)
        if lo is None or hi is None:
            continue
        if not (ana.can_prove(Binary("ge", lo, IntImm(0)))
                and ana.can_prove(Binary("lt", hi, iv.extent))):
            return iv, lo, hi
    return None


def outside_message(iv, lo, hi):
    """What `binding_outside` found, as a message."""
    return (f"block iterator {iv.var.name} is bound to values from {expr_text(lo)} to "
            f"{expr_text(hi)} over the loops around the block, outside its domain "
            f"[0, {expr_text(iv.extent)})")


def block_fault(func):
    """What is wrong with the first block of PrimFunc ``func`` whose ``reads`` or ``writes``
    do not cover its accesses, or whose bindings leave their domains (see the module
    docstring), as a message naming the block; else None."""
    analyzer = arith.Analyzer()   # each loop and iterator bound where the walk meets it
    loops = {}
    stack = [func.body]
    while stack:   # a walk without recursion: loops may nest thousands deep
        s = stack.pop()
        if isinstance(s, SeqStmt):
            stack.extend(reversed(s.stmts))
        elif isinstance(s, For):
            analyzer.bind(s.loop_var, Range(s.start, s.extent))
            loops[s.loop_var] = (s.start, s.extent)
            stack.append(s.body)
        elif isinstance(s, (LetStmt, Allocate)):
            stack.append(s.body)
        elif isinstance(s, IfThenElse):
            stack.extend(c for c in (s.else_case, s.then_case) if c is not None)
        elif isinstance(s, BlockRealize):
            block = s.block
            outside = binding_outside(s, lambda: analyzer, loops)
            if outside:
                return f"block {block.name!r}: {outside_message(*outside)}"
            for iv in block.iter_vars:
                analyzer.bind(iv.var, Range(IntImm(0), iv.extent))
            found = declared_miss(block, lambda: analyzer, not is_true(s.predicate))
            if found:
                return miss_message(block.name, found[0], found[1], f"Block.{found[0]}")[1]
            stack.extend(c for c in (block.body, block.init) if c is not None)
    return None


def loose_statement(body, in_loop=False):
    """The first store or kernel call in ``body`` that no block's declared regions cover
    where a loop holding a block would move it, else None: one in a loop and outside any
    block inside that loop, or (unless ``in_loop``) outside any block at all. The schedule's
    legality checks and the default schedule's rules read blocks, and would not see it: a
    reorder of the loops around ``s[0] = s[0] * 2 + i`` changed ``s``. A statement inside a
    block, in no loop of that block that holds a block too, is that block's (an opaque
    block's own loop of statements: no primitive reaches that loop)."""
    stack = [(body, not in_loop, False)]   # (statement, whether a store counts, in a block)
    while stack:
        s, counts, in_block = stack.pop()
        if isinstance(s, BlockRealize):
            stack.extend((c, False, True) for c in (s.block.init, s.block.body)
                         if c is not None)
        elif isinstance(s, (BufferStore, Evaluate)):
            if counts and (isinstance(s, BufferStore) or any(
                    isinstance(n, Call) and n.op == "call_extern" for n in walk(s.value))):
                return s
        else:
            if isinstance(s, For):
                counts = counts or not in_block or any(
                    isinstance(n, BlockRealize) for n in walk_stmts(s.body))
            stack.extend((c, counts, in_block) for c in reversed(stmt_children(s)))
    return None
