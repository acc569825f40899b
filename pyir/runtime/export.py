"""Writing a shared object for `Executable.export_library`.

The module's IR is compiled to position-independent object code by llvmlite (reloc="pic",
default code model), with the thread pool's IR linked in when a parallel loop needs it and
the metadata (`abi.dumps`: `FuncInfo`s and graph plans) embedded as JSON in the constant
`abi.METADATA_SYMBOL`; the system C compiler links the object (``cc -shared``; ``$CC``
overrides). The library needs only libc and libm. Extern kernels it calls stay undefined
symbols, resolved when it is loaded.
"""

import os
import pathlib
import subprocess
import tempfile

from ..codegen import abi
from ..errors import Error
from .engine import ir_level, prepare


def export_library(path, llvm_ir, infos, target, opt_level="O3", graphs=()):
    """Write the shared object; ``graphs`` are the `GraphPlan`s of the graph functions
    compiled into ``llvm_ir``."""
    from ..codegen.compile import machine_code  # llvmlite: only when compiling
    mod, tm = prepare(llvm_ir, target, opt_level, reloc="pic")
    if "pyir_parallel_for" in llvm_ir:
        from .threadpool import threadpool_ir
        pool, _ = prepare(threadpool_ir(tm.triple), target, opt_level, reloc="pic",
                          what="the thread pool")
        mod.link_in(pool)
    metadata, _ = prepare(metadata_ir(abi.dumps(infos, graphs)), target, "none", reloc="pic",
                          what="the function metadata")
    mod.link_in(metadata)
    with machine_code(ir_level(opt_level)):
        obj = tm.emit_object(mod)
    path = pathlib.Path(path)
    with tempfile.TemporaryDirectory(prefix="pyir-export-") as tmp:
        obj_path = pathlib.Path(tmp) / "module.o"
        obj_path.write_bytes(obj)
        cmd = [os.environ.get("CC", "cc"), "-shared", "-o", str(path), str(obj_path), "-lm",
               "-lpthread"]
        try:
            done = subprocess.run(cmd, check=False, capture_output=True, text=True)
        except FileNotFoundError:
            raise Error(f"export_library needs a C compiler to link {path}; {cmd[0]!r} was "
                        "not found (set CC)") from None
        if done.returncode:
            raise Error(f"linking {path} failed: {' '.join(cmd)}\n{done.stderr.strip()}")
    return path


def metadata_ir(text):
    """LLVM IR defining ``abi.METADATA_SYMBOL`` as the NUL-terminated bytes of ``text``."""
    data = text.encode() + b"\0"
    escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                      for b in data)
    return (f'@{abi.METADATA_SYMBOL} = constant [{len(data)} x i8] c"{escaped}", '
            "align 1\n")
