"""`mscodegen parity --python PATH`: the scripts run with another interpreter (another MindSpore version's).

The stand-in interpreter is a shell script that records its arguments and runs this Python, so the
test sees which processes it started without needing a second MindSpore installed.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from mscodegen.cli import main
from mscodegen.run.msrun import child_env


def _interpreter(directory: Path, body: str) -> Path:
    """An executable `python` in directory/bin running `body` (sh)."""
    path = directory / "bin" / "python"
    path.parent.mkdir(parents=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_missing_interpreter_is_a_usage_error(write_config, tmp_path, capsys):
    config = write_config()
    for extra in ([], ["--resume-at", "2"]):
        code = main(["parity", str(config), "--python", str(tmp_path / "nowhere" / "python"), *extra])
        assert code == 2
        assert "no such executable" in capsys.readouterr().err


def test_an_interpreter_without_mindspore_is_named(write_config, tmp_path, capsys):
    python = _interpreter(tmp_path, "exit 1")  # find_spec('mindspore') is None -> exit 1
    assert main(["parity", str(write_config()), "--python", str(python)]) == 2
    err = capsys.readouterr().err
    assert f"MindSpore is not importable in {python}" in err and "docs/compat.md" in err


def test_msrun_and_its_python_come_from_the_interpreters_directory(tmp_path):
    python = _interpreter(tmp_path, "exit 0")
    (python.parent / "msrun").write_text("")
    env = child_env(tmp_path / "logs", port=1234, base={"PATH": "/usr/bin"}, python=str(python))
    assert env["PATH"].split(os.pathsep) == [str(python.parent), "/usr/bin"]
    assert env["MSRUN"] == str(python.parent / "msrun")


@pytest.mark.slow
def test_parity_runs_the_scripts_and_the_weights_check_with_that_interpreter(write_config, tmp_path, capsys):
    calls = tmp_path / "calls.txt"
    python = _interpreter(tmp_path, f'echo "$@" >> {calls}\nexec {sys.executable} "$@"')
    config = write_config()
    relative = os.path.relpath(python)  # run from another directory than the scripts': made absolute
    assert main(["parity", str(config), "--steps", "2", "--python", relative]) == 0
    assert "identical: 2 steps" in capsys.readouterr().out
    lines = calls.read_text().splitlines()
    assert any("importlib.util" in line for line in lines)  # is MindSpore there?
    assert sum("train_model.py" in line for line in lines) == 1
    assert sum("train_native.py" in line for line in lines) == 1
    assert any(line.startswith("-m mscodegen.run.weights") for line in lines)
