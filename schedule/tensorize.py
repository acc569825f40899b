"""tensorize: replace a computation by a call to a hand-written micro-kernel.

A tensor intrinsic is registered once::

    pyir.schedule.register_tensor_intrin("mk.update_7x32", desc, "mk.update_7x32.impl")

``desc`` is a prim function describing what the kernel computes: constant loops over one
block whose body is a single store (``C[vi, vj] = C[vi, vj] + A[vi, 0] * B[0, vj]``). Its
buffer shapes give the memory layout the kernel assumes (row-major); a shape entry that is
a variable (``A: T.Buffer((7, "lda"), ...)``) is a row stride the kernel receives as a
scalar parameter of that name. ``impl_name`` names a kernel declared with
``pyir.ffi.extern`` whose parameters are the description's buffers (their base element
addresses; the same names, shapes and dtypes, in the same order) followed by such scalars.
What the description's computation reaches in each buffer is what the kernel is taken to
reach (`pyir.ffi.extern.describe_reach`): the build checks the calls tensorize makes for it,
as any call of the kernel (an entry condition where the shapes are symbolic).

``sch.tensorize(loop, name)`` (or a block: its innermost loops as many as the description
has) checks that the loops from ``loop`` down to the one block below match the
description's loops (extents), that the block's store has the same expression with the
buffers mapped one to one, and that every access moves in memory with each loop exactly as
the description's does (the rows of the buffer the description writes a stride apart that
keeps them from overlapping). It then makes the loops one block (`blockize`) whose body
calls the kernel once. When the block has a predicate (a split tail), the call runs for tiles where
the predicate holds everywhere and the original loops run for the partial tile, as they were
scheduled: unroll and vectorize them before tensorizing, and partial tiles run as vector code
(left serial, the 4-row partial tile of the 6x16-tile matmul at n = 1024 took ~1.8 ms, 6 % of
the whole kernel's time, and as the last tile of a parallel loop it held up the launch).
A mismatch raises `ScheduleError` saying what differs.
"""

import dataclasses

from pyir.arith import vars_of
from pyir.arith.region import detect_linear
from pyir.ffi.extern import describe_reach
from pyir.ir import (
    Binary,
    BlockRealize,
    BufferLoad,
    BufferStore,
    Call,
    Evaluate,
    For,
    IfThenElse,
    IntImm,
    PrimFunc,
    StringImm,
    Var,
    conjuncts,
    dtype as dt,
    le,
    substitute,
    walk,
)
from pyir.transform.common import shape_vars
from pyir.transform.dependence import analyzer_for, realizes_under

from .blockize import blockize
from .errors import ScheduleError, script_text
from .tree import find_block, find_loop, loops_of, replace, with_body


@dataclasses.dataclass(frozen=True)
class Description:
    """What matching asks of an intrinsic's description, worked out when it is registered
    (each tensorize asked it again: a fifth of the bench's tensorize step). ``loops`` as
    `_desc_parts` finds them; ``body``, the block's store in terms of the loops' variables.
    Per access of ``body``, in the order `_pairs` meets them: ``steps``, the coefficient of
    its flat offset per loop (None where not linear); ``moved``, its offset from the first
    access of its buffer with the loops at 0; ``tops``, the highest value of each index (of
    the stored buffer's accesses, else None). ``off_first``: the buffers whose first access
    is not at their first element."""
    loops: tuple
    body: BufferStore
    steps: tuple
    moved: tuple
    tops: tuple
    off_first: tuple


@dataclasses.dataclass(frozen=True)
class TensorIntrin:
    name: str
    desc: PrimFunc
    impl_name: str
    description: Description = dataclasses.field(compare=False, repr=False)


_REGISTRY = {}


def register_tensor_intrin(name, desc, impl_name, override=False):
    """Register the tensor intrinsic ``name``: ``desc`` (a prim function) computed by the
    kernel ``impl_name`` (declared with ``pyir.ffi.extern``)."""
    if not isinstance(name, str) or not name:
        raise ScheduleError("register_tensor_intrin", repr(name),
                            "the name of a tensor intrinsic is a non-empty string")
    if not isinstance(desc, PrimFunc):
        raise ScheduleError("register_tensor_intrin", name,
                            f"the description must be a prim function, not {type(desc).__name__}")
    if not isinstance(impl_name, str) or not impl_name:
        raise ScheduleError("register_tensor_intrin", name, "the implementation is named by "
                            "the name of a kernel declared with pyir.ffi.extern (a non-empty "
                            f"string), not {type(impl_name).__name__} {impl_name!r}")
    if name in _REGISTRY and not override:
        raise ScheduleError("register_tensor_intrin", name,
                            "a tensor intrinsic of this name is registered; pass override=True")
    description, reach = _describe(desc, name)  # checks the description's shape now
    describe_reach(name, impl_name, reach)
    _REGISTRY[name] = TensorIntrin(name, desc, impl_name, description)
    return _REGISTRY[name]


def get_tensor_intrin(name):
    if isinstance(name, TensorIntrin):
        raise ScheduleError("tensorize", f"intrinsic \"{name.name}\"", "a tensor intrinsic "
                            f"is named by its name, the string {name.name!r}, not by the "
                            "object register_tensor_intrin returned")
    if not isinstance(name, str) or name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        subject = f"intrinsic \"{name}\"" if isinstance(name, str) else f"intrinsic {name!r}"
        raise ScheduleError("tensorize", subject,
                            f"no tensor intrinsic of this name is registered (registered: {known})")
    return _REGISTRY[name]


def list_tensor_intrins():
    return sorted(_REGISTRY)


# ---------------------------------------------------------------- description
def _desc_parts(desc, name):
    """(loops, realize) of the description: perfectly nested constant loops, one block
    with a single store and no init."""
    rels = realizes_under(desc.body)
    if len(rels) != 1:
        raise ScheduleError("register_tensor_intrin", name,
                            "the description must hold exactly one block")
    path = _full_path(desc.body, rels[0][-1].block.name)
    realize = path[-1]
    loops = loops_of(path)
    if not loops:
        # a root block wraps the description: take the loops inside it
        loops = [n for n in path if isinstance(n, For)]
    if not loops:
        raise ScheduleError("register_tensor_intrin", name,
                            "the description has no loops: a kernel replaces loops")
    for lp in loops:
        if not (isinstance(lp.extent, IntImm) and isinstance(lp.start, IntImm)):
            raise ScheduleError("register_tensor_intrin", name,
                                f"loop {lp.loop_var.name} of the description needs constant bounds")
    if not isinstance(realize.block.body, BufferStore) or realize.block.init is not None:
        raise ScheduleError("register_tensor_intrin", name,
                            "the description's block must be a single store without init")
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise ScheduleError("register_tensor_intrin", name,
                            "the description's block has a T.where: a kernel computes every "
                            "element of its loops (make the loops as long as the kernel's work)")
    return loops, realize


def _describe(desc, name):
    """The `Description` of the prim function ``desc`` (checked by `_desc_parts`), and
    what its computation reaches (`_described_tops`), under one analyzer of its loops."""
    loops, realize = _desc_parts(desc, name)
    block = realize.block
    body = substitute(block.body, {iv.var: v for iv, v in zip(block.iter_vars,
                                                               realize.iter_values)})
    accesses = []
    _pairs(body, body, accesses, "")
    accesses = tuple(a for a, _ in accesses)
    ana = analyzer_for(loops)
    reach = _described_tops(body, ana, name)
    zero = {lp.loop_var: IntImm(0) for lp in loops}
    stored = body.buffer
    steps, moved, tops, firsts = [], [], [], {}
    for access in accesses:
        off = ana.simplify(_flat_offset(access, access.buffer.shape))
        lins = [detect_linear(off, lp.loop_var, ana) for lp in loops]
        steps.append(tuple(None if lin is None else lin[0] for lin in lins))
        here = ana.simplify(substitute(off, zero))
        first = firsts.setdefault(access.buffer, here)
        moved.append(ana.simplify(here - first))
        tops.append(tuple(ana.const_int_bound(i).max for i in access.indices)
                    if access.buffer is stored else None)
    off_first = tuple(b for b, first in firsts.items() if not ana.can_prove_equal(first, 0))
    return (Description(tuple(loops), body, tuple(steps), tuple(moved), tuple(tops), off_first),
            reach)


def _described_tops(body, ana, name):
    """The highest index the description's computation ``body`` (its store in terms of its
    loops, which ``ana`` knows) reaches in each dimension of each of its buffers ({name:
    [int, ...]}), what tensorize's calls of the kernel reach
    (`pyir.ffi.extern.describe_reach`); refuse an index that may fall outside the buffer."""
    tops = {}
    for n in walk(body):
        if not isinstance(n, (BufferLoad, BufferStore)):
            continue
        top = tops.setdefault(n.buffer.name, [0] * len(n.indices))
        for d, (index, extent) in enumerate(zip(n.indices, n.buffer.shape)):
            bound = ana.const_int_bound(index)
            if bound.min is None or bound.max is None or bound.min < 0 or (
                    isinstance(extent, IntImm) and bound.max >= extent.value):
                raise ScheduleError("register_tensor_intrin", name,
                                    f"the description's index {script_text(index)} of "
                                    f"{n.buffer.name} may fall outside the buffer")
            top[d] = max(top[d], bound.max)
    return tops


def _full_path(body, block_name):
    return find_block(body, block_name)


# ---------------------------------------------------------------- matching
def _flat_offset(access, shape):
    """Row-major element offset of ``access`` in a buffer of ``shape``."""
    off = IntImm(0)
    stride = IntImm(1)
    for idx, ext in reversed(list(zip(access.indices, shape))):
        off = off + idx * stride
        stride = stride * ext
    return off


def _pairs(a, b, out, what):
    """Walk expressions ``a`` (description) and ``b`` (schedule) in step; collect access
    pairs; return the first difference as text (or None)."""
    if isinstance(a, (BufferLoad, BufferStore)):
        if type(a) is not type(b):
            return (f"{what}: the description has an access of {a.buffer.name}, the block has "
                    f"{_show(b)}")
        if a.buffer.dtype != b.buffer.dtype:
            return (f"{what}: {a.buffer.name} is {a.buffer.dtype} in the description but "
                    f"{b.buffer.name} is {b.buffer.dtype}")
        out.append((a, b))
        if isinstance(a, BufferStore):
            return _pairs(a.value, b.value, out, what)
        return None
    if type(a) is not type(b):
        return f"{what}: the description has {_show(a)} where the block has {_show(b)}"
    if isinstance(a, Binary):
        if a.op != b.op:
            return f"{what}: the description has operator {a.op} where the block has {b.op}"
        return _pairs(a.a, b.a, out, what) or _pairs(a.b, b.b, out, what)
    if isinstance(a, (IntImm,)) or type(a).__name__ == "FloatImm":
        if a.value != b.value or a.dtype != b.dtype:
            return (f"{what}: the description has the constant {script_text(a)} where the "
                    f"block has {script_text(b)}")
        return None
    if isinstance(a, Call):
        if a.op != b.op or len(a.args) != len(b.args):
            return f"{what}: the description calls {a.op} where the block calls {b.op}"
        for x, y in zip(a.args, b.args):
            d = _pairs(x, y, out, what)
            if d:
                return d
        return None
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if dataclasses.is_dataclass(x) and not isinstance(x, Var):
                d = _pairs(x, y, out, what)
                if d:
                    return d
            elif isinstance(x, str) and x != y:
                return f"{what}: {f.name} {x} in the description, {y} in the block"
    return None


def _show(node):
    return type(node).__name__ + (f" {node.buffer.name}" if hasattr(node, "buffer") else "")


def _structure(func, loop_var, intrin, prim):
    """The loops from ``loop_var`` down and their one block, checked against ``intrin``'s
    loops and computation: (loop, loops, inner, d_loops, pairs of (description, block)
    accesses with the block's in terms of its loops, subject for errors)."""
    lpath = find_loop(func.body, loop_var)
    loop = lpath[-1]
    subject = f"loop {loop_var.name}"
    rels = realizes_under(loop)
    if len(rels) != 1:
        raise ScheduleError(prim, subject, "the loop must hold exactly one block", loop)
    name = rels[0][-1].block.name
    path = find_block(func.body, name)
    realize = path[-1]
    block = realize.block
    subject = f"loop {loop_var.name} (block \"{name}\") against \"{intrin.name}\""
    loops = loops_of(path)
    at = next(k for k, lp in enumerate(loops) if lp.loop_var is loop_var)
    inner = loops[at:]
    d_loops = intrin.description.loops
    if len(inner) != len(d_loops):
        raise ScheduleError(prim, subject, f"the description has {len(d_loops)} loop(s), "
                            f"the schedule has {len(inner)} from {loop_var.name} down", loop)
    for lp, dl in zip(inner, d_loops):
        if not isinstance(lp.extent, IntImm) or lp.extent.value != dl.extent.value:
            raise ScheduleError(prim, subject, f"loop {lp.loop_var.name} has extent "
                                f"{script_text(lp.extent)} but the description's loop "
                                f"{dl.loop_var.name} has {dl.extent.value}", loop)
        if not (isinstance(lp.start, IntImm) and lp.start.value == 0):
            raise ScheduleError(prim, subject, f"loop {lp.loop_var.name} must start at 0", loop)
    if block.init is not None:
        raise ScheduleError(prim, subject, "the block has an init (the description has none); "
                            "use decompose_reduction first", loop)
    if not isinstance(block.body, BufferStore):
        raise ScheduleError(prim, subject, "the block's body is not a single store", loop)
    # Both bodies in terms of their loop variables.
    body = substitute(block.body, {iv.var: v for iv, v in zip(block.iter_vars,
                                                               realize.iter_values)})
    pairs = []
    diff = _pairs(intrin.description.body, body, pairs, "the computation differs")
    if diff:
        raise ScheduleError(prim, subject, diff, loop)
    return loop, loops, inner, d_loops, pairs, subject


def _bases(pairs, inner, ana):
    """Description buffer -> the block's access where the kernel's pointer for it points:
    the buffer's first access with the inner loops at 0."""
    zero = {lp.loop_var: IntImm(0) for lp in inner}
    bases = {}
    for da, sa in pairs:
        if da.buffer not in bases:
            bases[da.buffer] = BufferLoad(sa.buffer, tuple(ana.simplify(substitute(i, zero))
                                                           for i in sa.indices))
    return bases


def match(func, loop_var, intrin, prim="tensorize"):
    """Check the loops from ``loop_var`` down against ``intrin``; return (the description's
    strides: stride Var -> the block's, `_bases`) or raise ScheduleError saying what
    differs."""
    loop, loops, inner, d_loops, pairs, subject = _structure(func, loop_var, intrin, prim)
    # One to one buffer mapping.
    bmap = {}
    for da, sa in pairs:
        prev = bmap.setdefault(da.buffer, sa.buffer)
        if prev is not sa.buffer:
            raise ScheduleError(prim, subject, f"description buffer {da.buffer.name} maps to "
                                f"both {prev.name} and {sa.buffer.name}", loop)
    if len(set(map(id, bmap.values()))) != len(bmap):
        raise ScheduleError(prim, subject, "two description buffers map to one buffer", loop)
    # Memory movement per loop: equal coefficients of the flat offsets.
    ana = analyzer_for(loops, shape_vars(func))
    described = intrin.description
    stride_vals = {}
    # description buffer -> the block's offset of its first access with the inner loops at
    # their start
    firsts = {}
    inner_vars = {x.loop_var for x in inner}
    zero = {lp.loop_var: IntImm(0) for lp in inner}
    # (buffer, indices) -> the linear forms of its flat offset in the inner loops, and the
    # offset with them at 0: worked out once for an element read and written (C += ...).
    offsets = {}
    for (da, sa), d_steps, d_moved in zip(pairs, described.steps, described.moved):
        key = (sa.buffer, sa.indices)
        if key not in offsets:
            s_off = ana.simplify(_flat_offset(sa, sa.buffer.shape))
            offsets[key] = ([detect_linear(s_off, lp.loop_var, ana) for lp in inner],
                            ana.simplify(substitute(s_off, zero)))
        s_lins, here = offsets[key]
        for lp, dl, d_c, s_lin in zip(inner, d_loops, d_steps, s_lins):
            if s_lin is None or inner_vars & vars_of(s_lin[0]):
                raise ScheduleError(prim, subject, f"{sa.buffer.name} is not accessed "
                                    f"linearly in loop {lp.loop_var.name}", loop)
            if d_c is None:
                raise ScheduleError(prim, subject, f"the description's {da.buffer.name} is "
                                    f"not accessed linearly in loop {dl.loop_var.name}", loop)
            s_c = s_lin[0]
            if isinstance(d_c, Var):
                if ana.can_prove(le(s_c, IntImm(0))) and not ana.can_prove_equal(s_c, 0):
                    raise ScheduleError(prim, subject, _negative_stride(da, sa, lp, d_c, s_c),
                                        loop)
                prev = stride_vals.setdefault(d_c, s_c)
                if not ana.can_prove_equal(prev, s_c):
                    raise ScheduleError(prim, subject, f"stride {d_c.name} would be both "
                                        f"{script_text(prev)} and {script_text(s_c)}", loop)
            elif not ana.can_prove_equal(ana.simplify(d_c - s_c), 0):
                raise ScheduleError(prim, subject, f"{sa.buffer.name} moves by {script_text(s_c)} "
                                    f"elements per step of loop {lp.loop_var.name} but the "
                                    f"description's {da.buffer.name} moves by {script_text(d_c)} per "
                                    f"step of {dl.loop_var.name}", loop)
        first = firsts.setdefault(da.buffer, here)
        # Every access of a description buffer lies where the description has it relative
        # to the first (C read and written at one place; not one 16 rows away).
        moved = substitute(d_moved, stride_vals)
        if not ana.can_prove_equal(ana.simplify(here - first), moved):
            raise ScheduleError(prim, subject, f"the block accesses {sa.buffer.name} at "
                                f"{script_text(ana.simplify(here - first))} elements from its "
                                f"first access where the description's {da.buffer.name} is at "
                                f"{script_text(moved)}", loop)
    if described.off_first:
        raise ScheduleError(prim, subject, f"the description's first access of "
                            f"{described.off_first[0].name} is not its first element", loop)
    _rows_apart(pairs, described.tops, stride_vals, ana, prim, subject, loop)
    return stride_vals, _bases(pairs, inner, ana)


def _negative_stride(da, sa, lp, d_c, s_c):
    """Why the block's access ``sa``, moving by ``s_c`` elements per step of its loop ``lp``
    (at most 0 for every shape, and not always 0) where the description's ``da`` moves by
    its row stride ``d_c``, cannot be the kernel's: ``d_c`` is an extent of the kernel's
    buffer, at least 0 (rows that run backwards, ``A[n - 1 - vi, vj]``, would need one
    below 0)."""
    dim = next(d for d, i in enumerate(sa.indices) if lp.loop_var in vars_of(i))
    return (f"{sa.buffer.name} moves by {script_text(s_c)} elements per step of loop "
            f"{lp.loop_var.name}: a negative stride of {sa.buffer.name} in dimension {dim}, "
            f"which the intrinsic's buffer {da.buffer.name} cannot take as its row stride "
            f"{d_c.name} (an extent of the kernel's buffer, at least 0)")


def _rows_apart(pairs, tops, stride_vals, ana, prim, subject, loop):
    """Refuse a row stride of the buffer the description writes that would make its rows
    overlap (the block reduces where the description's elements are distinct): each index
    of a dimension whose extent is a stride must stay below the stride's value. ``tops``:
    the description's `Description.tops`."""
    stored = pairs[0][0].buffer
    for (da, sa), access_tops in zip(pairs, tops):
        if da.buffer is not stored:
            continue
        for top, ext in zip(access_tops, stored.shape):
            value = stride_vals.get(ext)
            if value is None:
                continue
            reach = None if top is None else top + 1
            if reach is not None and ana.can_prove(Binary("lt", value, IntImm(reach))):
                raise ScheduleError(prim, subject, f"the description writes {reach} elements "
                                    f"of each row of {stored.name}, {ext.name} apart, but "
                                    f"{sa.buffer.name}'s are {script_text(value)} apart: its rows "
                                    "would overlap", loop)


def _call(intrin, strides, bases):
    """The call of the kernel on the tile matched with ``strides`` and ``bases``."""
    from pyir.ffi import get_global_func
    impl = get_global_func(intrin.impl_name, allow_missing=True)
    if impl is None or not hasattr(impl, "prim"):
        raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                            f"its implementation {intrin.impl_name!r} is not a kernel declared "
                            "with pyir.ffi.extern")
    template = impl.prim.body
    if not (isinstance(template, Evaluate) and isinstance(template.value, Call)):
        raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                            f"{intrin.impl_name!r} is not a kernel declared with pyir.ffi.extern")
    impl_bufs = [p for p in impl.prim.params if not isinstance(p, Var)]
    desc_bufs = [p for p in intrin.desc.params if not isinstance(p, Var)]
    if len(impl_bufs) != len(desc_bufs):
        raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                            f"the kernel takes {len(impl_bufs)} buffer(s), the description "
                            f"{len(desc_bufs)}")
    to_desc = dict(zip(impl_bufs, desc_bufs))
    stored = intrin.description.body.buffer
    for kb, db in to_desc.items():
        if kb.name != db.name:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the kernel's buffer {kb.name} stands where the description "
                                f"has {db.name}: buffers are matched in order, name them alike")
        if kb.dtype != db.dtype:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the kernel's buffer {kb.name} is {kb.dtype}, the "
                                f"description's {db.name} is {db.dtype}")
        if not _same_shape(kb.shape, db.shape):
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the kernel's buffer {kb.name} has shape {_shape(kb.shape)}, "
                                f"the description's {db.name} {_shape(db.shape)}: the kernel "
                                "would touch other memory than the description says")
        stride = next((d for d in kb.shape if isinstance(d, Var)
                       and d not in template.value.args), None)
        if stride is not None:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the kernel's buffer {kb.name} has rows {stride.name} apart, "
                                f"but the kernel does not take {stride.name}: declare "
                                f"{stride.name}: T.int64 as a parameter of "
                                f"{intrin.impl_name!r}")
        if db not in bases:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the description's buffer {db.name} is not accessed by its "
                                "computation")
        if db is stored and kb.name not in impl.writes:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"the description writes {db.name}, but "
                                f"{_not_written(impl, kb.name)}: the calling function would "
                                f"take a read-only array for it")
    by_name = {s.name: v for s, v in strides.items()}
    args = []
    for a in template.value.args[1:]:
        buf = a.buffer if isinstance(a, BufferLoad) else a
        if buf in to_desc:
            args.append(bases[to_desc[buf]])
        elif isinstance(a, Var) and a.name in by_name:
            args.append(by_name[a.name])
        else:
            raise ScheduleError("tensorize", f"intrinsic \"{intrin.name}\"",
                                f"kernel argument {script_text(a)} is neither a buffer nor a stride "
                                "of the description")
    dtype = template.value.dtype
    return Call(dtype, "call_extern", (StringImm(intrin.impl_name),) + tuple(args))


def _not_written(impl, param):
    """Why kernel ``impl`` is known not to write its buffer parameter ``param``."""
    if impl.writes_declared:
        return (f"the declaration of {impl.name!r} does not name {param} in writes= (it names "
                f"{', '.join(sorted(impl.writes)) or 'none'})")
    return f"LLVM proves that @{impl.symbol} only reads {param}"


def _same_shape(a, b):
    """Whether two declared shapes are the same: equal constants, and a stride variable where
    the other has one of the same name (each names the kernel's scalar parameter)."""
    return len(a) == len(b) and all(
        x.value == y.value if isinstance(x, IntImm) and isinstance(y, IntImm)
        else isinstance(x, Var) and isinstance(y, Var) and x.name == y.name
        for x, y in zip(a, b))


def _shape(shape):
    return "(" + ", ".join(str(d.value) if isinstance(d, IntImm) else script_text(d)
                           for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _full_tile(pred, inner, ana):
    """A condition free of the inner loops under which ``pred`` holds for all of them, or
    None when none can be derived (each conjunct ``a < b`` with ``a`` affine in them, with
    constant coefficients: ``a`` is largest at a corner of the tile)."""
    conds = []
    inner_vars = {lp.loop_var: lp.extent.value for lp in inner}
    for c in conjuncts(pred):
        if not (isinstance(c, Binary) and c.op in ("lt", "le")):
            return None
        if vars_of(c.b) & set(inner_vars):
            return None
        if not dt.is_integer(c.a.dtype):
            return None
        worst = {}
        for v, ext in inner_vars.items():
            lin = detect_linear(c.a, v, ana)
            if lin is None or not isinstance(lin[0], IntImm):
                return None
            worst[v] = IntImm(ext - 1) if lin[0].value > 0 else IntImm(0)
        conds.append(Binary(c.op, ana.simplify(substitute(c.a, worst)), c.b))
    out = conds[0]
    for c in conds[1:]:
        out = Binary("and", out, c)
    return out


def tensorize(func, loop_var, intrin_name):
    """The pure step behind `Schedule.tensorize` (returns the new function and the outer
    block's name)."""
    intrin = get_tensor_intrin(intrin_name)
    strides, bases = match(func, loop_var, intrin)
    _call(intrin, strides, bases)  # a mismatch fails before anything changes
    new_func, names = blockize(func, loop_var)
    outer_path = find_block(new_func.body, names[0])
    outer = outer_path[-1]
    ob = outer.block
    inner_body = ob.body
    # Inside the new outer block, the kernel's pointers are in terms of its iterators (the
    # strides are the buffers' row strides: blockize changed no loop).
    in_rel = realizes_under(inner_body)[0][-1]
    _, loops, inner, _, pairs, _ = _structure(new_func, loop_var, intrin, "tensorize")
    ana = analyzer_for(loops)
    call = Evaluate(_call(intrin, strides, _bases(pairs, inner, ana)))
    pred = in_rel.predicate
    if isinstance(pred, IntImm) and pred.value == 1:
        body = call
    else:
        cond = _full_tile(pred, inner, ana)
        if cond is None:
            raise ScheduleError("tensorize", f"loop {loop_var.name}", "the block's predicate "
                                f"{script_text(pred)} does not say which tiles are whole")
        body = IfThenElse(cond, call, inner_body)
    new_block = dataclasses.replace(ob, body=body)
    new_outer = BlockRealize(outer.iter_values, outer.predicate, new_block)
    return with_body(new_func, replace(outer_path, new_outer)), names
