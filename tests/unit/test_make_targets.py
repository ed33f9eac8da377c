"""Every make target that runs pytest selects tests: pytest exits 5 when it collects none, and make fails."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from conftest import REPO

# `$(BIN)/pytest ARGS` in a target's recipe; -n $(JOBS) (xdist) does not change what is selected
PYTEST_LINES = re.findall(r"^\t\$\(BIN\)/pytest (.*)$", (REPO / "Makefile").read_text(), re.MULTILINE)


def test_the_makefile_runs_pytest():
    assert len(PYTEST_LINES) >= 2, PYTEST_LINES  # test and test-fast


@pytest.mark.slow  # pytest's collection of the whole suite, once per target (seconds each)
@pytest.mark.parametrize("line", PYTEST_LINES)
def test_each_pytest_target_collects_tests(line: str):
    args = [a for a in shlex.split(line.replace("-n $(JOBS)", "")) if "$(" not in a]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = re.search(r"^(\d+)(?:/\d+)? tests? collected", done.stdout, re.MULTILINE)
    assert collected and int(collected.group(1)) > 0, done.stdout[-2000:]
