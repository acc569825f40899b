"""What the thread pool and a library loaded without llvmlite share: the pool's entry
symbol and the thread count ``PYIR_NUM_THREADS`` asks for."""

import os
import re

from ..errors import ArgumentValueError

ENTRY_SYMBOL = "pyir_parallel_for"
ENV_VAR = "PYIR_NUM_THREADS"
MAX_THREADS = 1024


def configured_threads():
    """The thread count ``PYIR_NUM_THREADS`` asks for, or None when it is unset or empty.

    Raises `pyir.ArgumentValueError` for anything but an integer from 1 to MAX_THREADS
    (the native code would silently fall back to the core count).
    """
    value = os.environ.get(ENV_VAR, "")
    if not value:
        return None
    if not re.fullmatch(r"[0-9]+", value) or not 1 <= int(value) <= MAX_THREADS:
        raise ArgumentValueError(f"{ENV_VAR} must be an integer from 1 to {MAX_THREADS}, "
                                 f"got {value!r}")
    return int(value)
