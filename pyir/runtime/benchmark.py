"""Timing of calls: `time_calls` and the `BenchmarkResult` it returns."""

import numbers
import statistics
import time
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentValueError


@dataclass(frozen=True)
class BenchmarkResult:
    """Seconds per call: ``runs`` holds one mean per repeat, each over ``number`` calls."""

    name: str
    runs: tuple
    number: int

    @property
    def median(self):
        return statistics.median(self.runs)

    @property
    def min(self):
        return min(self.runs)

    @property
    def max(self):
        return max(self.runs)

    @property
    def iqr(self):
        """Interquartile range (seconds); 0 with fewer than two runs."""
        if len(self.runs) < 2:
            return 0.0
        q = statistics.quantiles(self.runs, n=4, method="inclusive")
        return q[2] - q[0]

    def __repr__(self):
        return (f"BenchmarkResult({self.name}: median {_fmt(self.median)}, min "
                f"{_fmt(self.min)}, IQR {_fmt(self.iqr)}, {len(self.runs)} runs x "
                f"{self.number} calls)")

    def table(self):
        """A rich Table of the statistics."""
        from rich.table import Table
        t = Table(title=f"benchmark of {self.name}")
        for col in ("median", "min", "max", "IQR", "runs", "calls/run"):
            t.add_column(col, justify="right")
        t.add_row(_fmt(self.median), _fmt(self.min), _fmt(self.max), _fmt(self.iqr),
                  str(len(self.runs)), str(self.number))
        return t

    def _repr_html_(self):
        from rich.console import Console
        console = Console(record=True, width=100, file=_Discard(), force_jupyter=False)
        console.print(self.table())
        return console.export_html(inline_styles=True, code_format="<pre>{code}</pre>")


class _Discard:
    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def time_calls(name, call, number=None, repeat=10, min_run_seconds=0.02):
    """Time ``call()`` (a prepared native call, or any Python callable for comparisons).

    ``number`` calls make one run; when None it is chosen so a run lasts at least
    ``min_run_seconds``. Returns a `BenchmarkResult` of ``repeat`` runs.
    """
    for what, value in (("number", number), ("repeat", repeat)):
        if value is not None and (not isinstance(value, numbers.Integral)
                                  or isinstance(value, (bool, np.bool_)) or value < 1):
            raise ArgumentValueError(f"benchmark of {name}: {what} must be a whole number, "
                                     f"at least 1, got {value!r}")
    number, repeat = (None if v is None else int(v) for v in (number, repeat))
    if number is None:
        number = 1
        while True:
            start = time.perf_counter()
            for _ in range(number):
                call()
            elapsed = time.perf_counter() - start
            if elapsed >= min_run_seconds or number >= 1 << 24:
                break
            number = max(number * 2, int(number * min_run_seconds / max(elapsed, 1e-9)))
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            call()
        runs.append((time.perf_counter() - start) / number)
    return BenchmarkResult(name, tuple(runs), number)
