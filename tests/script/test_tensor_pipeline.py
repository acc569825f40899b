"""The printer keeps up with lowered IR: after every pass of `pyir.transform.PIPELINE`,
each corpus function still verifies, prints and parses back to the same IR."""

import pytest
from tensor_corpus import CASES

from pyir import transform
from pyir.ir import IRModule, assert_structural_equal, verify
from pyir.script import from_source

@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_after_each_pass(name):
    func = CASES[name]()
    mod = func if isinstance(func, IRModule) else IRModule.from_dict({func.name: func})
    for lower in transform.PIPELINE:
        mod = lower(mod)
        verify(mod)
        text = mod.script()
        again = from_source(text)
        assert_structural_equal(mod, again)
        assert again.script() == text, f"text changed after {lower.__name__}"
