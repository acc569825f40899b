"""The README's example and `python -m pyir` run as written, and the README's first lines
are the two commands."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).parents[2] / "README.md"


def test_readme_example_runs(tmp_path):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "def add(" in proc.stdout


def test_readme_starts_with_the_two_commands():
    lines = README.read_text().splitlines()
    assert lines[3].startswith("pip install -e . && python -m pyir")
    assert lines[4].startswith('pip install -e ".[test]" && python -m pytest')


def test_demo_runs_and_checks_against_numpy():
    proc = subprocess.run([sys.executable, "-m", "pyir"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    for line in ("from_source(Module.script()) is structurally equal to Module",
                 "the scheduled matmul matches numpy", "lib['main'](x, w) matches numpy"):
        assert line in proc.stdout
