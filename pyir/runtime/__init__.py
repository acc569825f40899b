"""pyir.runtime: running compiled code — the JIT engine, `Executable` with its argument
checks, benchmarks, export to shared objects and loading them back, the compile cache."""

from .benchmark import BenchmarkResult
from .executable import Executable
from .function import PrimFunction
from .loader import load_module

__all__ = ["BenchmarkResult", "Executable", "PrimFunction", "load_module"]
