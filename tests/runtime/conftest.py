"""Fixtures of the runtime tests: an Executable JIT-compiled from the hand-written kernels."""

import native_kernels
import pytest


@pytest.fixture(scope="session")
def lib():
    from pyir.runtime import Executable
    return Executable.jit(native_kernels.IR, native_kernels.INFOS, "llvm")
