"""Test-only JIT: lower, codegen, MCJIT, and a ctypes call with a slot array built from
numpy arrays. ``pyir_parallel_for`` is a serial stand-in (two chunks, to exercise
begin > 0) written in LLVM IR until the runtime's pool is used; heap blocks come from the
runtime (``pyir_alloc``, compiled into the process on first use)."""

import ctypes

import llvmlite.binding as llvm
import numpy as np

from pyir import transform
from pyir.codegen import abi
from pyir.codegen.compile import optimize_and_emit
from pyir.codegen.llvm import codegen
from pyir.runtime.threadpool import ALLOC_SYMBOLS, ensure_jit_pool

SERIAL_POOL_IR = r"""
define i32 @pyir_parallel_for(ptr %fn, ptr %closure, i64 %n) {
entry:
  %half = sdiv i64 %n, 2
  %r0 = call i32 %fn(i64 0, i64 %half, ptr %closure)
  %ok = icmp eq i32 %r0, 0
  br i1 %ok, label %second, label %done
second:
  %r1 = call i32 %fn(i64 %half, i64 %n, ptr %closure)
  ret i32 %r1
done:
  ret i32 %r0
}
"""


class Compiled:
    """A module compiled into its own MCJIT engine (with its own target machine)."""

    def __init__(self, mod, target="llvm", level="O3", lower=True, default_schedule=True):
        self.lowered = transform.lower(mod, default_schedule) if lower else mod
        self.llvm_ir, infos = codegen(self.lowered, target)
        self.infos = {i.name: i for i in infos}
        if any(name in self.llvm_ir for name in ALLOC_SYMBOLS):
            ensure_jit_pool()
        ref, tm = optimize_and_emit(self.llvm_ir, target, level)
        pool = llvm.parse_assembly(SERIAL_POOL_IR)
        pool.triple, pool.data_layout = ref.triple, ref.data_layout
        ref.link_in(pool)
        self.engine = llvm.create_mcjit_compiler(ref, tm)
        self.engine.finalize_object()

    def __call__(self, name, *args, shape_values=None):
        """Call ``name`` on numpy arrays / Python scalars; return the status code."""
        info = self.infos[name]
        slots = (ctypes.c_uint64 * max(1, info.num_slots))()
        env = dict(shape_values or {})
        for k, (p, a) in enumerate(zip(info.params, args)):
            if p.kind == "buffer":
                assert a.dtype == np.dtype(p.dtype) and a.flags.c_contiguous
                slots[k] = a.ctypes.data
                for d, s in enumerate(p.shape):
                    if s in info.shape_vars:
                        env.setdefault(s, a.shape[d])
            else:
                raw = np.zeros(1, np.uint64)
                raw.view(np.uint8)[:np.dtype(p.dtype).itemsize] = \
                    np.array([a], p.dtype).view(np.uint8)
                slots[k] = int(raw[0])
        for j, v in enumerate(info.shape_vars):
            slots[len(info.params) + j] = env[v] & (2 ** 64 - 1)
        addr = self.engine.get_function_address(abi.entry_symbol(name))
        assert addr, f"no function {name} in the module"
        fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(addr)
        self._keep = args
        return fn(ctypes.addressof(slots))


def run(mod, name, *args, **kwargs):
    """Compile ``mod``, call ``name``, assert success."""
    status = Compiled(mod, **kwargs)(name, *args)
    assert status == abi.STATUS_OK, f"{name} returned status {status}"
