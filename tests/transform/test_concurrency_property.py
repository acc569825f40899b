"""`pyir.transform.concurrency.statement_conflict` against brute force: random loop nests
of statements with affine indices (constant and symbolic coefficients and extents, a
fused loop's ``// d`` and ``% d``, guards) are asked whether the outer loop's iterations
may run at the same time; wherever the answer is yes, enumerating every iteration (for
small values of the shape variables) must find no element that one iteration writes and
another touches. A wrong yes is a race that no check would catch."""

import itertools

from hypothesis import strategies as st

from pyir.ir import For
from pyir.script import from_source
from pyir.transform.concurrency import statement_conflict

from property_profiles import profiles

LOOPS = ("i", "j", "k")
SIZES = range(1, 5)   # the values of n and m enumerated


@st.composite
def _term(draw, loops):
    var = draw(st.sampled_from(loops))
    atom = draw(st.sampled_from([var, f"{var} // 2", f"{var} % 2", f"{var} // 3",
                                 f"{var} % 3"]))
    coeff = draw(st.sampled_from(["1", "2", "3", "4", "8", "-1", "-2", "m", "n", "2 * m"]))
    return f"{coeff} * ({atom})"


@st.composite
def _index(draw, loops):
    terms = draw(st.lists(_term(loops), min_size=0, max_size=3))
    if draw(st.booleans()):   # the outer loop's own term, most races' and most proofs' part
        terms.insert(0, draw(st.sampled_from(["i", "2 * i", "m * i", "(m + 1) * i",
                                              "n * m * i", "4 * (i // 2)"])))
    const = draw(st.sampled_from(["0", "1", "2", "-1", "m", "n - 1"]))
    return " + ".join(terms + [const])


@st.composite
def _nest(draw):
    depth = draw(st.integers(1, 3))
    loops = LOOPS[:depth]
    extents = [draw(st.sampled_from(["1", "2", "3", "4", "n", "m", "n + 1", "m * 2"]))
               for _ in loops]
    accesses = []
    shared = draw(st.booleans())   # one index for every access (an update in place)
    for _ in range(draw(st.integers(1, 3))):
        buf = draw(st.sampled_from(["A", "B"]))
        dims = 1 if buf == "A" else 2
        index = accesses[0][1] if shared and accesses and len(accesses[0][1]) == dims \
            else tuple(draw(_index(loops)) for _ in range(dims))
        accesses.append((buf, index, draw(st.booleans())))
    if not any(w for _, _, w in accesses):
        accesses[0] = (accesses[0][0], accesses[0][1], True)
    guard = draw(st.sampled_from([None, f"{loops[-1]} < 2", f"{loops[0]} * 2 + {loops[-1]} < n"]))
    return loops, extents, accesses, guard


def _script(loops, extents, accesses, guard):
    lines = ["from pyir.script import tensor as T", "", "@T.prim_func",
             'def f(A: T.Buffer(("L",), "float32"), B: T.Buffer(("L", "L"), "float32"), '
             'X: T.Buffer(("n", "m"), "float32")):']
    indent = "    "
    for var, extent in zip(loops, extents):
        lines.append(f"{indent}for {var} in range({extent}):")
        indent += "    "
    if guard is not None:
        lines.append(f"{indent}if {guard}:")
        indent += "    "
    for buf, index, is_write in accesses:
        where = f"{buf}[{', '.join(index)}]"
        lines.append(f"{indent}{where} = T.float32(1)" if is_write
                     else f"{indent}X[0, 0] = {where}")
    return "\n".join(lines) + "\n"


def _race(loops, extents, accesses, guard):
    """A (values, element) where two iterations of the outer loop meet, one writing; None."""
    for n, m in itertools.product(SIZES, SIZES):
        names = {"n": n, "m": m}
        touched = {}   # element -> {outer value: whether it writes there}

        def points(depth, env):
            if depth == len(loops):
                yield dict(env)
                return
            for v in range(eval(extents[depth], {}, {**names, **env})):
                env[loops[depth]] = v
                yield from points(depth + 1, env)
            env.pop(loops[depth], None)

        for env in points(0, {}):
            scope = {**names, **env}
            if guard is not None and not eval(guard, {}, scope):
                continue
            for buf, index, is_write in accesses:
                element = (buf,) + tuple(eval(i, {}, scope) for i in index)
                seen = touched.setdefault(element, {})
                seen[env["i"]] = seen.get(env["i"], False) or is_write
        for element, by in touched.items():
            if len(by) > 1 and any(by.values()):
                return names, element, sorted(by)
    return None


def _check(data):
    nest = data.draw(_nest())
    func = from_source(_script(*nest))
    assert isinstance(func.body, For)
    if statement_conflict(func.body, []) is None:
        race = _race(*nest)
        assert race is None, (f"accepted, but {race[1]} is reached by iterations {race[2]} "
                              f"at {race[0]}:\n{_script(*nest)}")


test_statement_conflict_never_accepts_a_race, test_statement_conflict_never_accepts_a_race_full \
    = profiles(_check, 400, 4000)
