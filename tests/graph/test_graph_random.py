"""Random graph functions of high-level operators (`random_graphs`): legalized, built and
run for several values of the symbolic dimensions (0 included), they compute what numpy
computes from the same description; an argument of a wrong rank, dtype or dimension is an
ArgumentError (a TypeError or ValueError) naming it.

The default profile runs 25 functions (deterministically); PYIR_FULL_TESTS=1 selects the
slow full profile of 400."""

import re

import numpy as np
import pytest
from hypothesis import strategies as st

import pyir
from pyir.script import from_source

from property_profiles import profiles
from random_graphs import SYMBOL_VALUES, random_graph, random_inputs, tolerances, \
    wrong_arguments


def check_random_graph(data):
    graph = random_graph(lambda options, label: data.draw(st.sampled_from(list(options)),
                                                          label=label))
    lib = pyir.build(from_source(graph.text))
    main = lib["main"]
    for k, values in enumerate(SYMBOL_VALUES):
        arrays = random_inputs(graph, dict(zip("nm", values)), seed=k)
        args = [arrays[p[0]] for p in graph.params]
        try:
            with np.errstate(all="ignore"):
                want = graph.reference(arrays)
        except ValueError:
            # numpy's max / min of nothing is an error; pyir's is the reduction's identity
            # (-inf, the lowest value...), which later operators may spread: it runs, or is
            # refused by an entry condition, but has nothing to be compared with
            try:
                main(*args)
            except pyir.Error as e:
                assert "requires" in str(e)
            continue
        got = main(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        rtol, atol = tolerances(graph.dtype, want.astype("float64"))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    arrays = random_inputs(graph, {"n": 3, "m": 4})
    for name, args in wrong_arguments(graph, arrays):
        with pytest.raises((TypeError, ValueError), match=rf"\b{re.escape(name)}\b") as info:
            main(*args)
        assert isinstance(info.value, pyir.Error)


test_random_graphs_match_numpy, test_random_graphs_match_numpy_full = profiles(
    check_random_graph, 25, 400)
