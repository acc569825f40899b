"""Printing an IRModule as an ``@I.ir_module`` class."""

from pyir.ir import IRModule

from .core import prints


@prints(IRModule)
def print_module(p, mod, class_name="Module"):
    p.dialects.add("I")
    p.module_name = class_name
    p.line("@I.ir_module")
    p.line(f"class {class_name}:")
    p.def_names([name for name, _ in mod.functions])
    with p.indent():
        if not mod.functions:
            p.line("pass")
        for k, (_, func) in enumerate(mod.functions):
            if k:
                p.line()
            with p.scope():
                p.print(func)
