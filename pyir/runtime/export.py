"""Writing a shared object for `Executable.export_library`.

The compile units' IR is linked into one module (the functions that are not entry points
made internal: a function called across units is not exported) and compiled to
position-independent object code by llvmlite (reloc="pic", default code model), with the
thread pool's IR linked in when a parallel loop needs it and the metadata (`abi.dumps`:
`FuncInfo`s, graph plans, the target and the CPU features its code may use, which
`pyir.load_module` checks) embedded as JSON in the constant `abi.METADATA_SYMBOL`; the
system C compiler links the object (``cc -shared``; ``$CC`` overrides). The library needs
only libc and libm, and the shared libraries of the native kernels it calls: a kernel
declared with ``pyir.ffi.extern(symbol=...)`` is called by its own name in the library
that holds it (found with ``dladdr``), which is linked in by path, with its folder as run
path. Kernels that are not in a shared library (a ctypes callback of a Python function)
cannot be exported: that is an error naming them.
"""

import ctypes
import os
import pathlib
import subprocess
import tempfile

from ..codegen import abi
from ..codegen.target import FEATURE_PROBES
from ..ffi.extern import SYMBOL_PREFIX
from ..errors import Error
from .engine import ir_level, ir_rejected


def export_library(path, units, infos, target, opt_level="O3", graphs=(), symbols=None):
    """Write the shared object; ``units`` are the IR texts of the compile units, ``graphs``
    the `GraphPlan`s of the graph functions compiled into them; ``symbols`` map the names
    generated code calls extern kernels by to their addresses."""
    from ..codegen.compile import Machine, machine_code, optimize, unit_level  # llvmlite
    machine = Machine(target, reloc="pic")
    tm = machine.tm
    with ir_rejected("module"):
        mod = machine.prepare(units[0], "none")
        for unit in units[1:]:
            mod.link_in(machine.prepare(unit, "none"))
    entries = {abi.entry_symbol(f.name) for f in (*infos, *graphs)}
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in entries:
            fn.linkage = "internal"
    optimize(mod, tm, unit_level("\n".join(units), ir_level(opt_level)),
             unroll=any("llvm.loop.unroll" in u for u in units))
    from .threadpool import threadpool_ir, uses_runtime
    if any(uses_runtime(u) for u in units):
        with ir_rejected("the native runtime"):
            mod.link_in(machine.prepare(threadpool_ir(tm.triple), "none"))
    requires = target.uses() & FEATURE_PROBES.keys()   # what the loading machine must have
    with ir_rejected("the function metadata"):
        mod.link_in(machine.prepare(metadata_ir(abi.dumps(infos, graphs, str(target),
                                                          requires)), "none"))
    libraries = _call_kernels_by_name(mod, symbols or {})
    with machine_code(ir_level(opt_level)):
        obj = tm.emit_object(mod)
    path = pathlib.Path(path)
    with tempfile.TemporaryDirectory(prefix="pyir-export-") as tmp:
        obj_path = pathlib.Path(tmp) / "module.o"
        obj_path.write_bytes(obj)
        cmd = [os.environ.get("CC", "cc"), "-shared", "-o", str(path), str(obj_path), "-lm",
               "-lpthread"]
        for lib in libraries:
            cmd += [lib, f"-Wl,-rpath,{os.path.dirname(lib)}"]
        try:
            done = subprocess.run(cmd, check=False, capture_output=True, text=True)
        except FileNotFoundError:
            raise Error(f"export_library needs a C compiler to link {path}; {cmd[0]!r} was "
                        "not found (set CC)") from None
        if done.returncode:
            raise Error(f"linking {path} failed: {' '.join(cmd)}\n{done.stderr.strip()}")
    return path


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def shared_object_of(address):
    """``(library path, symbol name)`` of the function at ``address`` in a loaded shared
    library, or None when no library exports a symbol at exactly that address."""
    dladdr = ctypes.CDLL(None).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(address, ctypes.byref(info)) or not info.dli_fname or not info.dli_sname \
            or info.dli_saddr != address:
        return None
    return os.path.abspath(os.fsdecode(info.dli_fname)), info.dli_sname.decode()


def _call_kernels_by_name(mod, symbols):
    """Rename, in ModuleRef ``mod``, each extern kernel the JIT calls by a generated name to
    its own name in its shared library; return those libraries' paths."""
    libraries = []
    for symbol, address in symbols.items():
        try:
            fn = mod.get_function(symbol)
        except NameError:
            continue   # not called after all
        found = shared_object_of(address)
        kernel = symbol.removeprefix(SYMBOL_PREFIX)
        if found is None:
            raise Error(f"export_library: the code calls native kernel {kernel!r}, whose "
                        f"address {address:#x} is in no shared library (a ctypes callback of "
                        "a Python function?); an exported library can only call kernels "
                        "that a shared library exports")
        library, name = found
        if not os.path.isfile(library):
            raise Error(f"export_library: native kernel {kernel!r} is {name!r} in {library}, "
                        "which is not there to link against (loaded by a path relative to "
                        "another working folder?)")
        fn.name = name
        if library not in libraries:
            libraries.append(library)
    return libraries


def metadata_ir(text):
    """LLVM IR defining ``abi.METADATA_SYMBOL`` as the NUL-terminated bytes of ``text``."""
    data = text.encode() + b"\0"
    escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                      for b in data)
    return (f'@{abi.METADATA_SYMBOL} = constant [{len(data)} x i8] c"{escaped}", '
            "align 1\n")
