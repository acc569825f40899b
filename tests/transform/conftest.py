"""Lets the transform tests share the hand-built kernels of tests/codegen and the
scheduled kernels of tests/schedule."""

import pathlib
import sys

for folder in ("codegen", "schedule"):
    sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / folder))
