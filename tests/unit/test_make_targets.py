"""Every make target that runs pytest selects tests: pytest exits 5 when it collects none, and make fails."""

from __future__ import annotations

import re
import shlex

import pytest

from conftest import REPO

# `$(BIN)/pytest ARGS` in a target's recipe; -n $(JOBS) and --dist (xdist) do not change what is selected
PYTEST_LINES = re.findall(r"^\t\$\(BIN\)/pytest (.*)$", (REPO / "Makefile").read_text(), re.MULTILINE)


class _Markers(dict):
    """A test's marker names for eval() of a -m expression (and, or, not, names): unknown names are False."""

    def __missing__(self, key: str) -> bool:
        return False


def test_the_makefile_runs_pytest():
    assert len(PYTEST_LINES) >= 2, PYTEST_LINES  # test and test-fast


@pytest.mark.parametrize("line", PYTEST_LINES)
def test_each_pytest_target_selects_tests(line: str, request: pytest.FixtureRequest):
    """Judged on this session's tests (all of them under `make test`): the target's -m expression must
    select some, and it names no paths (testpaths in pyproject.toml decides)."""
    args = shlex.split(re.sub(r"-n \$\(JOBS\)|--dist \w+", "", line))
    expression = args[args.index("-m") + 1] if "-m" in args else "True"
    assert [a for a in args if not a.startswith("-") and a != expression] == [], line
    selected = [
        item
        for item in request.session.items
        if eval(expression, {}, _Markers({m.name: True for m in item.iter_markers()}))
    ]
    assert selected, f"`pytest {line}` would collect no test (pytest exits 5)"
