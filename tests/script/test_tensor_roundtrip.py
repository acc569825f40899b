"""Every corpus prim function prints, parses back to the same IR, prints the same text
again, passes the verifier, and matches its golden file."""

import pytest

from pyir.ir import assert_structural_equal, verify
from pyir.script import from_source

from tensor_corpus import CASES


@pytest.mark.parametrize("name", sorted(CASES))
def test_roundtrip(name, golden):
    func = CASES[name]()
    verify(func)
    text = func.script()
    again = from_source(text, filename=f"<{name}>")
    assert_structural_equal(func, again)
    assert again.script() == text
    golden(f"script/tensor/{name}.py", text)


def test_corpus_size():
    assert len(CASES) >= 22
