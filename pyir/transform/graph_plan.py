"""Lower a legalized graph function to a `GraphPlan`: the straight-line program its native
code runs, with a memory plan.

Every tensor or scalar a graph function handles is a *leaf* with one 8-byte slot in the
call's frame (a data pointer, or a scalar stored like an ABI slot); tuples are nested
structures of leaves and cost nothing at run time. Shape variables have frame slots too.
Steps are: ``prim`` (call a compiled prim function with its slot array; shape checks the
arguments need become run-time conditions, as do a scalar argument computed past its dtype
and, at every step, a divisor that is 0), ``callback`` (Python: ``call_dps_packed`` to a
Python function, ``call_packed``, ``match_cast``, returning outputs whose shapes are known
only late) and ``alloc`` (memory whose size depends on a variable defined mid-way). A call
writes its outputs only: one whose prim function or kernel is known to write an input (an
array the caller passed, maybe read-only, or a value used again) is refused.

Memory plan: outputs of native calls that are returned, and whose shapes follow from the
inputs, are allocated by the caller and written in place. The other intermediates share
`GraphPlan.storages`: walking the steps in order, a leaf takes a storage released by a
leaf whose last use has passed (its size, a symbolic byte count, grows to the max of
both), so a chain of elementwise calls needs two.
"""

from dataclasses import dataclass, field

import numpy as np

from ..arith import Analyzer, IntBound, simplify, vars_of
from ..codegen.abi import GraphLowerError, expr_from_json, expr_to_json, match_params, with_dims
from ..errors import Error
from ..ffi.extern import ExternKernel
from ..ffi.registry import get_global_func
from ..ir import dtype as dt
from ..ir import expr as E
from ..ir.graph import (
    CallDPSPacked,
    CallPacked,
    CallTIR,
    GraphVar,
    MatchCast,
    ObjectStructInfo,
    PrimStructInfo,
    PrimValue,
    ShapeExpr,
    ShapeStructInfo,
    TensorStructInfo,
    Tuple,
    TupleGetItem,
    TupleStructInfo,
    symbolic_vars,
)
from ..ir.node import walk
from ..ir.ops import show, struct_info_of
from ..runtime.exprtext import divisions, expr_text
from .common import written_params


@dataclass
class Leaf:
    """``kind``: input, output, storage, dynamic, held (a Python object's data), alias."""

    id: int
    sinfo: object
    name: str
    kind: str = "storage"
    storage: int = -1
    alias_of: int = -1


@dataclass
class Step:
    kind: str
    binding: str
    func: str = None
    args: tuple = ()
    outs: tuple = ()
    shape_args: tuple = ()
    checks: tuple = ()
    site: int = -1
    info: dict = field(default_factory=dict)


@dataclass
class GraphPlan:
    name: str
    params: list
    leaves: list
    steps: list
    ret: object
    input_vars: list
    vars: list
    storages: list = field(default_factory=list)
    conditions: list = field(default_factory=list)
    slot: dict = field(default_factory=dict)
    var_slot: dict = field(default_factory=dict)
    num_slots: int = 0
    param_names: list = field(default_factory=list)

    def intermediates(self):
        """Number of intermediate buffers: planned storages plus dynamic allocations."""
        return len(self.storages) + sum(1 for l in self.leaves if l.kind == "dynamic")

    def to_json(self):
        """The plan as JSON data (what a loaded library needs to run the compiled code):
        variables by their index in ``vars``, leaves by id."""
        names = {v: k for k, v in enumerate(self.vars)}
        return {
            "name": self.name, "vars": [[v.name, v.dtype] for v in self.vars],
            "input_vars": [names[v] for v in self.input_vars],
            "params": [_value_to_json(p, names) for p in self.params],
            "leaves": [[leaf.id, _sinfo_to_json(leaf.sinfo, names), leaf.name, leaf.kind,
                        leaf.storage, leaf.alias_of] for leaf in self.leaves],
            "steps": [_step_to_json(s, names) for s in self.steps],
            "ret": _value_to_json(self.ret, names),
            "storages": [expr_to_json(e, names) for e in self.storages],
            "conditions": [[expr_to_json(c, names), message] for c, message in self.conditions],
            "slot": sorted([leaf, k] for leaf, k in self.slot.items()),
            "var_slot": sorted([names[v], k] for v, k in self.var_slot.items()),
            "num_slots": self.num_slots, "param_names": self.param_names,
        }

    @staticmethod
    def from_json(data):
        vs = [E.Var(n, dtype) for n, dtype in data["vars"]]
        leaves = [Leaf(i, _sinfo_from_json(si, vs), n, kind, storage, alias)
                  for i, si, n, kind, storage, alias in data["leaves"]]
        return GraphPlan(
            data["name"], [_value_from_json(p, vs) for p in data["params"]], leaves,
            [_step_from_json(s, vs) for s in data["steps"]], _value_from_json(data["ret"], vs),
            [vs[k] for k in data["input_vars"]], vs,
            [expr_from_json(e, vs) for e in data["storages"]],
            [(expr_from_json(c, vs), message) for c, message in data["conditions"]],
            {leaf: k for leaf, k in data["slot"]}, {vs[v]: k for v, k in data["var_slot"]},
            data["num_slots"], data["param_names"])

    @property
    def callback_slot(self):
        return self.num_slots - 3

    @property
    def status_slot(self):
        return self.num_slots - 2

    @property
    def step_slot(self):
        return self.num_slots - 1


# ---------------------------------------------------------------- JSON form
def _value_to_json(v, names):
    """A leaf id, a nested tuple, or an expression (an argument passed by value)."""
    if isinstance(v, tuple):
        return {"tuple": [_value_to_json(x, names) for x in v]}
    if isinstance(v, int):
        return v
    return {"expr": expr_to_json(v, names)}


def _value_from_json(d, vs):
    if isinstance(d, int):
        return d
    if "tuple" in d:
        return tuple(_value_from_json(x, vs) for x in d["tuple"])
    return expr_from_json(d["expr"], vs)


def _sinfo_to_json(s, names):
    if isinstance(s, TensorStructInfo):
        shape = None if s.shape is None else [expr_to_json(d, names) for d in s.shape]
        return {"tensor": s.dtype, "shape": shape, "ndim": s.ndim}
    if isinstance(s, PrimStructInfo):
        return {"prim": s.dtype}
    if isinstance(s, TupleStructInfo):
        return {"tuple": [_sinfo_to_json(f, names) for f in s.fields]}
    if isinstance(s, ShapeStructInfo):
        values = None if s.values is None else [expr_to_json(d, names) for d in s.values]
        return {"shape": values, "ndim": s.ndim}
    if isinstance(s, ObjectStructInfo):
        return {"object": None}
    raise Error(f"cannot describe {show(s)} in library metadata")


def _sinfo_from_json(d, vs):
    def exprs(xs):
        return None if xs is None else tuple(expr_from_json(x, vs) for x in xs)

    if "tensor" in d:
        return TensorStructInfo(exprs(d["shape"]), d["tensor"], d["ndim"])
    if "prim" in d:
        return PrimStructInfo(d["prim"])
    if "tuple" in d:
        return TupleStructInfo(tuple(_sinfo_from_json(f, vs) for f in d["tuple"]))
    if "shape" in d:
        return ShapeStructInfo(exprs(d["shape"]), d["ndim"])
    return ObjectStructInfo()


def _step_to_json(s, names):
    info = {k: v for k, v in s.info.items() if k in ("kind", "func")}
    if "sinfo" in s.info:
        info["sinfo"] = _sinfo_to_json(s.info["sinfo"], names)
    if "defines" in s.info:
        info["defines"] = [names[v] for v in s.info["defines"]]
    return {"kind": s.kind, "binding": s.binding, "func": s.func,
            "args": _value_to_json(s.args, names), "outs": _value_to_json(s.outs, names),
            "shape_args": [expr_to_json(e, names) for e in s.shape_args],
            "checks": [[expr_to_json(c, names), m] for c, m in s.checks],
            "site": s.site, "info": info}


def _step_from_json(d, vs):
    info = dict(d["info"])
    if "sinfo" in info:
        info["sinfo"] = _sinfo_from_json(info["sinfo"], vs)
    if "defines" in info:
        info["defines"] = tuple(vs[k] for k in info["defines"])
    return Step(d["kind"], d["binding"], d["func"], _value_from_json(d["args"], vs),
                _value_from_json(d["outs"], vs),
                tuple(expr_from_json(e, vs) for e in d["shape_args"]),
                tuple((expr_from_json(c, vs), m) for c, m in d["checks"]), d["site"], info)


def lower_graph(mod, name, infos):
    """The `GraphPlan` of graph function ``mod[name]`` (legalized); ``infos`` maps prim
    function names to their `FuncInfo`."""
    return _Lowerer(mod, mod[name], infos).run()


def same(a, b):
    """True if int64 expressions ``a`` and ``b`` are provably equal."""
    d = simplify(E.convert(a) - E.convert(b))
    return isinstance(d, E.IntImm) and d.value == 0


def leaves_of(structure):
    """The leaf ids in a nested structure, in order."""
    if isinstance(structure, tuple):
        return [x for s in structure for x in leaves_of(s)]
    return [structure]


class _Lowerer:
    def __init__(self, mod, func, infos):
        self.mod, self.func, self.infos = mod, func, infos
        self.leaves, self.steps, self.env, self.sites = [], [], {}, 0
        self.defined = []

    def error(self, binding, msg):
        return GraphLowerError(self.func.name, binding, msg)

    def give_shape(self, leaf):
        """An input tensor or shape known only by rank gets a new variable per dimension
        (``x.shape[0]``, ``s[0]``)."""
        sinfo = leaf.sinfo
        if isinstance(sinfo, ShapeStructInfo) and sinfo.values is None and sinfo.ndim >= 0:
            leaf.sinfo = ShapeStructInfo(tuple(E.Var(f"{leaf.name}[{d}]", "int64")
                                               for d in range(sinfo.ndim)))
            self.defined += leaf.sinfo.values
            return
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is not None:
            return
        if sinfo.ndim < 0:
            raise self.error(leaf.name, f"parameter {leaf.name} is {show(sinfo)}; a compiled "
                                        "graph function needs the rank of every input tensor")
        leaf.sinfo = with_dims(sinfo, leaf.name)
        self.defined += leaf.sinfo.shape

    def root(self, leaf_id):
        leaf = self.leaves[leaf_id]
        return self.leaves[leaf.alias_of] if leaf.alias_of >= 0 else leaf

    def leaf(self, sinfo, name, kind="storage", alias_of=-1):
        self.leaves.append(Leaf(len(self.leaves), sinfo, name, kind, alias_of=alias_of))
        return len(self.leaves) - 1

    def structure(self, sinfo, name, kind):
        if isinstance(sinfo, TupleStructInfo):
            return tuple(self.structure(f, f"{name}[{k}]", kind)
                         for k, f in enumerate(sinfo.fields))
        return self.leaf(sinfo, name, kind)

    def run(self):
        f = self.func
        params = []
        for p in f.params:
            params.append(self.structure(p.struct_info, p.name, "input"))
            self.env[p] = params[-1]
        for p in f.params:
            self.defined += [v for v in symbolic_vars(p.struct_info) if v not in self.defined]
        for leaf_id in leaves_of(tuple(params)):
            self.give_shape(self.leaves[leaf_id])
        self.input_vars = list(self.defined)
        for block in f.body.blocks:
            for b in block.bindings:
                self.binding(b)
        ret = self.value(f.body.body, "return")
        plan = GraphPlan(f.name, params, self.leaves, self.steps, ret, self.input_vars,
                         list(self.defined), param_names=[p.name for p in f.params])
        _place_outputs(plan)
        late = [x for x in leaves_of(ret) if self.root(x).kind in ("storage", "dynamic")]
        if late:
            self.callback("return", "output", args=tuple(late))
        _check_divisors(plan)
        plan_memory(plan)
        _assign_slots(plan)
        return plan

    # ------------------------------------------------------------ bindings
    def binding(self, b):
        name = b.var.name
        if isinstance(b, MatchCast):
            src = self.value(b.value, name)
            if isinstance(src, tuple) or not isinstance(b.struct_info, (TensorStructInfo,
                                                                        PrimStructInfo)):
                raise self.error(name, "match_cast is supported on a tensor or a scalar")
            root = self.leaves[src].alias_of if self.leaves[src].alias_of >= 0 else src
            new = [v for v in symbolic_vars(b.struct_info) if v not in self.defined]
            whole = set(getattr(b.struct_info, "shape", None) or ())
            for v in new:
                if isinstance(b.struct_info, TensorStructInfo) and v not in whole:
                    raise self.error(name, f"match_cast: shape variable {v.name} is new and "
                                     f"appears only inside an expression of "
                                     f"{show(b.struct_info)}; a new variable must be a whole "
                                     "dimension (it is read from the value's shape)")
            self.defined += new
            out = self.leaf(b.struct_info, name, "alias", alias_of=root)
            self.callback(name, "match_cast", args=(src,), outs=(out,),
                          sinfo=b.struct_info, defines=tuple(new))
            self.env[b.var] = out
            return
        self.env[b.var] = self.value(b.value, name)

    def value(self, e, name):
        if isinstance(e, GraphVar):
            if e not in self.env:
                raise self.error(name, f"{e.name} is used before it is defined")
            return self.env[e]
        if isinstance(e, Tuple):
            return tuple(self.value(x, name) for x in e.fields)
        if isinstance(e, TupleGetItem):
            return self.value(e.tuple_value, name)[e.index]
        if isinstance(e, CallTIR):
            return self.call_prim(name, e.func.name, e.args, e.out_sinfo)
        if isinstance(e, CallDPSPacked):
            return self.call_dps(name, e)
        if isinstance(e, CallPacked):
            self.lookup(name, e.name)
            args = tuple(self.arg(a, name) for a in e.args)
            out = self.structure(e.sinfo, name, "held")
            self.callback(name, "packed", func=e.name, args=args, outs=out, sinfo=e.sinfo)
            return out
        if isinstance(e, (PrimValue, ShapeExpr)):
            out = self.leaf(struct_info_of(e), name, "held")
            self.callback(name, "value", args=(self.arg(e, name),), outs=(out,),
                          sinfo=struct_info_of(e))
            return out
        raise self.error(name, f"{type(e).__name__} cannot be compiled here")

    def arg(self, a, name):
        if isinstance(a, PrimValue):
            return a.value
        if isinstance(a, ShapeExpr):
            return tuple(a.values)
        return self.value(a, name)

    def lookup(self, binding, packed):
        f = get_global_func(packed, allow_missing=True)
        if f is None:
            raise self.error(binding, f"no global function named {packed!r} is registered; "
                                      "register it with pyir.ffi.register_func or "
                                      "pyir.ffi.extern before building")
        return f

    def call_dps(self, name, e):
        func = self.lookup(name, e.name)
        if isinstance(func, ExternKernel):
            return self.call_prim(name, e.name, e.args, e.out_sinfo, "R.call_dps_packed")
        ins = tuple(self.value(a, name) for a in e.args)
        outs = tuple(self.out_leaf(s, name) for s in e.out_sinfo)
        self.callback(name, "dps", func=e.name, args=ins, outs=outs)
        return outs[0] if len(outs) == 1 else outs

    def out_leaf(self, sinfo, name):
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
            raise self.error(name, f"an output must be a tensor of known shape, not "
                                   f"{show(sinfo)}")
        leaf = self.leaf(sinfo, name)
        if any(v not in self.input_vars for v in symbolic_vars(sinfo)):
            self.leaves[leaf].kind = "dynamic"
            self.steps.append(Step("alloc", name, outs=(leaf,)))
        return leaf

    def callback(self, name, kind, args=(), outs=(), **info):
        self.steps.append(Step("callback", name, args=args, outs=outs, site=self.sites,
                               info=dict(info, kind=kind)))
        self.sites += 1

    def call_prim(self, name, func_name, args, out_sinfo, via="R.call_tir"):
        info = self.infos.get(func_name)
        if info is None:
            raise self.error(name, f"call_tir of {func_name!r}, which is not a prim function "
                                   "of the module")
        ins = []
        for a in args:
            v = self.value(a, name) if not isinstance(a, PrimValue) else a.value
            ins += leaves_of(v) if isinstance(v, (int, tuple)) else [v]
        outs = [self.out_leaf(s, name) for s in out_sinfo]
        sinfos = [self.leaves[v].sinfo if isinstance(v, int) else PrimStructInfo(v.dtype)
                  for v in ins + outs]
        bound, unproven = match_params(self.func.name, name, func_name, info.params, sinfos)
        checks = [(E.Binary("eq", want, got), f"{where}: dimension {d} of {show(sinfo)} must "
                                              f"equal {expr_text(want)}")
                  for where, d, want, got, sinfo in unproven]
        self.inputs_only_read(name, func_name, len(ins), via)
        for k, s in enumerate(out_sinfo):
            for d, dim in enumerate(s.shape or ()):
                if not never_negative(dim):
                    checks.append((E.Binary("ge", dim, E.IntImm(0)),
                                   f"dimension {d} of {func_name}'s result "
                                   f"{k if len(out_sinfo) > 1 else ''}{show(s)} must not be "
                                   "negative"))
        for p, v in zip(info.params, ins):
            if not isinstance(v, int) and dt.is_int(v.dtype) and any(
                    isinstance(n, E.Binary) and n.op in ("add", "sub", "mul") for n in walk(v)):
                # computed natively, as the machine does: wrapped, it would pass another value
                checks.append((E.Binary("le", v, E.IntImm(dt.int_range(v.dtype)[1], v.dtype)),
                               f"{func_name} parameter {p.name!r}: the value {expr_text(v)} "
                               f"must fit in {v.dtype}"))
        shape_args = tuple(bound[v] for v in info.shape_vars)
        self.steps.append(Step("prim", name, func=func_name, args=tuple(ins),
                               outs=tuple(outs), shape_args=shape_args, checks=tuple(checks)))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def inputs_only_read(self, name, func_name, inputs, via):
        """Refuse a call (``via``) of ``func_name`` known to write one of its first ``inputs``
        parameters: an input may be an array the caller passed (read-only) or a value used
        again. (A write only assumed, by native code declared without writes=, yields to
        the call's convention: it writes the outputs.)"""
        func = self.mod[func_name]
        for k, by in written_params(func, assumed=False).items():
            if k >= inputs:
                continue
            if via == "R.call_dps_packed":   # the kernel's own wrapper: by is the kernel
                what, why = "kernel", by[0].why_written(by[1])
            elif by is None:
                what, why = "prim function", "it stores into it"
            else:
                what, why = "prim function", (f"it passes it to kernel {by[0].name} as "
                                              f"{by[1]}: {by[0].why_written(by[1])}")
            raise self.error(name, f"{what} {func_name} writes its input {func.params[k].name} "
                                   f"({why}), but {via} passes inputs only to be read: they "
                                   "may be arrays the caller passed (read-only) or values "
                                   "used again; graph code takes results from a call's "
                                   "outputs")


def never_negative(dim):
    """Whether a dimension is >= 0 whatever its (non-negative) shape variables are."""
    ana = Analyzer()
    for v in vars_of(dim):
        ana.bind(v, IntBound(0, None))
    return ana.can_prove(E.Binary("ge", dim, E.IntImm(0)))


def _check_divisors(plan):
    """Make each step first check that the divisors of the integer divisions it computes (in
    the values it passes and the shapes it reads or makes) are not 0: native code would take
    ``n // 0`` as 0, Python would raise ZeroDivisionError. A divisor is checked once, at the
    first step that needs it and has its variables (a match_cast defines some)."""
    checked = set()
    for step in plan.steps:
        defines = step.info.get("defines", ())
        first = []
        for e in _computed(step, plan.leaves):
            for div in divisions(e):
                if div.b not in checked and not any(v in defines for v in vars_of(div.b)):
                    checked.add(div.b)
                    first.append((E.Binary("ne", div.b, E.IntImm(0, div.b.dtype)),
                                  f"the divisor of {expr_text(div)} must not be 0"))
        step.checks = tuple(first) + tuple(step.checks)


def _computed(step, leaves):
    """The integer expressions ``step`` computes: its values passed, the shapes of the leaves
    it reads and writes (and of the value a callback checks), its conditions."""
    yield from step.shape_args
    sinfos = [step.info["sinfo"]] if "sinfo" in step.info else []
    for x in leaves_of(step.args) + leaves_of(step.outs):
        if isinstance(x, int):
            sinfos.append(leaves[x].sinfo)
        else:
            yield x
    for sinfo in sinfos:
        yield from _dims(sinfo)
    for cond, _ in step.checks:
        yield cond


def _dims(sinfo):
    """The dimensions in struct info ``sinfo`` (a tensor's, a shape's, a tuple's fields')."""
    if isinstance(sinfo, TupleStructInfo):
        return [d for f in sinfo.fields for d in _dims(f)]
    if isinstance(sinfo, TensorStructInfo):
        return list(sinfo.shape or ())
    if isinstance(sinfo, ShapeStructInfo):
        return list(sinfo.values or ())
    return []


# ---------------------------------------------------------------- placement
def _place_outputs(plan):
    """Returned leaves made by native calls with shapes known from the inputs become
    caller-allocated outputs."""
    seen = set()
    for leaf_id in leaves_of(plan.ret):
        leaf = plan.leaves[leaf_id]
        if leaf.kind == "storage" and leaf_id not in seen \
                and all(v in plan.input_vars for v in symbolic_vars(leaf.sinfo)):
            leaf.kind = "output"
        seen.add(leaf_id)


def nbytes(sinfo):
    """Size in bytes of a tensor of known shape, as an int64 expression."""
    size = E.IntImm(np.dtype(sinfo.dtype).itemsize, "int64")
    for d in sinfo.shape:
        size = size * d
    return simplify(size)


def plan_memory(plan):
    """Assign a storage to every "storage" leaf (see the module docstring)."""
    last = {}
    for k, step in enumerate(plan.steps):
        for leaf_id in leaves_of(step.args) + leaves_of(step.outs):
            if isinstance(leaf_id, int):
                leaf = plan.leaves[leaf_id]
                last[leaf.alias_of if leaf.alias_of >= 0 else leaf_id] = k
    for leaf_id in leaves_of(plan.ret):
        if isinstance(leaf_id, int):
            leaf = plan.leaves[leaf_id]
            last[leaf.alias_of if leaf.alias_of >= 0 else leaf_id] = len(plan.steps)
    free, owners = [], {}
    for k, step in enumerate(plan.steps):
        for leaf_id in leaves_of(step.outs):
            leaf = plan.leaves[leaf_id]
            if leaf.kind != "storage":
                continue
            size = nbytes(leaf.sinfo)
            pick = next((s for s in free if same(plan.storages[s], size)),
                        free[0] if free else None)
            if pick is None:
                plan.storages.append(size)
                pick = len(plan.storages) - 1
            else:
                free.remove(pick)
                if not same(plan.storages[pick], size):
                    plan.storages[pick] = simplify(E.Binary("max", plan.storages[pick], size))
            leaf.storage = pick
            owners[pick] = leaf_id
        for s, owner in list(owners.items()):
            if last.get(owner, -1) <= k:
                free.append(s)
                del owners[s]


def _assign_slots(plan):
    """Frame layout: input leaves, input vars, outputs, other leaves, other vars, then
    the Python callback's address, a failed call's status and step index."""
    order = ([l.id for l in plan.leaves if l.kind == "input"], plan.input_vars,
             [l.id for l in plan.leaves if l.kind == "output"],
             [l.id for l in plan.leaves if l.kind not in ("input", "output")],
             [v for v in plan.vars if v not in plan.input_vars])
    k = 0
    for group in order:
        for x in group:
            (plan.var_slot if isinstance(x, E.Var) else plan.slot)[x] = k
            k += 1
    plan.num_slots = k + 3
