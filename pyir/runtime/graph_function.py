"""The callable behind ``lib["main"]`` for a compiled graph function.

A call checks the inputs with the generated argument checks of compiled functions
(`pyir.runtime.function.compile_binder`), allocates the outputs whose shapes follow from
the input shape variables, fills the frame (see `pyir.codegen.graph`) and makes ONE native
call. Python steps (packed functions, ``match_cast``, late outputs) come back through a
ctypes callback: an exception raised in one is kept, the native code unwinds with
`STATUS_CALLBACK_FAILED`, and the exception is re-raised unchanged to the caller.
"""

import ctypes
import math
import struct
import threading

import numpy as np

from ..codegen.abi import (
    STATUS_CALL_FAILED,
    STATUS_CALLBACK_FAILED,
    FuncInfo,
    ParamInfo,
    evaluate,
)
from ..errors import ArgumentTypeError, ArgumentValueError, Error
from ..ir import dtype as dt
from ..ir.graph import PrimStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo
from ..ir.ops import show
from ..transform.graph_plan import leaves_of, never_negative
from . import checks
from .exprtext import divisions, expr_text, vars_in
from .function import (_SLOT_CODE, NativeCode, compile_binder, data_pointer, scalar_types,
                       slot_layout)

_NATIVE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p)


class _CallState:
    __slots__ = ("error", "frame", "held", "late")

    def __init__(self, frame):
        self.frame, self.held, self.late, self.error = frame, {}, {}, None


class GraphFunction(NativeCode):
    """``lib["name"]`` of a graph function: call it with its inputs, by position or by name
    (tuples for tuple parameters, by position); it returns new numpy arrays (a tuple for a
    tuple)."""

    def __init__(self, plan, prim_infos, address, keepalive):
        self.plan, self.name = plan, plan.name
        self._prims = prim_infos
        self._fn = _NATIVE(address)
        self._keepalive = keepalive
        inputs = [l for l in plan.leaves if l.kind == "input"]
        self.info = FuncInfo(plan.name, tuple(_param(plan.name, l) for l in inputs),
                             tuple(plan.input_vars))
        self._check, self.binder_source = compile_binder(self.info)
        self._outputs = [l for l in plan.leaves if l.kind == "output"]
        self._pack = struct.Struct(slot_layout(self.info) + "Q" * len(self._outputs)).pack_into
        self._tuples = any(isinstance(p, tuple) for p in plan.params)
        self._sites = {s.site: s for s in plan.steps if s.kind == "callback"}
        self._callback = _CALLBACK(self._trampoline)
        self._local = threading.local()
        self._pool = []
        self._input_index = {l.id: k for k, l in enumerate(inputs)}
        self._output_index = {l.id: k for k, l in enumerate(self._outputs)}
        self.call_source = _call_source(self)
        namespace = {"check": self._check, "pack": self._pack, "pool": self._pool,
                     "new_frame": self._new_frame, "native": self._fn, "empty": np.empty,
                     "new_output": self._new_output, "divisor_error": self._divisor_error,
                     "data_pointer": data_pointer, "fail": self._status_error,
                     "flatten": self._flatten, "finish": self._finish,
                     "thread_stack": self._thread_stack, "StructError": struct.error,
                     "bad_scalars": lambda a: checks.scalar_error(self.info, a),
                     "State": _CallState}
        exec(compile(self.call_source, f"<pyir call of {self.name}>", "exec"),  # noqa: S102
             namespace)
        self._call = namespace["call"]

    def __call__(self, *args, **named):
        if named:
            if self._tuples:
                raise ArgumentTypeError(f"{self.name} takes a tuple parameter: pass its "
                                        "arguments by position")
            args = checks.by_position(self.info, args, named)
        return self._call(args)

    # ------------------------------------------------------------ helpers
    def _new_output(self, shape, dtype, k):
        """Output ``k``, of ``shape``: an error naming it where the shape is negative or
        needs more memory than there is."""
        leaf = self._outputs[k]
        if min(shape, default=0) < 0:
            raise ArgumentValueError(
                f"graph function {self.name}: the result {show(leaf.sinfo)} would have the "
                f"negative shape {shape} for these arguments")
        try:
            return np.empty(shape, dtype)
        except (ValueError, MemoryError):   # numpy's "array is too big", or no memory
            raise ArgumentValueError(
                f"graph function {self.name}: out of memory for the result "
                f"{show(leaf.sinfo)} of shape {shape} "
                f"({math.prod(shape) * np.dtype(dtype).itemsize:,} bytes)") from None

    def _divisor_error(self, shape_values):
        """The error for a result whose shape divides by 0 for these values of the shape
        variables."""
        env = dict(zip(self.info.shape_vars, shape_values))
        for leaf in self._outputs:
            try:
                _expected(leaf.sinfo, env)
            except ArgumentValueError as err:
                used = dict.fromkeys(v for d in leaf.sinfo.shape for v in vars_in(d))
                known = ", ".join(f"{v.name} = {env[v]}" for v in used)
                return ArgumentValueError(f"graph function {self.name}: the result "
                                          f"{show(leaf.sinfo)} cannot be allocated: {err} "
                                          f"(with {known})")
        return Error(f"graph function {self.name}: the shape of a result divides by 0")

    def _thread_stack(self):
        """The calls of this function under way in the current thread, innermost last
        (a packed function may call the graph function again)."""
        try:
            return self._local.stack
        except AttributeError:
            self._local.stack = []
            return self._local.stack

    def _new_frame(self):
        buf = (ctypes.c_uint8 * (8 * self.plan.num_slots))()
        address = ctypes.addressof(buf)
        ctypes.c_void_p.from_address(address + 8 * self.plan.callback_slot).value = \
            ctypes.cast(self._callback, ctypes.c_void_p).value
        return buf, address

    def _flatten(self, args):
        if len(args) != len(self.plan.params):
            raise checks.count_error(self.info, args) if not self._tuples else ArgumentTypeError(
                f"{self.name} takes {len(self.plan.params)} argument(s), {len(args)} given")
        out = []
        for k, (p, a) in enumerate(zip(self.plan.params, args)):
            self._flatten_one(p, a, out, k, "")
        return out

    def _argument_name(self, k, path):
        """How a message names parameter ``k`` or its part ``path`` (``"[1][0]"``):
        ``argument 't[1]'``."""
        return f"argument {self.plan.param_names[k] + path!r}"

    def _flatten_one(self, structure, a, out, k, path):
        if not isinstance(structure, tuple):
            out.append(a)
            return
        if not isinstance(a, (tuple, list)) or len(a) != len(structure):
            came = f"a {type(a).__name__} of {len(a)}" if isinstance(a, (tuple, list)) \
                else type(a).__name__
            raise ArgumentTypeError(f"{self.name}: {self._argument_name(k, path)} expects a "
                                    f"tuple of {len(structure)} value(s), got {came}")
        for j, (s, x) in enumerate(zip(structure, a)):
            self._flatten_one(s, x, out, k, f"{path}[{j}]")

    def _finish(self, outs, flat, state):
        return self._assemble(self.plan.ret, outs, flat, state, {})

    def _assemble(self, structure, outs, flat, state, copies):
        """The returned value of ``structure``; an input array returned is copied, once
        (``copies``): a value returned twice is one object twice, as in Python."""
        if isinstance(structure, tuple):
            return tuple(self._assemble(s, outs, flat, state, copies) for s in structure)
        if structure in self._output_index:
            return outs[self._output_index[structure]]
        if state is not None and structure in state.late:
            return state.late[structure]
        leaf = self.plan.leaves[structure]
        root = leaf.alias_of if leaf.alias_of >= 0 else structure
        if root in self._output_index:   # a match_cast of an output
            return outs[self._output_index[root]]
        if root in self._input_index:
            if root not in copies:
                k = self._input_index[root]
                value, sinfo = flat[k], self.plan.leaves[root].sinfo
                if isinstance(sinfo, TensorStructInfo):   # an array, or one by __dlpack__
                    value = np.array(checks.as_array(self.info, k, value), copy=True)
                elif isinstance(sinfo, ShapeStructInfo):
                    value = tuple(int(v) for v in value)     # as a list or numpy ints came
                elif isinstance(sinfo, PrimStructInfo):
                    value = np.dtype(sinfo.dtype).type(value)    # as numbers computed are
                copies[root] = value
            return copies[root]
        return state.held[structure]

    def _status_error(self, status, state, buf):
        if status == STATUS_CALLBACK_FAILED:
            return state.error
        frame = _slots(buf, self.plan.num_slots)
        if status == STATUS_CALL_FAILED:
            step = self.plan.steps[frame[self.plan.step_slot]]
            info = self._prims[step.func]
            env = self._env(frame)
            shape_values = [evaluate(e, env) for e in step.shape_args]
            err = checks.status_error(info, frame[self.plan.status_slot], shape_values,
                                      caller=(step.shape_args, env))
            return type(err)(f"graph function {self.name}, binding {step.binding}: {err}"
                             f"{self._names_in(step, info)}")
        if 0 < status <= len(self.plan.conditions):
            cond, message = self.plan.conditions[status - 1]
            env = self._env(frame)
            known = ", ".join(f"{v.name} = {env[v]}" for v in vars_in(cond))
            return ArgumentValueError(f"graph function {self.name}, {message} "
                                      f"(requires {expr_text(cond)}, but {known})")
        return checks.status_error(self.info, status, ())

    def _names_in(self, step, info):
        """What the buffer parameters of the prim function ``step`` calls (``info``) are in
        the graph function, for a message in the prim function's names: `` (its X is x,
        its Y is y)``; empty when a parameter has no name here."""
        names = []
        for p, v in zip(info.params, tuple(step.args) + tuple(step.outs)):
            if p.kind == "buffer" and isinstance(v, int) and self.plan.leaves[v].name:
                names.append(f"its {p.name} is {self.plan.leaves[v].name}")
        return f" ({', '.join(names)})" if names else ""

    def _env(self, frame):
        return {v: frame[k] for v, k in self.plan.var_slot.items()}

    # ------------------------------------------------------------ callbacks
    def _trampoline(self, site, address):
        state = self._thread_stack()[-1]
        try:
            step = self._sites[site]
            frame = _slots(state.frame, self.plan.num_slots)
            getattr(self, "_site_" + step.info["kind"])(step, state, frame)
            return 0
        except BaseException as e:  # noqa: BLE001 -- handed to the caller unchanged
            state.error = e
            return STATUS_CALLBACK_FAILED

    def _view(self, leaf_id, state, frame, env):
        if leaf_id in state.held:
            return state.held[leaf_id]
        leaf = self.plan.leaves[leaf_id]
        if isinstance(leaf.sinfo, ShapeStructInfo):    # a parameter: its values are known
            return tuple(evaluate(d, env) for d in leaf.sinfo.values)
        slot = self.plan.slot[leaf_id]
        if isinstance(leaf.sinfo, PrimStructInfo):
            return struct.unpack_from("<" + _SLOT_CODE[leaf.sinfo.dtype], state.frame, 8 * slot)[0]
        shape = tuple(evaluate(d, env) for d in leaf.sinfo.shape)
        dtype = np.dtype(leaf.sinfo.dtype)
        count = math.prod(shape)
        raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(frame[slot] or 0) \
            if count else bytearray()
        return np.frombuffer(raw, dtype).reshape(shape)

    def _argument(self, a, state, frame, env):
        """An input of a packed call; an array as a read-only view: a function that wrote
        into it wrote into the caller's array, or into memory a later binding reads."""
        if isinstance(a, tuple):
            return tuple(self._argument(x, state, frame, env) for x in a)
        if isinstance(a, int):
            value = self._view(a, state, frame, env)
            if isinstance(value, np.ndarray):
                value = value.view()
                value.flags.writeable = False
            return value
        value = evaluate(a, env)
        return bool(value) if a.dtype == "bool" else value

    def _packed(self, step):
        """The packed function ``step`` calls, looked up now: one unregistered since the
        build is named with the binding that calls it."""
        from ..ffi.registry import get_global_func
        try:
            return get_global_func(step.info["func"])
        except Error as e:
            raise type(e)(f"graph function {self.name}, binding {step.binding}: {e}") from None

    def _site_dps(self, step, state, frame):
        env = self._env(frame)
        f = self._packed(step)
        f(*[self._argument(a, state, frame, env) for a in step.args],
          *[self._view(o, state, frame, env) for o in step.outs])

    def _site_packed(self, step, state, frame):
        env = self._env(frame)
        f = self._packed(step)
        args = [self._argument(a, state, frame, env) for a in step.args]
        result = f(*args)
        self._store(step, step.outs, step.info["sinfo"], result, state, frame, env, "",
                    list(_arrays(args)))

    def _site_value(self, step, state, frame):
        """Hold a number or shape the graph function computes from its shape variables."""
        env = self._env(frame)
        value = self._argument(step.args[0], state, frame, env)
        (out,), sinfo = step.outs, step.info["sinfo"]
        if isinstance(sinfo, PrimStructInfo):
            self._hold_scalar(f"graph function {self.name}, binding {step.binding}: the value "
                              "is", sinfo.dtype, value, out, state)
        else:
            if not checks.int64_sizes(value):
                raise Error(f"graph function {self.name}, binding {step.binding}: the shape "
                            f"computed is {value}; a shape holds non-negative int64 values")
            state.held[out] = value

    def _store(self, step, structure, sinfo, value, state, frame, env, path, passed):
        """Check ``value``, what the packed function of ``step`` returned, and hold it;
        ``passed`` are the arrays that function was given."""
        where = (f"graph function {self.name}, binding {step.binding}{path}: "
                 f"{step.info['func']!r} returned")
        if isinstance(sinfo, TupleStructInfo):
            if not isinstance(value, tuple) or len(value) != len(sinfo.fields):
                raise Error(f"{where} {_describe(value)}, expected a tuple {show(sinfo)}")
            for k, (s, f, v) in enumerate(zip(structure, sinfo.fields, value)):
                self._store(step, s, f, v, state, frame, env, f"{path}[{k}]", passed)
            return
        if isinstance(sinfo, PrimStructInfo):
            self._hold_scalar(where, sinfo.dtype, value, structure, state)
            return
        if isinstance(sinfo, TensorStructInfo):
            if not isinstance(value, np.ndarray):
                raise Error(f"{where} {_describe(value)}, expected an array {show(sinfo)}")
            expected = _expected(sinfo, env)
            if value.dtype != np.dtype(sinfo.dtype) or (
                    sinfo.ndim != -1 and value.ndim != sinfo.ndim) or any(
                    e is not None and e != s for e, s in zip(expected, value.shape)):
                raise Error(f"{where} an array of shape {value.shape} and dtype {value.dtype}, "
                            f"expected {show(sinfo)}" + _evaluated(expected))
            value = _owned(value, passed)
            frame[self.plan.slot[structure]] = data_pointer(value)
        elif isinstance(sinfo, ShapeStructInfo):
            expected = [] if sinfo.values is None else _expected(
                TensorStructInfo(sinfo.values, "int64"), env)
            if not (checks.int_sequence(value)
                    and (sinfo.ndim == -1 or len(value) == sinfo.ndim)
                    and all(e is None or e == v for e, v in zip(expected, value))):
                raise Error(f"{where} {_describe(value)}, expected a shape {show(sinfo)}"
                            + _evaluated(expected))
            value = tuple(int(v) for v in value)
            if not checks.int64_sizes(value):
                raise Error(f"{where} {_describe(value)}, expected a shape {show(sinfo)} of "
                            "non-negative int64 values")
        else:   # R.Object: R.match_cast may hand an array in it to native code
            value = _owned(value, passed)
            if isinstance(value, np.ndarray):
                frame[self.plan.slot[structure]] = data_pointer(value)
        state.held[structure] = value

    def _hold_scalar(self, where, dtype, value, leaf, state):
        """Check that ``value`` is a ``dtype`` number (``where`` says whose) and store it in
        the frame slot of ``leaf``; it is held (and returned) as a numpy scalar of
        ``dtype``, as an array would be."""
        # A float for an integer dtype passes here, for out_of_range to say why it does not.
        numbers = scalar_types("bool" if dtype == "bool" else "float64")
        if not isinstance(value, numbers) or \
                isinstance(value, (bool, np.bool_)) != (dtype == "bool"):
            raise Error(f"{where} {_describe(value)}, expected {dt.a(dtype)} number")
        why = checks.out_of_range(dtype, value)
        if why:
            raise Error(f"{where} {_describe(value)}, expected {dt.a(dtype)} number: {why}")
        value = np.dtype(dtype).type(value)
        struct.pack_into("<" + _SLOT_CODE[dtype], state.frame, 8 * self.plan.slot[leaf], value)
        state.held[leaf] = value

    def _site_match_cast(self, step, state, frame):
        env = self._env(frame)
        (src,), (out,) = step.args, step.outs
        value = self._view(src, state, frame, env)
        sinfo = step.info["sinfo"]
        defines = step.info["defines"]
        where = f"graph function {self.name}: match_cast in binding {step.binding}"
        if isinstance(sinfo, PrimStructInfo):
            self._hold_scalar(f"{where}: the value is", sinfo.dtype, value, out, state)
            return
        shape = getattr(value, "shape", None)
        if not isinstance(value, np.ndarray) or value.dtype != np.dtype(sinfo.dtype) or (
                sinfo.ndim != -1 and value.ndim != sinfo.ndim):
            raise Error(f"{where}: the value ({_describe(value)}) does not match {show(sinfo)}")
        for v in defines:
            env.pop(v, None)
        for e, n in zip(sinfo.shape or (), shape):
            if e in defines and e not in env:
                env[e] = n
        expected = _expected(sinfo, env)
        if any(x != n for x, n in zip(expected, shape)):
            raise Error(f"{where}: the value has shape {shape}, but {show(sinfo)} requires "
                        f"{tuple(expected)}")
        for v in defines:
            frame[self.plan.var_slot[v]] = env[v]
        frame[self.plan.slot[out]] = frame[self.plan.slot[src]]
        if src in state.held:
            state.held[out] = state.held[src]

    def _site_output(self, step, state, frame):
        env = self._env(frame)
        for leaf_id in step.args:
            state.late[leaf_id] = np.array(self._view(leaf_id, state, frame, env), copy=True)

    def __repr__(self):
        """``<pyir GraphFunction main(t: (float32[n], ()), x: float32[n])>``: tuple
        parameters as the tuples they take."""
        text = {p.name: checks.param_text(p) for p in self.info.params}

        def shown(structure):
            if isinstance(structure, tuple):
                inner = ", ".join(shown(s) for s in structure)
                return f"({inner},)" if len(structure) == 1 else f"({inner})"
            return text[self.plan.leaves[structure].name].split(": ", 1)[1]

        params = ", ".join(f"{name}: {shown(p)}"
                           for name, p in zip(self.plan.param_names, self.plan.params))
        return f"<pyir GraphFunction {self.name}({params})>"


def _param(func, leaf):
    if isinstance(leaf.sinfo, PrimStructInfo):
        return ParamInfo(leaf.name, "scalar", leaf.sinfo.dtype)
    if isinstance(leaf.sinfo, ShapeStructInfo) and leaf.sinfo.values is not None:
        return ParamInfo(leaf.name, "shape", "int64", leaf.sinfo.values)
    if not isinstance(leaf.sinfo, TensorStructInfo) or leaf.sinfo.shape is None:
        raise Error(f"graph function {func}, parameter {leaf.name}: only tensors and shapes "
                    f"of known rank, and scalars, can be compiled, not {show(leaf.sinfo)}")
    return ParamInfo(leaf.name, "buffer", leaf.sinfo.dtype, leaf.sinfo.shape)


def _call_source(gf):
    """Python source of ``call(args)``: check, allocate the outputs, fill the frame, run,
    and hand back the result; straight-line code keeps a call to a few microseconds."""
    info, plan = gf.info, gf.plan
    names = {v: f"v{k}" for k, v in enumerate(info.shape_vars)}
    first = len(info.params)
    lines = ["def call(args):"]
    lines += (["    flat = flatten(args)", "    values, arrays = check(flat)"] if gf._tuples
              else ["    values, arrays = check(args)"])
    if names:
        lines.append(f"    {', '.join(names.values())}, = values[{first}:]")
    outs, allocs = [], []
    for k, leaf in enumerate(gf._outputs):
        shape = ", ".join(expr_text(d, names) for d in leaf.sinfo.shape)
        shape = f"({shape}{',' if len(leaf.sinfo.shape) == 1 else ''})"
        made = f"new_output({shape}, {leaf.sinfo.dtype!r}, {k})"
        if all(never_negative(d) for d in leaf.sinfo.shape):
            # numpy's own errors for a shape too big say nothing of the result: new_output's
            allocs += ["    try:", f"        o{k} = empty({shape}, {leaf.sinfo.dtype!r})",
                       "    except (ValueError, MemoryError):", f"        o{k} = {made}"]
        else:
            allocs.append(f"    o{k} = {made}")
        outs.append(f"o{k}")
    if any(divisions(d) for leaf in gf._outputs for d in leaf.sinfo.shape):
        lines += ["    try:", *("    " + line for line in allocs),
                  "    except ZeroDivisionError:",
                  f"        raise divisor_error(values[{first}:]) from None"]
    else:
        lines += allocs
    lines += ["    try:", "        buf, address = pool.pop()", "    except IndexError:",
              "        buf, address = new_frame()",
              "    try:",
              f"        pack(buf, 0, *values{''.join(f', data_pointer({o})' for o in outs)})",
              "    except (StructError, OverflowError):",
              "        pool.append((buf, address))",
              f"        raise bad_scalars({'flat' if gf._tuples else 'args'}) from None"]
    # A failure is read out of the frame before it goes back to the pool, where another
    # thread's call may take it.
    if gf._sites:
        lines += ["    state = State(buf)", "    stack = thread_stack()", "    stack.append(state)",
                  "    try:",
                  "        status = native(address)",
                  "        if status: raise fail(status, state, buf)",
                  "    finally:", "        stack.pop()",
                  "        pool.append((buf, address))"]
    else:
        lines += ["    state = None", "    status = native(address)",
                  "    if status: error = fail(status, state, buf)",
                  "    pool.append((buf, address))",
                  "    if status: raise error"]
    ret = leaves_of(plan.ret)
    if all(x in gf._output_index for x in ret) and len(set(ret)) == len(ret):
        lines.append(f"    return {_structure_text(plan.ret, gf._output_index)}")
    else:
        flat = "flat" if gf._tuples else "args"
        lines.append(f"    return finish([{', '.join(outs)}], {flat}, state)")
    return "\n".join(lines) + "\n"


def _owned(value, passed):
    """``value`` (an array, or a tuple or list of values) with each array that is not
    C-contiguous memory of its own, or that shares memory with an array in ``passed``, copied:
    an argument (or a view of one) handed back would share storage the plan reuses for later
    bindings and frees at the end of the call, or the caller's input."""
    if isinstance(value, (tuple, list)):
        owned = [_owned(v, passed) for v in value]
        return tuple(owned) if isinstance(value, tuple) else owned
    if isinstance(value, np.ndarray) and (
            not (value.flags.c_contiguous and value.flags.owndata)
            or any(np.may_share_memory(value, a) for a in passed)):
        return value.copy(order="C")
    return value


def _arrays(values):
    """The arrays in ``values``, looking into tuples."""
    for v in values:
        if isinstance(v, np.ndarray):
            yield v
        elif isinstance(v, tuple):
            yield from _arrays(v)


def _structure_text(structure, index):
    if isinstance(structure, tuple):
        return "(" + "".join(_structure_text(s, index) + ", " for s in structure) + ")"
    return f"o{index[structure]}"


def _slots(buf, n):
    return (ctypes.c_int64 * n).from_buffer(buf)


def _expected(sinfo, env):
    if sinfo.shape is None:
        return []
    out = []
    for d in sinfo.shape:
        try:
            out.append(evaluate(d, env))
        except KeyError:
            out.append(None)
    return out


def _evaluated(expected):
    """`` = (3, ?)``: the expected shape with what the call gave its variables (written as
    Python writes a shape: ``(3,)``)."""
    known = [str(e) if e is not None else "?" for e in expected]
    return f" = ({', '.join(known)}{',' if len(known) == 1 else ''})" if known else ""


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:80]
