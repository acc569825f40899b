"""Hand-written native kernels declared with T annotations: ``@pyir.ffi.extern(name, ...)``.

The declaration's signature is read by the T parser (its body is ``...``) into a prim
function that calls the kernel once, passing each buffer's data pointer and each scalar's
value in parameter order (a scalar named like a shape variable is filled from the shapes).
That wrapper is the kernel's interface everywhere: graph code calls it like any prim
function (its shapes checked at the call), Python calls it through the same generated
argument checks as a compiled function, and ``T.call_extern(name, ...)`` in prim functions
calls the kernel itself.

A kernel is native code at an address (``symbol=`` a ctypes function) or LLVM IR text
(``llvm_ir=``, defining exactly one function) linked into every module that calls it, so
LLVM may inline it.
"""

import ctypes
import dataclasses
import re
import sys

from pyir.errors import Error

from .registry import register_func

_DEFINE = re.compile(r'^\s*define\b[^@]*@("?)([-\w.$]+)\1\s*\(', re.MULTILINE)


class ExternKernel:
    """A registered native kernel: ``prim`` is its wrapper prim function; ``symbol`` the
    LLVM name generated code calls; ``address`` (for ctypes kernels) or ``llvm_ir``."""

    def __init__(self, name, prim, symbol, address=None, llvm_ir=None):
        self.name, self.prim, self.symbol = name, prim, symbol
        self.address, self.llvm_ir = address, llvm_ir
        self._compiled = None

    def __call__(self, *args):
        """Run the kernel on ``args`` (arrays and scalars, in parameter order) after the
        argument checks of a compiled function."""
        if self._compiled is None:
            from pyir.driver import build
            self._compiled = build(self.prim)[self.name]
        return self._compiled(*args)

    def __repr__(self):
        return f"<pyir extern kernel {self.name} -> {self.symbol}>"


def extern(name, symbol=None, llvm_ir=None, override=False):
    """Decorator declaring the native kernel ``name`` (see the module docstring); the
    decorated declaration is replaced by the `ExternKernel`, also in the registry."""
    if (symbol is None) == (llvm_ir is None):
        raise Error(f"pyir.ffi.extern({name!r}) needs exactly one of symbol= (a ctypes "
                    "function) or llvm_ir= (LLVM IR text)")

    def declare(decl):
        frame = sys._getframe(1)
        if llvm_ir is not None:
            defined = _DEFINE.findall(llvm_ir)
            if len(defined) != 1:
                raise Error(f"pyir.ffi.extern({name!r}): the LLVM IR text must define exactly "
                            f"one function, it defines {len(defined)}")
            sym, address = defined[0][1], None
        else:
            address = ctypes.cast(symbol, ctypes.c_void_p).value
            if not address:
                raise Error(f"pyir.ffi.extern({name!r}): symbol= must be a ctypes function "
                            f"with an address, got {symbol!r}")
            sym = f"pyir.extern.{name}"
        kernel = ExternKernel(name, _wrapper(name, decl, frame), sym, address, llvm_ir)
        register_func(name, kernel, override=override)
        return kernel

    return declare


def _wrapper(name, decl, frame):
    """The prim function named ``name`` with ``decl``'s signature that calls kernel ``name``;
    ``frame`` is where ``decl`` was declared (its annotations may use names from there)."""
    from pyir.script.parser.module import parse_declaration

    from pyir.ir import Buffer, BufferLoad, Call, Evaluate, IntImm, StringImm, walk
    prim = parse_declaration(decl, frame)
    args = [BufferLoad(p, tuple(IntImm(0, "int64") for _ in p.shape))
            if isinstance(p, Buffer) else p for p in prim.params]
    call = Call("void", "call_extern", (StringImm(name),) + tuple(args))
    shape_vars = {n for p in prim.params if isinstance(p, Buffer) for s in p.shape
                  for n in walk(s)}
    params = tuple(p for p in prim.params if p not in shape_vars)
    return dataclasses.replace(prim, name=name, params=params, body=Evaluate(call))


def kernels_called(mod):
    """The `ExternKernel`s named by ``call_extern`` in the prim functions of ``mod``."""
    from pyir.ir import Call, PrimFunc, walk

    from .registry import get_global_func
    found = {}
    for _, f in mod.functions:
        if isinstance(f, PrimFunc):
            for n in walk(f.body):
                if isinstance(n, Call) and n.op == "call_extern":
                    k = get_global_func(n.args[0].value, allow_missing=True)
                    if isinstance(k, ExternKernel):
                        found[k.name] = k
    return list(found.values())


def link_ir(llvm_ir, kernels):
    """``llvm_ir`` with the IR text of ``kernels`` appended (their declarations dropped)."""
    for k in kernels:
        if k.llvm_ir is not None:
            llvm_ir = re.sub(rf'^declare\b[^\n]*@"?{re.escape(k.symbol)}"?\([^\n]*\n', "",
                             llvm_ir, flags=re.MULTILINE) + "\n" + k.llvm_ir
    return llvm_ir


def kernels_called_from_graph(mod):
    """The `ExternKernel`s named by ``call_dps_packed`` in the graph functions of ``mod``."""
    from pyir.ir import CallDPSPacked, Function, walk

    from .registry import get_global_func
    found = {}
    for _, f in mod.functions:
        if isinstance(f, Function):
            for n in walk(f.body):
                if isinstance(n, CallDPSPacked):
                    k = get_global_func(n.name, allow_missing=True)
                    if isinstance(k, ExternKernel):
                        found[k.name] = k
    return list(found.values())
