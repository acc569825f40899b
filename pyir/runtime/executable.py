"""`Executable`: the compiled functions of one module, callable from Python.

An Executable is made either by the JIT (`Executable.jit`, `Executable.from_engine`: it keeps
the LLVM IR of the compile units and can show code and export a library) or by
`pyir.load_module` from an exported shared object (only the calls and their checks).
"""

import os

from ..codegen.abi import entry_symbol
from ..errors import ArgumentTypeError, ArgumentValueError, Error, MissingNameError
from .function import NativeCode, PrimFunction


class Executable(NativeCode):
    """``lib["name"]`` is a `PrimFunction`; see also `benchmark`, `source`, `export_library`.
    ``missing_features`` names the CPU features the code uses that this machine lacks
    (`pyir.codegen.target.Target.missing_on_host`; for a loaded library, ``built_for`` its
    target and ``missing_features`` those `pyir.load_module` found missing): with any,
    asking for a function is an error, as running it would stop the process.

    ``resolve(symbol)`` gives the native address of a function's entry symbol
    (`pyir.codegen.abi.entry_symbol`); ``owner`` keeps the code alive
    (a `JitEngine` or a ctypes library).
    """

    def __init__(self, infos, resolve, owner, origin, units=None, target=None,
                 opt_level="O3", symbols=None, built_for="", missing_features=()):
        self._infos = {info.name: info for info in infos}
        self._resolve = resolve
        self._owner = owner
        self._origin = origin
        self._units = units   # the LLVM IR texts of the compile units
        self._target = target
        self._opt_level = opt_level
        self._symbols = dict(symbols or {})   # extern kernel symbol -> address
        self._functions = {}
        self._graphs = {}
        self._asm = None
        self._built_for = str(target) if target is not None else built_for
        self.missing_features = tuple(missing_features) if target is None \
            else target.missing_on_host()

    @classmethod
    def jit(cls, llvm_ir, infos, target, opt_level="O3", symbols=None, name="module"):
        """Compile ``llvm_ir`` (one module, following `pyir.codegen.abi`, described by
        ``infos``) in this process. ``symbols`` maps extern kernel names to their
        addresses."""
        from ..codegen.target import Target
        from .engine import JitEngine
        with JitEngine(Target.from_string(target), opt_level, symbols, name) as engine:
            engine.add(llvm_ir)
        return cls.from_engine(engine, infos, symbols)

    @classmethod
    def from_engine(cls, engine, infos, symbols=None):
        """The functions ``infos`` describe, compiled by `JitEngine` ``engine``."""
        return cls(infos, engine.address, engine, f"JIT for {engine.target.cpu}",
                   engine.units, engine.target, engine.level, symbols)

    def add_graph_function(self, plan):
        """Make graph function ``plan`` (a `GraphPlan` compiled into this code) callable."""
        from .graph_function import GraphFunction
        self._graphs[plan.name] = GraphFunction(plan, self._infos,
                                                self._resolve(entry_symbol(plan.name)),
                                                self)

    def __getitem__(self, name):
        fn = self._functions.get(name) or self._graphs.get(name)
        if fn is None or self.missing_features:
            if name not in self._infos and name not in self._graphs:
                raise MissingNameError(f"the executable has no function named {name!r}; "
                                       f"it has {', '.join(self.function_names()) or 'none'}")
            if self.missing_features:
                raise Error(self._cannot_run(name))
            address = self._resolve(entry_symbol(name))
            fn = self._functions[name] = PrimFunction(self._infos[name], address, self)
        return fn

    def __contains__(self, name):
        return name in self._infos or name in self._graphs

    def __iter__(self):
        """The names of the functions, as a dict's keys (``for name in lib``; without it,
        Python iterated by calling ``lib[0]``, "no function named 0")."""
        return iter(self.function_names())

    def __len__(self):
        return len(self._infos) + len(self._graphs)

    def function_names(self):
        return list(self._infos) + list(self._graphs)

    @property
    def target(self):
        return self._target

    def _cannot_run(self, name):
        """Why function ``name`` of code that uses `missing_features` is not called here."""
        return (f"function {name!r} cannot run on this machine: it was built for target "
                f"'{self._built_for}', whose code uses CPU features this machine's CPU lacks "
                f"({', '.join(self.missing_features)}), and would stop the process with an "
                "illegal instruction; build for target 'llvm' (this CPU) to run it here, or "
                "run it on a machine that has them")

    def benchmark(self, name, *args, number=None, repeat=10):
        """Time the native call of prim function ``name`` on ``args`` (checked and bound
        once), or the whole call of graph function ``name`` (its argument checks and the
        arrays it returns included): a `BenchmarkResult` with median, min and IQR in
        seconds per call."""
        from .benchmark import time_calls
        fn = self[name]
        if name in self._graphs:
            fn(*args)   # argument errors surface here, not inside the timing loop
            return time_calls(name, lambda: fn(*args), number=number, repeat=repeat)
        call, keepalive = fn.prepare(*args)
        result = time_calls(name, call, number=number, repeat=repeat)
        del keepalive
        return result

    def source(self, kind="llvm"):
        """Generated code: "llvm" (as generated), "llvm-opt" (after the optimization
        pipeline, as run) or "asm" (the target machine's assembly)."""
        if kind not in ("llvm", "llvm-opt", "asm"):
            raise Error(f"unknown source kind {kind!r}; expected 'llvm', 'llvm-opt' or 'asm'")
        if self._units is None:
            raise Error(f"no source is available for an executable loaded from {self._origin}")
        from .engine import joined
        if kind == "llvm":
            return joined(self._units)
        if kind == "llvm-opt":
            return self._owner.optimized_ir()
        if self._asm is None:
            from ..codegen.compile import emit_assembly
            from .engine import ir_level
            level = ir_level(self._opt_level)
            self._asm = joined([emit_assembly(u, self._target, level) for u in self._units])
        return self._asm

    def export_library(self, path):
        """Write a shared object that `pyir.load_module` loads (no Python source needed)."""
        if self._units is None:
            raise Error(f"cannot export an executable loaded from {self._origin}")
        path = library_path("export_library", path)
        if os.path.isdir(path):
            raise ArgumentValueError(f"export_library: {path} is a directory; give the path "
                                     "of the file to write")
        if not os.path.isdir(os.path.dirname(path)):
            raise ArgumentValueError(f"export_library: cannot write {path}: the directory "
                                     f"{os.path.dirname(path)} does not exist")
        from .export import export_library
        export_library(path, self._units, list(self._infos.values()), self._target,
                       self._opt_level, [g.plan for g in self._graphs.values()], self._symbols)

    def __repr__(self):
        names = ", ".join(self.function_names()) or "no functions"
        return f"<pyir Executable ({names}) {self._origin}>"


def library_path(what, path):
    """``path`` (a str or an os.PathLike of one) as an absolute path."""
    path = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(path, str):
        raise ArgumentTypeError(f"{what} needs a path (a str or a pathlib.Path), got "
                                f"{type(path).__name__} {path!r}")
    return os.path.abspath(path)
