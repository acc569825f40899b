"""``build_as``: the graph tests run on a freshly built executable and on the same
executable exported to a shared object and loaded back (the plans travel as metadata)."""

import pytest

import pyir


@pytest.fixture(scope="module", params=["jit", "exported"])
def build_as(request, tmp_path_factory):
    def build(mod):
        lib = pyir.build(mod)
        if request.param == "jit":
            return lib
        path = tmp_path_factory.mktemp("exported") / "graph.so"
        lib.export_library(path)
        return pyir.load_module(path)
    return build
