"""The callable behind ``lib["name"]``: checks the arguments of one compiled prim function,
fills its slot array (see `pyir.codegen.abi`) and calls the native code.

Arrays are bound zero-copy: the slot receives the array's own data pointer. Everything
that does not depend on the arguments is prepared once per function: the checks are
generated as straight-line Python source (`binder_source`, kept as ``binder_source`` on
the object), compiled at the first call (Python's compile takes 0.6 ms, and a build makes
the object of every function it registers, most never called from Python), and the slot
layout is a `struct.Struct`, so a call costs a few microseconds.
A failed check raises `ArgumentTypeError` / `ArgumentValueError`, built by
`pyir.runtime.checks` only on that path.

Slot buffers come from a free list (``list.pop`` / ``list.append`` are atomic under the
GIL), so threads calling the same function concurrently each get their own buffer.
"""

import ctypes
import functools
import struct

import numpy as np

from ..codegen.abi import SLOT_BYTES
from ..errors import ArgumentTypeError, Error
from ..ir import expr as E
from . import checks
from .exprtext import divisions, expr_text

#: struct code of a scalar stored at the start of its 8-byte slot (little-endian).
_SLOT_CODE = {
    "bool": "?7x", "int8": "b7x", "int16": "h6x", "int32": "i4x", "int64": "q",
    "uint8": "B7x", "uint16": "H6x", "uint32": "I4x", "uint64": "Q",
    "float16": "e6x", "float32": "f4x", "float64": "d",
}

#: numpy's integer scalar types, each of them (np.integer also holds np.timedelta64, a
#: duration, which an int32 parameter took as the number 2 and a float32 one as 2.0).
_NUMPY_INTEGERS = tuple(sorted({np.dtype(c).type for c in "bBhHiIlLqQ"}, key=str))
#: Python types accepted for a scalar parameter of each kind of dtype.
_SCALAR_TYPES = {
    "bool": (bool, np.bool_),
    "int": (int, *_NUMPY_INTEGERS),
    "float": (int, float, *_NUMPY_INTEGERS, np.floating),
}


def _scalar_kind(dtype):
    return "bool" if dtype == "bool" else "float" if dtype.startswith("float") else "int"


def scalar_types(dtype):
    """The Python types a ``dtype`` scalar is accepted as (numpy's scalars among them)."""
    return _SCALAR_TYPES[_scalar_kind(dtype)]


_NATIVE_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


def _data_pointer_reader():
    """The fastest correct way to read an ndarray's data pointer.

    ``a.ctypes.data`` costs about 0.85 µs. In CPython the ``data`` field of numpy's
    ``PyArrayObject`` follows the object header, so it can be read in 0.1 µs; the shortcut
    is used only if it agrees with ``a.ctypes.data`` on probe arrays.
    """
    offset = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    read = ctypes.c_size_t.from_address
    probes = [np.empty(5, np.float32), np.zeros((3, 4), np.int8)[1:], np.arange(7.0)[2:]]
    if all(read(id(a) + offset).value == a.ctypes.data for a in probes):
        return lambda a: read(id(a) + offset).value
    return lambda a: a.ctypes.data


data_pointer = _data_pointer_reader()


def native_function(address):
    """A ctypes callable for the native entry ``i32 f(ptr slots)`` at ``address``."""
    return _NATIVE_SIGNATURE(address)


class NativeCode:
    """What holds native code of this process (an `Executable` and its functions): a copy is
    the object itself, as the code cannot change; pickling is refused, as the code cannot
    travel (`export_library` and `pyir.load_module` do that)."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise ArgumentTypeError(
            f"cannot pickle {self!r}: it holds native code loaded in this process; save the "
            "executable with lib.export_library(path) and load it elsewhere with "
            "pyir.load_module(path)")


class PrimFunction(NativeCode):
    """``lib["name"]``: call it with one argument per parameter (outputs included), by
    position or by the parameter's name.

    ``keepalive`` is whatever owns the native code (JIT engine, loaded library); it lives
    as long as this object.
    """

    def __init__(self, info, address, keepalive):
        self.info = info
        self.name = info.name
        self._fn = native_function(address)
        self._keepalive = keepalive
        self._nargs = len(info.params)
        self._nvars = len(info.shape_vars)
        check_bindable(info)
        self._check, self._source = self._first_check, None
        self._pack = struct.Struct(slot_layout(info)).pack_into
        self._pool = []

    def _first_check(self, args):
        """The argument check at the first call: compiled, then called from then on."""
        self._check, self._source = compile_binder(self.info)
        return self._check(args)

    @property
    def binder_source(self):
        """The Python source of the argument check (`binder_source`)."""
        if self._source is None:
            self._check, self._source = compile_binder(self.info)
        return self._source

    def __call__(self, *args, **named):
        if named:
            args = checks.by_position(self.info, args, named)
        # ``_arrays`` keeps arrays made from __dlpack__ objects alive during the call.
        values, _arrays = self._check(args)
        pool = self._pool
        try:
            slots, address = pool.pop()
        except IndexError:
            slots, address = self._new_slots()
        try:
            self._fill(slots, values, args)
            status = self._fn(address)
        finally:
            pool.append((slots, address))
        if status:
            raise self._status_error(status, values)

    def _status_error(self, status, values):
        """The error for ``status``, given the checked argument ``values`` of the call."""
        scalars = [v for v, p in zip(values, self.info.params) if p.kind == "scalar"]
        return checks.status_error(self.info, status, values[self._nargs:], scalars)

    def prepare(self, *args):
        """Check and bind ``args`` once; return ``(call, keepalive)`` where ``call()`` runs
        the native function on them and returns its status (for timing loops)."""
        values, arrays = self._check(args)
        slots, address = self._new_slots()
        self._fill(slots, values, args)
        call = functools.partial(self._fn, address)
        status = call()
        if status:
            raise self._status_error(status, values)
        return call, (slots, arrays, args)

    def _fill(self, slots, values, args):
        try:
            self._pack(slots, 0, *values)
        except (struct.error, OverflowError):
            raise checks.scalar_error(self.info, args) from None

    def _new_slots(self):
        slots = (ctypes.c_uint8 * max(SLOT_BYTES, SLOT_BYTES * self.info.num_slots))()
        return slots, ctypes.addressof(slots)

    def __repr__(self):
        return f"<pyir PrimFunction {checks.signature(self.info)}>"


def compile_binder(info):
    """``(check, source)``: the argument check of ``info`` (see `binder_source`)."""
    source = binder_source(info)
    namespace = dict(vars(checks), info=info, ndarray=np.ndarray, data_pointer=data_pointer,
                     SCALAR_TYPES=_SCALAR_TYPES,
                     dtypes=[np.dtype(p.dtype) if p.kind == "buffer" else None
                             for p in info.params])
    code = compile(source, f"<pyir binder of {info.name}>", "exec")
    exec(code, namespace)  # noqa: S102 -- source generated from the FuncInfo
    return namespace["check"], source


def slot_layout(info):
    """The `struct` layout of ``info``'s slot array (parameters, then shape variables)."""
    return "<" + "".join(_SLOT_CODE[p.dtype] if p.kind == "scalar" else "Q"
                         for p in info.params) + "q" * len(info.shape_vars)


def check_bindable(info):
    """An Error when a shape variable of ``info`` is a whole dimension of no buffer
    parameter: no call could tell its value from the arrays (``n`` only in ``n * 2``)."""
    alone = {e for p in info.params if p.kind != "scalar" for e in p.shape
             if isinstance(e, E.Var)}
    unbound = [v.name for v in info.shape_vars if v not in alone]
    if unbound:
        raise Error(f"{info.name}: shape variable(s) {', '.join(unbound)} appear in no "
                    "parameter dimension by themselves, so a call cannot determine them")


def binder_source(info):
    """Python source of ``check(args)`` for ``info``: it raises the error for the first bad
    argument, or returns the slot values and the arrays bound (which must outlive the
    call). Straight-line code per parameter keeps a call to a few microseconds."""
    index = {v: k for k, v in enumerate(info.shape_vars)}
    names = {v: f"v{index[v]}" if k is None else f"a{k}" for v, k in checks.dimension_vars(info)}
    bound = {}
    lines = [f"def check(args):  # {checks.signature(info)}",
             f"    if len(args) != {len(info.params)}: raise count_error(info, args)"]
    deferred, buffers, values = [], [], []
    shape_values = f"({''.join(v + ', ' for v in names.values())})"
    divides = False    # whether a deferred check divides by a value that may be 0
    for i, p in enumerate(info.params):
        a = f"a{i}"
        lines.append(f"    {a} = args[{i}]")
        if p.kind == "scalar":
            kind = _scalar_kind(p.dtype)
            # Python's bool is an int; it is a number for no dtype but bool (np.bool_ is not)
            refused = "" if kind == "bool" else f" or type({a}) is bool"
            lines.append(f"    if not isinstance({a}, SCALAR_TYPES[{kind!r}]){refused}: "
                         f"raise scalar_type_error(info, {i}, {a})")
            values.append(a)
            continue
        if p.kind == "shape":
            lines.append(f"    s{i} = as_shape(info, {i}, {a})")
        else:
            lines += [f"    if type({a}) is not ndarray: {a} = as_array(info, {i}, {a})",
                      (f"    if {a}.dtype is not dtypes[{i}] and {a}.dtype != dtypes[{i}]: "
                       f"raise dtype_error(info, {i}, {a})"),
                      f"    s{i} = {a}.shape",
                      f"    if len(s{i}) != {len(p.shape)}: raise rank_error(info, {i}, {a})"]
        for d, e in enumerate(p.shape):
            if isinstance(e, E.IntImm):
                lines.append(f"    if s{i}[{d}] != {e.value}: raise shape_error(info, {i}, {d}, "
                             f"s{i})")
            elif e in index and e not in bound:
                bound[e] = (i, d)
                lines.append(f"    {names[e]} = s{i}[{d}]")
            elif e in index:
                lines.append(f"    if s{i}[{d}] != {names[e]}: raise symbol_error(info, "
                             f"{bound[e]}, {names[e]}, {i}, {d}, s{i})")
            else:
                deferred.append(f"    if s{i}[{d}] != {expr_text(e, names, 4)}: "
                                f"raise expr_dim_error(info, {i}, {d}, s{i}, {shape_values})")
                divides = divides or bool(divisions(e))
        if p.kind == "shape":
            values.append("0")    # its slot is unused: its values are shape variables'
            continue
        itemsize = np.dtype(p.dtype).itemsize
        lines += [f"    f = {a}.flags",
                  f"    if not f.c_contiguous: raise contiguity_error(info, {i}, {a})"]
        if p.writes:
            lines.append(f"    if not f.writeable: raise readonly_error(info, {i})")
        lines.append(f"    p{i} = data_pointer({a})")
        if itemsize > 1:
            lines.append(f"    if p{i} % {itemsize}: raise alignment_error(info, {i}, p{i})")
        buffers.append(i)
        values.append(f"p{i}")
    check_bindable(info)
    if divides:
        lines += ["    try:", *("    " + line for line in deferred),
                  "    except ZeroDivisionError:",
                  f"        raise divisor_error(info, {shape_values}) from None"]
    else:
        lines += deferred
    lines += _overlap_checks(info, buffers)
    values += [names[v] for v in info.shape_vars]
    arrays = [f"a{i}" for i in buffers]
    lines.append(f"    return ({''.join(v + ', ' for v in values)}), "
                 f"({''.join(a + ', ' for a in arrays)})")
    return "\n".join(lines) + "\n"


def _overlap_checks(info, buffers):
    """A written buffer must not share memory with another buffer argument: compiled code
    assumes distinct buffers do not alias."""
    written = [i for i in buffers if info.params[i].writes]
    if not written or len(buffers) < 2:
        return []
    lines = [f"    e{i} = p{i} + a{i}.nbytes" for i in buffers]
    for w in written:
        for j in buffers:
            if j != w and not (info.params[j].writes and j < w):
                lines.append(f"    if p{w} < e{j} and p{j} < e{w} and p{w} < e{w} and "
                             f"p{j} < e{j}: raise overlap_error(info, {w}, {j})")
    return lines
