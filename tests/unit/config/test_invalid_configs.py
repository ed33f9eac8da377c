"""The invalid-config corpus: every file in tests/invalid/ must be rejected with exactly its problems.

Each case is a small YAML file whose leading comment block says what is wrong and what to expect:

    # a misspelled key inside data.train
    # expect: 9:5 data.train: unknown key 'batchsize'; did you mean 'batch_size'?

One `expect:` line per problem, as `line:column key.path: message` (`<root>` for the whole file);
`{dir}` stands for the directory of the case. Both `mscodegen validate` and `mscodegen new` must
exit 2, print exactly these problems (no more), and write nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mscodegen.cli import main

from conftest import REPO

CASES_DIR = REPO / "tests" / "invalid"
CASES = sorted(CASES_DIR.rglob("*.yaml"))
MIN_CASES = 30
EXPECT = re.compile(r"^# expect: (.*)$")
POSITION = re.compile(r"^(\d+:\d+): ")


def expected_problems(case: Path) -> list[str]:
    lines = case.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    found = [m.group(1) for line in header if (m := EXPECT.match(line))]
    return sorted(line.replace("{dir}", str(case.parent)) for line in found)


def reported_problems(stderr: str, source: Path) -> list[str]:
    """The problems printed as `source:line:col: path: message`, as `line:col path: message`."""
    prefix = f"{source}:"
    return sorted(
        POSITION.sub(r"\1 ", line.removeprefix(prefix))
        for line in stderr.splitlines()
        if line.startswith(prefix)
    )


def tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} cases in {CASES_DIR}"


def test_every_case_states_its_expectations() -> None:
    missing = [str(case.relative_to(CASES_DIR)) for case in CASES if not expected_problems(case)]
    assert not missing, f"cases without an '# expect:' line: {missing}"


@pytest.mark.parametrize("case", CASES, ids=[str(c.relative_to(CASES_DIR)) for c in CASES])
def test_validate_reports_exactly_the_expected_problems(
    case: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(case.parent)
    assert main(["validate", str(case)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert reported_problems(err, case) == expected_problems(case)
    assert tree(case.parent) == before


@pytest.mark.parametrize("case", CASES, ids=[str(c.relative_to(CASES_DIR)) for c in CASES])
def test_new_writes_nothing(
    case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # so a default out dir (generated/...) would also land here
    before = tree(case.parent)
    out_dir = tmp_path / "out"
    assert main(["new", str(case), "--out", str(out_dir)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    expected = expected_problems(case)
    assert reported_problems(err, case) == expected
    count = len(expected)
    assert err.splitlines()[-1] == (
        f"{count} problem{'s' if count != 1 else ''} in {case}; nothing was written."
    )
    assert not out_dir.exists()
    assert tree(tmp_path) == []
    assert tree(case.parent) == before
