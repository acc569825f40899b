"""Shared pytest options and fixtures: golden files with a one-flag update, and C libraries
built with the system C compiler."""

import ctypes
import pathlib
import shutil
import subprocess

import pytest

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"


#: Whether `_verify_after_pass` and `_verify_after_step` print and parse back what each
#: pass and schedule step made: off in a test marked ``ir_without_script`` (see
#: `pytest_configure`).
_ROUND_TRIP = {"on": True}


def _round_trip(node, after):
    """The print -> parse round trip: `pyir.script.from_source` of ``node.script()``
    structurally equal to ``node`` (``after`` says after what, for the message)."""
    from pyir.errors import Error
    from pyir.ir import assert_structural_equal
    from pyir.script import from_source
    if _ROUND_TRIP["on"]:
        try:
            assert_structural_equal(from_source(node.script()), node)
        except Error as e:
            raise AssertionError(f"the IR after {after} does not read back from its script: "
                                 f"{e}") from None


def _verify_after_pass(mod, pass_name):
    """`pyir.ir.verify`, the print -> parse round trip (`_round_trip`), and while blocks
    remain (after the default schedule) that each declares what its body accesses and binds
    its iterators within their domains."""
    from pyir.errors import Error
    from pyir.ir import PrimFunc, verify
    from pyir.transform.block_checks import block_fault
    try:
        verify(mod)
    except Error as e:
        raise AssertionError(f"IR is ill-formed after pass {pass_name}: {e}") from None
    _round_trip(mod, f"pass {pass_name}")
    if pass_name == "default_schedule":
        for name, func in mod.functions:
            wrong = isinstance(func, PrimFunc) and block_fault(func)
            if wrong:
                raise AssertionError(f"after pass {pass_name}, prim function {name}: {wrong}")


def _verify_after_step(func, primitive):
    """`pyir.ir.verify`, the print -> parse round trip (`_round_trip`), and that every block
    declares what its body accesses and binds its iterators within their domains (what the
    next step's legality checks trust)."""
    from pyir.errors import Error
    from pyir.ir import verify
    from pyir.transform.block_checks import block_fault
    try:
        verify(func)
    except Error as e:
        raise AssertionError(f"IR is ill-formed after schedule primitive {primitive}: {e}") \
            from None
    _round_trip(func, f"schedule primitive {primitive}")
    wrong = block_fault(func)
    if wrong:
        raise AssertionError(f"after schedule primitive {primitive}: {wrong}")


def pytest_configure(config):
    from pyir import schedule, transform
    transform.AFTER_EACH_PASS.append(_verify_after_pass)
    schedule.AFTER_EACH_STEP.append(_verify_after_step)
    config.addinivalue_line("markers", "ir_without_script: the test builds IR that script "
                            "text cannot hold (made by hand to be refused later, or too deep "
                            "to print), so the passes' print -> parse round trip is skipped")


@pytest.fixture(autouse=True)
def _round_trip_unless_marked(request):
    _ROUND_TRIP["on"] = request.node.get_closest_marker("ir_without_script") is None
    yield
    _ROUND_TRIP["on"] = True


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files with the current output instead of comparing")


@pytest.fixture
def golden(request):
    """``golden(name, text)``: compare ``text`` with tests/golden/<name>, or rewrite it
    under --update-golden."""
    update = request.config.getoption("--update-golden")

    def check(name, text):
        path = GOLDEN_DIR / name
        if update or not path.exists():
            if not update:
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        expected = path.read_text()
        assert text == expected, f"output differs from golden file {path}"

    return check


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    """``c_library(source)``: ``source`` compiled with the system C compiler into a shared
    library in a fresh folder, loaded with ctypes (the test is skipped without ``cc``)."""
    def build(source):
        cc = shutil.which("cc")
        if cc is None:
            pytest.skip("no system C compiler")
        d = tmp_path_factory.mktemp("clib")
        (d / "k.c").write_text(source)
        subprocess.run([cc, "-shared", "-fPIC", "-O2", str(d / "k.c"), "-o", str(d / "libk.so")],
                       check=True)
        return ctypes.CDLL(str(d / "libk.so"))
    return build
