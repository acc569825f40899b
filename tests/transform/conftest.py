"""Lets the transform tests share the hand-built kernels of tests/codegen."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "codegen"))
