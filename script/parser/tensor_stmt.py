"""Statements of the tensor-level (T) dialect: loops, blocks, stores, lets, allocations.

Statements that bind a name for the rest of their sequence (``x = expr``, ``X =
T.alloc_buffer(...)`` outside a block) return a `_Rest`, which wraps the statements that
follow. Block-level declarations (``T.axis``, ``T.where``, ``T.reads``, ...) are collected
in the innermost `_BlockFrame`; `FuncState` holds what one prim function has declared.
"""

import ast
import dataclasses
import math

from pyir import arith
from pyir.ir import (Allocate, Binary, Block, BlockRealize, Buffer, BufferRegion, BufferStore,
                     Evaluate, For, IfThenElse, IntImm, IterVar, LetStmt, PrimExpr, Range, Var,
                     seq)
from pyir.ir import dtype as dt
from pyir.ir.node import walk
from pyir.transform.block_checks import binding_outside, outside_message
from pyir.transform.concurrency import concurrency_conflict
from pyir.transform.regions import declared_miss, infer_regions, miss_message

from .core import register
from .source import parse_python
from .tensor_builtins import EXPRESSIONS, KNOWN_NAMES
from .tensor_expr import (ARITH, binary, buffer_indices, check_dtype, check_rank, dtype_arg, expr,
                          index, index_nodes, to_expr, unknown_name)

_LOOP_KINDS = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorized",
               "unroll": "unroll"}


@dataclasses.dataclass
class _BlockFrame:
    """What the statements directly inside ``with T.block(name):`` declare."""

    name: str
    depth: int
    iter_vars: list = dataclasses.field(default_factory=list)
    bindings: list = dataclasses.field(default_factory=list)
    declared: list = dataclasses.field(default_factory=list)   # the T.axis node of each
    predicate: PrimExpr = None
    reads: tuple = None
    writes: tuple = None
    declared_at: dict = dataclasses.field(default_factory=dict)   # "reads"/"writes" -> call
    init: object = None
    allocs: list = dataclasses.field(default_factory=list)
    annotations: tuple = ()


@dataclasses.dataclass
class FuncState:
    """Per prim function: shape variables, loops, open blocks, handles, let variables."""

    name: str
    shape_vars: dict = dataclasses.field(default_factory=dict)    # name -> Var
    shape_nodes: dict = dataclasses.field(default_factory=dict)   # name -> declaring node
    loops: dict = dataclasses.field(default_factory=dict)         # Var -> (start, extent)
    blocks: list = dataclasses.field(default_factory=list)
    block_lines: dict = dataclasses.field(default_factory=dict)  # block name -> its line
    handles: dict = dataclasses.field(default_factory=dict)       # name -> Buffer | None
    lets: set = dataclasses.field(default_factory=set)
    attrs: tuple = ()
    depth: int = 0

    def block(self):
        """The block whose body is being read at this very nesting level, else None."""
        if self.blocks and self.blocks[-1].depth == self.depth:
            return self.blocks[-1]
        return None


class _Rest:
    """A statement that scopes over the statements after it: ``wrap(rest) -> Stmt``."""

    def __init__(self, wrap):
        self.wrap = wrap


def _state(parser):
    return parser.state["prim"]


def string_expr(parser, node):
    """The expression in string constant ``node`` (``"n * 2"``), positioned at the string."""
    try:
        tree = parse_python(node.value.strip(), mode="eval").body
    except SyntaxError:
        parser.error(node, f"{node.value!r} is not a valid shape expression",
                     "a shape variable name such as \"n\", or an expression such as \"n * 2\"")
    for sub in ast.walk(tree):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            setattr(sub, attr, getattr(node, attr))
    return tree


def make_buffer(parser, node, name, args, keywords, what):
    """A Buffer from ``(shape, dtype="float32", scope="global")`` arguments."""
    names = ("shape", "dtype", "scope")
    if len(args) > 3:
        parser.error(node, f"{what} takes (shape, dtype, scope)", f"{what}((16, \"n\"), "
                                                                  "\"float32\")")
    given = dict(zip(names, args))
    for kw in keywords:
        if kw.arg not in names or kw.arg in given:
            parser.error(kw.value, f"{what} got an unexpected or repeated argument {kw.arg!r}",
                         "shape, dtype, scope")
        given[kw.arg] = kw.value
    if "shape" not in given:
        parser.error(node, f"{what} needs a shape", f"{what}((16, \"n\"), \"float32\")")
    dtype = dtype_arg(parser, given["dtype"]) if "dtype" in given else "float32"
    scope = "global"
    if "scope" in given:
        scope = parser.visit(given["scope"], "Texpr")
        if scope not in ("global", "local"):
            parser.error(given["scope"], f"unknown buffer scope {scope!r}", "\"global\" or "
                                                                            "\"local\"")
    return Buffer(name, _shape(parser, given["shape"]), dtype, scope)


def _shape(parser, node):
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_dim(parser, d) for d in node.elts)
    value = parser.visit(node, "Texpr")
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, tuple):
        parser.error(node, "a shape is a tuple of dimensions", "(16, \"n\", \"n * 2\")")
    return tuple(_checked_dim(parser, node, to_expr(parser, node, v)) for v in value)


def _dim(parser, node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = string_expr(parser, node)
    return _checked_dim(parser, node, index(parser, node, "a shape entry"))


def _checked_dim(parser, node, value):
    if value.dtype != dt.INDEX:
        parser.error(node, f"a shape entry must be int64, not {value.dtype}")
    if isinstance(value, IntImm) and value.value < 0:
        parser.error(node, f"a shape entry cannot be negative ({value.value})")
    if any(isinstance(n, Binary) and n.op in ("floordiv", "floormod")
           and isinstance(n.b, IntImm) and n.b.value == 0 for n in walk(value)):
        parser.error(node, "this shape entry divides by zero")
    return value


# ---------------------------------------------------------------- statement sequences
def parse_body(parser, nodes, deeper=False):
    """The statements ``nodes`` as one Stmt, in a new scope (one level deeper for the body
    of a loop, if, block or init)."""
    st = _state(parser)
    st.depth += deeper
    try:
        with parser.scopes.frame():
            return _sequence(parser, nodes)
    finally:
        st.depth -= deeper


def _sequence(parser, nodes):
    """The statements ``nodes`` as one Stmt. A statement that scopes over the rest (a `_Rest`)
    wraps the statements after it once they are all read: a loop, not a recursion per
    ``x = expr``, so a block may hold any number of them."""
    out, scoped = [], []   # scoped: (the statements before, wrap) for each _Rest, in order
    for node in nodes:
        result = parser.visit(node, "T")
        if isinstance(result, _Rest):
            scoped.append((out, result.wrap))
            out = []
        elif result is not None:
            out.append(result)
    body = seq(*out)
    for before, wrap in reversed(scoped):
        body = seq(*before, wrap(body))
    return body


# ---------------------------------------------------------------- loops
@register("T", ast.For)
def _for(parser, node):
    st = _state(parser)
    if node.orelse:
        parser.error(node.orelse[0], "for ... else is not supported in prim functions")
    loops = _loop_headers(parser, node)
    with parser.scopes.frame():
        made = []
        for name_node, start, extent, kind, annotations in loops:
            var = Var(name_node.id, dt.INDEX)
            parser.scopes.define(name_node.id, var)
            st.loops[var] = (start, extent)
            made.append((var, start, extent, kind, annotations))
        body = parse_body(parser, node.body, deeper=True)
    for var, start, extent, kind, annotations in reversed(made):
        body = For(var, start, extent, kind, body, annotations)
        if kind in ("parallel", "vectorized") and not (isinstance(extent, IntImm)
                                                       and extent.value <= 1):
            _check_concurrent(parser, node, body)
    return body


def _check_concurrent(parser, node, loop):
    """A ParseError at a ``T.parallel`` or ``T.vectorized`` loop whose iterations depend on
    each other, by the rule of ``Schedule.parallel`` and ``vectorize``
    (`pyir.transform.concurrency.concurrency_conflict`): run at the same time, they would
    give another result than the loop (a parallel one, a race). Statements outside blocks
    are checked below a ``T.parallel`` loop only (a ``T.vectorized`` one whose iterations
    interact becomes a scalar loop in codegen: `pyir.codegen.vectorize.iterations_apart`),
    and not in a function pyir lowered: its loops were proven before. Such a function has
    the attribute "lowered" (`pyir.transform.lower_blocks`: the regions its blocks declared,
    such as what a kernel called in one touches, are gone) or "param_shapes" (its buffers
    flattened by `pyir.transform.flatten_buffers`: over flat indices the rows a tile's guard
    keeps apart, ``C[i * m + j_0 * 128 + j]`` under ``if j_0 * 128 + j < m``, cannot be told
    apart without that guard)."""
    outer = []
    for var, (start, extent) in _state(parser).loops.items():
        if var is loop.loop_var:
            break
        outer.append(For(var, start, extent, "serial", Evaluate(IntImm(0))))
    lowered = any(key in ("lowered", "param_shapes") for key, _ in _state(parser).attrs)
    why = concurrency_conflict(loop, outer, f"{loop.kind} loop {loop.loop_var.name}",
                               statements=loop.kind == "parallel" and not lowered)
    if why:
        parser.error(node, why, "T.serial, or a schedule that makes them independent "
                                "(rfactor, cache_write)")


def _loop_headers(parser, node):
    """[(target name node, start, extent, kind, annotations)] for one ``for`` statement."""
    call = node.iter
    targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
    for t in targets:
        if not isinstance(t, ast.Name):
            parser.error(t, "a loop variable must be a plain name", "for i in range(n)")
    name = parser.dialect_of(call.func) if isinstance(call, ast.Call) else None
    is_range = isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
        and call.func.id == "range" and not parser.scopes.lookup("range")[0]
    if name == ("T", "grid"):
        if call.keywords:
            parser.error(call, "T.grid takes only extents", "T.grid(n, m)")
        if len(targets) != len(call.args):
            parser.error(node.target, f"T.grid has {len(call.args)} extent(s) but "
                                      f"{len(targets)} loop variable(s)",
                         f"one loop variable per extent: for {', '.join(_names(len(call.args)))}"
                         f" in T.grid(...)")
        return [(t, IntImm(0), arith.simplify(index(parser, a, "a loop extent")), "serial", ())
                for t, a in zip(targets, call.args)]
    if not is_range and not (name is not None and name[0] == "T" and name[1] in _LOOP_KINDS):
        _check_known(parser, call, name)
        parser.error(call, "a for loop iterates over range(...), T.grid(...), or "
                           "T.serial / T.parallel / T.vectorized / T.unroll(...)",
                     "for i in range(n), for i, j in T.grid(n, m), for i in T.parallel(n)")
    what = "range" if is_range else f"T.{name[1]}"
    if len(targets) != 1:
        parser.error(node.target, f"{what} gives one loop variable, not {len(targets)}",
                     "for i in ...; use T.grid(...) for several")
    annotations = ()
    for kw in call.keywords:
        if is_range or kw.arg != "annotations":
            parser.error(kw.value, f"{what} has no argument {kw.arg!r}",
                         f"{what}(extent) or {what}(start, stop)" +
                         ("" if is_range else ", annotations={...}"))
        annotations = constant_dict(parser, kw.value)
    if len(call.args) not in (1, 2):
        parser.error(call, f"{what} takes (extent) or (start, stop)" +
                     ("; a step is not supported" if len(call.args) == 3 else ""),
                     f"{what}(n) or {what}(a, b)")
    if len(call.args) == 1:
        start, extent = IntImm(0), arith.simplify(index(parser, call.args[0], "a loop extent"))
    else:
        start = index(parser, call.args[0], "a loop start")
        stop = index(parser, call.args[1], "a loop stop")
        extent = arith.simplify(stop - start)
    kind = "serial" if is_range else _LOOP_KINDS[name[1]]
    return [(targets[0], start, extent, kind, annotations)]


def _check_known(parser, node, name):
    """Report ``T.<name>`` first if the parser does not know it at all."""
    if name is not None and name[0] == "T" and name[1] not in KNOWN_NAMES \
            and name[1] not in dt.DTYPES:
        unknown_name(parser, node, name[1])


def _names(count):
    return [f"i{k}" for k in range(count)]


def constant_dict(parser, node, earlier=()):
    """``{"key": plain value}`` as a tuple of (key, value) pairs, in written order, after the
    pairs ``earlier`` (from a previous T.func_attr / T.block_attr); a key is given once."""
    if not isinstance(node, ast.Dict):
        parser.error(node, "annotations are a dict literal", "{\"key\": value}")
    pairs = list(earlier)
    for k, v in zip(node.keys, node.values):
        key = parser.visit(k, "Texpr") if k is not None else None
        if not isinstance(key, str):
            parser.error(k or v, "annotation keys are strings", "{\"key\": value}")
        if any(key == known for known, _ in pairs):
            parser.error(k, f"the key {key!r} is given twice; each key has one value",
                         "one entry per key")
        value = parser.visit(v, "Texpr")
        if not _is_attr_value(value):
            parser.error(v, "annotation values are constants (numbers, strings, bools), "
                            "expressions, or tuples of them")
        if isinstance(value, float) and not math.isfinite(value):
            parser.error(v, f"the annotation value {value!r} is not finite (the script has no "
                            "literal for it, as sch.annotate refuses it)")
        pairs.append((key, value))
    return tuple(pairs)


def _is_attr_value(value):
    if isinstance(value, tuple):
        return all(_is_attr_value(v) for v in value)
    return isinstance(value, (int, float, str, PrimExpr))


# ---------------------------------------------------------------- with: blocks and init
@register("T", ast.With)
def _with(parser, node):
    call = node.items[0].context_expr
    name = parser.dialect_of(call.func) if isinstance(call, ast.Call) else None
    target = node.items[0].optional_vars
    scoped = name in (("T", "alloc_buffer"), ("T", "let"))
    if len(node.items) != 1 or (target is not None) != scoped \
            or name not in (("T", "block"), ("T", "init"), ("T", "alloc_buffer"), ("T", "let")):
        _check_known(parser, call, name)
        parser.error(node, "a with statement in a prim function is with T.block(\"name\"):, "
                           "with T.init():, with T.alloc_buffer(...) as X: or with T.let(value) "
                           "as x:", "with T.block(\"C\"):")
    if name == ("T", "init"):
        return _init(parser, node, call)
    if name == ("T", "block"):
        return _block(parser, node, call)
    if not isinstance(target, ast.Name):
        parser.error(target, "the name after 'as' must be a plain name", "as X")
    return _scoped(parser, node, target, call, name[1])


def _scoped(parser, node, target, call, kind):
    """``with T.alloc_buffer(...) as X:`` (an Allocate) or ``with T.let(value) as x:`` (a
    LetStmt) whose scope is exactly the with body."""
    with parser.scopes.frame():
        if kind == "alloc_buffer":
            buf = make_buffer(parser, call, target.id, call.args, call.keywords, "T.alloc_buffer")
            parser.scopes.define(target.id, buf)
            return Allocate(buf, parse_body(parser, node.body, deeper=True))
        if call.keywords or len(call.args) != 1:
            parser.error(call, "T.let takes one value", "with T.let(value) as x:")
        rest = _let(parser, target, expr(parser, call.args[0]))
        return rest.wrap(parse_body(parser, node.body, deeper=True))


def _block(parser, node, call):
    st = _state(parser)
    if call.keywords or len(call.args) != 1:
        parser.error(call, "T.block takes one argument, the block name", "T.block(\"C\")")
    name = parser.visit(call.args[0], "Texpr")
    if not isinstance(name, str):
        parser.error(call.args[0], "the block name must be a string", "T.block(\"C\")")
    if name in st.block_lines:
        parser.error(call.args[0], f"block name \"{name}\" is already used at line "
                     f"{st.block_lines[name]} of prim function {st.name}; blocks are found by "
                     "name (sch.get_block), so each needs its own", "T.block(\"C_2\")")
    st.block_lines[name] = call.lineno
    frame = _BlockFrame(name, st.depth + 1)
    st.blocks.append(frame)
    try:
        body = parse_body(parser, node.body, deeper=True)
    finally:
        st.blocks.pop()
    reads, writes = frame.reads, frame.writes
    if reads is None or writes is None:
        inferred = infer_regions(body, frame.init, frame.allocs)
        reads = inferred[0] if reads is None else reads
        writes = inferred[1] if writes is None else writes
    block = Block(name, tuple(frame.iter_vars), reads, writes, body, frame.init,
                  tuple(frame.allocs), frame.annotations)
    if frame.declared_at:
        _check_declared(parser, frame, block)
    predicate = frame.predicate if frame.predicate is not None else IntImm(1, "bool")
    realize = BlockRealize(tuple(frame.bindings), predicate, block)
    _check_bindings(parser, frame, realize)
    return realize


def _loops_analyzer(parser, iter_vars):
    """An Analyzer that knows the ranges of the loops in scope and of block iterators
    ``iter_vars`` (over their domains)."""
    analyzer = arith.Analyzer()
    for var, (start, extent) in _state(parser).loops.items():
        analyzer.bind(var, Range(start, extent))
    for iv in iter_vars:
        analyzer.bind(iv.var, Range(IntImm(0), iv.extent))
    return analyzer


def _check_bindings(parser, frame, realize):
    """A ParseError at a block iterator whose binding takes values outside its domain over
    the loops around the block (`pyir.transform.block_checks.binding_outside`: the block
    would run for iterations its domain does not have), or whose extent is a negative
    constant."""
    for iv, node in zip(frame.iter_vars, frame.declared):
        if isinstance(iv.extent, IntImm) and iv.extent.value < 0:
            parser.error(node, f"block iterator {iv.var.name} has the negative extent "
                               f"{iv.extent.value}", f"T.axis.spatial({-iv.extent.value}, ...)")
    outside = binding_outside(realize, lambda: _loops_analyzer(
        parser, [v for outer in _state(parser).blocks for v in outer.iter_vars]),
        _state(parser).loops)
    if outside:
        node = frame.declared[frame.iter_vars.index(outside[0])]
        parser.error(node, outside_message(*outside),
                     "the loops' extent as the iterator's, or a T.where that cuts the rest off")


def _check_declared(parser, frame, block):
    """A ParseError at ``T.reads`` / ``T.writes`` if it does not cover what the body
    accesses (`pyir.transform.regions.uncovered` says when)."""
    found = declared_miss(block, lambda: _loops_analyzer(parser, frame.iter_vars),
                          frame.predicate is not None,
                          [a for a in ("reads", "writes") if a in frame.declared_at])
    if found:
        attr, miss = found
        text, message = miss_message(frame.name, attr, miss, f"T.{attr}")
        parser.error(frame.declared_at[attr], message, f"T.{attr}(..., {text})")


def _in_block(parser, node, what):
    frame = _state(parser).block()
    if frame is None:
        parser.error(node, f"{what} is only valid directly inside a with T.block(...)",
                     "with T.block(\"name\"):\n    " + what + "...")
    return frame


def _init(parser, node, call):
    frame = _in_block(parser, node, "T.init()")
    if call.args or call.keywords:
        parser.error(call, "T.init takes no arguments", "with T.init():")
    if frame.init is not None:
        parser.error(node, f"block {frame.name!r} has two T.init() sections")
    frame.init = parse_body(parser, node.body, deeper=True)


# ---------------------------------------------------------------- assignments
@register("T", ast.Assign)
def _assign(parser, node):
    if len(node.targets) != 1:
        parser.error(node, "chained assignment is not supported", "one target per assignment")
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Subscript):
        return _store(parser, node, target, lambda buf: _stored(parser, value, buf))
    name = parser.dialect_of(value.func) if isinstance(value, ast.Call) else None
    if name is not None and name[0] == "T" and name[1].startswith("axis."):
        return _axis(parser, node, target, value, name[1])
    if isinstance(target, ast.Tuple):
        parser.error(target, "tuple assignment is only used with T.axis.remap",
                     "vi, vj = T.axis.remap(\"SS\", [i, j])")
    if not isinstance(target, ast.Name):
        parser.error(target, "only buffer elements (A[i] = value) and scalar names "
                             "(x = value) can be assigned", "A[i, j] = value")
    if name == ("T", "alloc_buffer"):
        return _alloc(parser, node, target, value)
    if name == ("T", "match_buffer"):
        return _match_buffer(parser, node, target, value)
    if name is not None and name[0] == "T" and name[1] in dt.DTYPES and not value.args \
            and not value.keywords:
        return _declaration(parser, node, target, name[1])
    return _let(parser, target, expr(parser, value))


@register("T", ast.AnnAssign)
def _ann_assign(parser, node):
    name = parser.dialect_of(node.annotation)
    if not isinstance(node.target, ast.Name) or node.value is None:
        parser.error(node, "an annotated assignment binds a scalar name to a value",
                     "x: T.float32 = value")
    if name is None or name[0] != "T":
        parser.error(node.annotation, "the annotation of a scalar is a T dtype", "T.float32")
    dtype = check_dtype(parser, node.annotation, name[1])
    value = expr(parser, node.value, dtype)
    if value.dtype != dtype:
        parser.error(node.value, f"{node.target.id} is declared {dtype} but the value is "
                                 f"{value.dtype}", f"T.cast(value, \"{dtype}\")")
    return _let(parser, node.target, value)


@register("T", ast.AugAssign)
def _aug_assign(parser, node):
    if not isinstance(node.target, ast.Subscript):
        parser.error(node, "augmented assignment only updates buffer elements; scalars are "
                           "immutable", "A[i] += value, or y = x + value")
    op = ARITH.get(type(node.op))
    if op is None:
        parser.error(node, "this augmented assignment operator is not supported", "+= -= *= /=")

    def value(buf):
        current = parser.visit(node.target, "Texpr")
        rhs = _stored(parser, node.value, buf)
        return binary(parser, node, op, current, rhs, node.target, node.value)
    return _store(parser, node, node.target, value)


def _store(parser, node, target, make_value):
    buf = parser.visit(target.value, "Texpr")
    if not isinstance(buf, Buffer):
        what = (f"{buf.name} is a scalar ({buf.dtype}), not a buffer" if isinstance(buf, Var)
                else "this is not a buffer")
        parser.error(target, f"cannot assign to an element: {what}",
                     "A[i, j] = value for a buffer A; x = value binds a scalar")
    indices = buffer_indices(parser, target, buf)
    value = make_value(buf)
    if value.dtype != buf.dtype:
        parser.error(node, f"storing {dt.a(value.dtype)} value into {buf.dtype} buffer {buf.name}",
                     f"{dt.a(buf.dtype)} value, e.g. T.cast(value, \"{buf.dtype}\")")
    return BufferStore(buf, value, indices)


def _stored(parser, node, buf):
    return to_expr(parser, node, parser.visit(node, "Texpr"), buf.dtype, f"a value of {buf.name}")


def _let(parser, target, value):
    st = _state(parser)
    found, old = parser.scopes.lookup(target.id)
    if found and isinstance(old, Buffer):
        parser.error(target, f"{target.id} is a buffer; write its elements with "
                             f"{target.id}[...] = value", f"{target.id}[i] = value")
    if found and isinstance(old, Var) and old not in st.lets:
        parser.error(target, f"{target.id} is a loop variable, block iterator, parameter or "
                             "shape variable and cannot be reassigned",
                     "a new name for the scalar")
    if found and isinstance(old, Var) and target.id not in parser.scopes.frames[-1]:
        # A let binds to the end of its body: the value would be lost where the body ends.
        parser.error(target, f"{target.id} is a scalar bound outside this loop, if or block; "
                             "a scalar is a value, not a variable, and one given here would "
                             "be lost where the body ends",
                     f"a buffer for a value that changes: {target.id}_acc = "
                     f"T.alloc_buffer((1,), \"{old.dtype}\") and {target.id}_acc[0] = ...")
    var = Var(target.id, value.dtype)
    st.lets.add(var)
    parser.scopes.define(target.id, var)
    return _Rest(lambda body: LetStmt(var, value, body))


def _alloc(parser, node, target, call):
    st = _state(parser)
    buf = make_buffer(parser, call, target.id, call.args, call.keywords, "T.alloc_buffer")
    found, _ = parser.scopes.lookup(target.id)
    if found and target.id in parser.scopes.frames[-1]:
        parser.error(target, f"{target.id} is already defined in this scope")
    parser.scopes.define(target.id, buf)
    frame = st.block()
    if frame is not None:
        frame.allocs.append(buf)
        return None
    return _Rest(lambda body: Allocate(buf, body))


def _match_buffer(parser, node, target, call):
    st = _state(parser)
    if st.depth or st.blocks:
        parser.error(node, "T.match_buffer is only valid at the top of a prim function body")
    if not call.args or not isinstance(call.args[0], ast.Name) \
            or call.args[0].id not in st.handles:
        parser.error(call, "the first argument of T.match_buffer is a T.handle parameter",
                     "A = T.match_buffer(h, shape, dtype) with a parameter h: T.handle")
    handle = call.args[0].id
    if st.handles[handle] is not None:
        parser.error(call.args[0], f"handle {handle!r} is matched twice")
    buf = make_buffer(parser, call, target.id, call.args[1:], call.keywords, "T.match_buffer")
    found, _ = parser.scopes.lookup(target.id)
    if found:
        parser.error(target, f"{target.id} is already defined")
    st.handles[handle] = buf
    parser.scopes.define(target.id, buf)


def _declaration(parser, node, target, dtype):
    st = _state(parser)
    if dtype != dt.INDEX:
        parser.error(node.value, f"T.{dtype}() declares a shape variable, and shape variables "
                                 "are int64", f"{target.id} = T.int64()")
    if st.depth or st.blocks:
        parser.error(node, "T.int64() declares a shape variable and is only valid at the top "
                           "of a prim function body", f"{target.id} = T.int64() before any loop")


# ---------------------------------------------------------------- block iterators
def _axis(parser, node, target, call, kind):
    st = _state(parser)
    frame = _in_block(parser, node, f"T.{kind}")
    if kind == "axis.remap":
        targets = target.elts if isinstance(target, ast.Tuple) else [target]
        specs = _remap(parser, st, call, targets)
    elif kind in ("axis.spatial", "axis.reduce"):
        if not isinstance(target, ast.Name):
            parser.error(target, f"T.{kind} declares one block iterator", f"vi = T.{kind}(n, i)")
        if call.keywords or len(call.args) != 2:
            parser.error(call, f"T.{kind} takes the iterator's extent and its binding",
                         f"{target.id} = T.{kind}(n, i)")
        extent = index(parser, call.args[0], "a block iterator extent")
        binding = index(parser, call.args[1], "a block iterator binding")
        specs = [(target, extent, binding, "S" if kind == "axis.spatial" else "R")]
    else:
        unknown_name(parser, call.func, kind)
    for name_node, extent, binding, letter in specs:
        if not isinstance(name_node, ast.Name):
            parser.error(name_node, "a block iterator must be a plain name", "vi")
        if any(iv.var.name == name_node.id for iv in frame.iter_vars):
            parser.error(name_node, f"block {frame.name!r} declares iterator {name_node.id!r} "
                                    "twice", "a distinct name for each block iterator")
        var = Var(name_node.id, dt.INDEX)
        frame.iter_vars.append(IterVar(var, extent, letter))
        frame.bindings.append(binding)
        frame.declared.append(call)
        parser.scopes.define(name_node.id, var)


def _remap(parser, st, call, targets):
    if call.keywords or len(call.args) != 2:
        parser.error(call, "T.axis.remap takes a kinds string and a list of loop variables",
                     "T.axis.remap(\"SSR\", [i, j, k])")
    kinds = parser.visit(call.args[0], "Texpr")
    if not isinstance(kinds, str):
        parser.error(call.args[0], "the first argument of T.axis.remap is a string of 'S' and "
                                   "'R' letters", "\"SSR\"")
    bad = sorted(set(kinds) - {"S", "R"})
    if bad:
        parser.error(call.args[0], f"T.axis.remap kinds {kinds!r} contains {bad[0]!r}; only 'S' "
                                   "(spatial) and 'R' (reduce) are allowed",
                     "one letter S or R per iterator, e.g. \"SSR\"")
    if len(kinds) != len(targets):
        parser.error(call.args[0], f"T.axis.remap kinds {kinds!r} has {len(kinds)} letter(s) "
                                   f"but {len(targets)} iterator(s) are declared",
                     "one letter S or R per iterator")
    loops = call.args[1]
    if not isinstance(loops, (ast.List, ast.Tuple)) or len(loops.elts) != len(targets):
        parser.error(loops, f"T.axis.remap needs a list of {len(targets)} loop variable(s)",
                     "[i, j, k]")
    specs = []
    for target, letter, loop in zip(targets, kinds, loops.elts):
        var = parser.visit(loop, "Texpr")
        if not isinstance(loop, ast.Name) or var not in st.loops:
            parser.error(loop, "T.axis.remap binds block iterators to loop variables, and this "
                               "is not one", "T.axis.spatial(extent, binding) for other "
                                             "bindings")
        start, extent = st.loops[var]
        if not (isinstance(start, IntImm) and start.value == 0):
            parser.error(loop, f"loop {loop.id} does not start at 0, so T.axis.remap cannot "
                               "take its domain from it",
                         f"T.axis.spatial(extent, {loop.id} - start)")
        specs.append((target, extent, var, letter))
    return specs


# ---------------------------------------------------------------- other statements
@register("T", ast.Expr)
def _expr_stmt(parser, node):
    call = node.value
    name = parser.dialect_of(call.func) if isinstance(call, ast.Call) else None
    if name is None or name[0] != "T":
        if isinstance(call, (ast.Call, ast.Yield, ast.YieldFrom, ast.Await)):
            expr(parser, call)  # reports the call of a non-T function, yield, await
        parser.error(node, "this expression statement has no effect",
                     "T.evaluate(expression) to evaluate it for its effect")
    handler = _STATEMENT_CALLS.get(name[1])
    if handler is None:
        if name[1] in EXPRESSIONS or name[1] in dt.DTYPES:
            parser.error(node, f"the value of T.{name[1]}(...) is not used",
                         "T.evaluate(...) to evaluate an expression for its effect")
        unknown_name(parser, call.func, name[1])
    return handler(parser, call)


def _evaluate(parser, call):
    if call.keywords or len(call.args) != 1:
        parser.error(call, "T.evaluate takes one expression", "T.evaluate(0)")
    return Evaluate(expr(parser, call.args[0]))


def _call_extern(parser, call):
    return Evaluate(expr(parser, call))


def _where(parser, call):
    frame = _in_block(parser, call, "T.where")
    if call.keywords or len(call.args) != 1:
        parser.error(call, "T.where takes one condition", "T.where(i * 4 + j < n)")
    if frame.predicate is not None:
        parser.error(call, f"block {frame.name!r} has two T.where conditions",
                     "one T.where(a and b)")
    cond = expr(parser, call.args[0], "bool")
    if cond.dtype != "bool":
        parser.error(call.args[0], f"T.where needs a bool condition, not {cond.dtype}")
    own = {iv.var for iv in frame.iter_vars}
    used = next((n for n in walk(cond) if isinstance(n, Var) and n in own), None)
    if used is not None:
        parser.error(call.args[0], f"T.where uses block iterator {used.name}; the condition "
                                   "is checked outside the block, so it can use loop variables "
                                   "only", "T.where(io * 8 + ii < n)")
    frame.predicate = cond


def _regions(attr):
    def record(parser, call):
        frame = _in_block(parser, call, f"T.{attr}")
        if call.keywords:
            parser.error(call, f"T.{attr} takes buffer regions only", f"T.{attr}(A[vi, 0:16])")
        if getattr(frame, attr) is not None:
            parser.error(call, f"block {frame.name!r} has two T.{attr}(...) statements",
                         f"one T.{attr}(...) listing every region")
        nodes = call.args
        if len(nodes) == 1 and isinstance(nodes[0], (ast.List, ast.Tuple)):
            nodes = nodes[0].elts
        setattr(frame, attr, tuple(_region(parser, n) for n in nodes))
        frame.declared_at[attr] = call
    return record


def _region(parser, node):
    if not isinstance(node, ast.Subscript):
        parser.error(node, "a region is a buffer indexed by points and slices",
                     "A[vi, 0:16]")
    buf = parser.visit(node.value, "Texpr")
    if not isinstance(buf, Buffer):
        parser.error(node.value, "only buffers have regions", "A[vi, 0:16]")
    nodes = index_nodes(node)
    check_rank(parser, node, buf, len(nodes))
    ranges = []
    for k, n in enumerate(nodes):
        if isinstance(n, ast.Slice):
            if n.step is not None:
                parser.error(n.step, "a region slice has no step", "start:stop")
            start = index(parser, n.lower, "a region start") if n.lower else IntImm(0)
            stop = index(parser, n.upper, "a region stop") if n.upper else buf.shape[k]
            ranges.append(Range(start, arith.simplify(stop - start)))
        else:
            ranges.append(Range(index(parser, n, f"index {k} of {buf.name}"), IntImm(1)))
    return BufferRegion(buf, tuple(ranges))


def _block_attr(parser, call):
    frame = _in_block(parser, call, "T.block_attr")
    frame.annotations = _attr_dict(parser, call, "block_attr", frame.annotations)


def _func_attr(parser, call):
    st = _state(parser)
    if st.depth or st.blocks:
        parser.error(call, "T.func_attr is only valid at the top of a prim function body")
    st.attrs = _attr_dict(parser, call, "func_attr", st.attrs)


def _attr_dict(parser, call, name, earlier):
    if call.keywords or len(call.args) != 1:
        parser.error(call, f"T.{name} takes one dict", f"T.{name}({{\"key\": value}})")
    return constant_dict(parser, call.args[0], earlier)


_STATEMENT_CALLS = {"evaluate": _evaluate, "call_extern": _call_extern, "where": _where,
                    "reads": _regions("reads"), "writes": _regions("writes"),
                    "block_attr": _block_attr, "func_attr": _func_attr}


@register("T", ast.If)
def _if(parser, node):
    cond = expr(parser, node.test, "bool")
    if cond.dtype != "bool":
        parser.error(node.test, f"an if condition must be bool, not {cond.dtype}",
                     "a comparison, e.g. if i < n:")
    then = parse_body(parser, node.body, deeper=True)
    other = parse_body(parser, node.orelse, deeper=True) if node.orelse else None
    return IfThenElse(cond, then, other)


@register("T", ast.Pass)
def _pass(parser, node):
    return None


@register("T", ast.Return)
def _return(parser, node):
    parser.error(node, "a prim function does not return a value; it writes its results into "
                       "output buffers (destination-passing style)", "C[i] = value")
