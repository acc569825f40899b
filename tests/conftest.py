"""Shared pytest options and fixtures: golden files with a one-flag update."""

import pathlib

import pytest

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden"


def _verify_after_pass(mod, pass_name):
    from pyir.errors import Error
    from pyir.ir import verify
    try:
        verify(mod)
    except Error as e:
        raise AssertionError(f"IR is ill-formed after pass {pass_name}: {e}") from None


def _verify_after_step(func, primitive):
    from pyir.errors import Error
    from pyir.ir import verify
    try:
        verify(func)
    except Error as e:
        raise AssertionError(f"IR is ill-formed after schedule primitive {primitive}: {e}") \
            from None


def pytest_configure(config):
    from pyir import schedule, transform
    transform.AFTER_EACH_PASS.append(_verify_after_pass)
    schedule.AFTER_EACH_STEP.append(_verify_after_step)


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
