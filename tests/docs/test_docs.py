"""The docs site (mkdocs.yml, docs/) and the README: built strict, every page in the nav, and what they show
is real: excerpts of repository files match the files, `mscodegen` commands use real subcommands and
flags, the generated scripts' flags exist. `make docs` (part of `make test`) builds the site too.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _nav_files(nav: list) -> list[str]:
    files: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        files += _nav_files(value) if isinstance(value, list) else [value]
    return files


class _Loader(yaml.SafeLoader):
    """mkdocs.yml as data; Material's `!!python/name:` tags (none today) would read as plain strings."""


def test_every_page_is_in_the_nav():
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    nav = _nav_files(config["nav"])
    pages = [page.relative_to(DOCS).as_posix() for page in PAGES]
    assert sorted(set(pages) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - set(pages)) == [], "nav entries without a page"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the dev extra installs mkdocs")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_is_short_and_points_into_the_docs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).is_file(), f"README links to a missing page: {link}"


def _blocks(path: Path) -> list[tuple[str, str]]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_excerpts_match_their_files(page):
    """A code block whose first line is `# path/of/a/file` (optionally `(excerpt)`) shows lines of that file."""
    for _, body in _blocks(page):
        first, _, rest = body.partition("\n")
        match = re.fullmatch(r"# (\S+\.(?:py|yaml|sh))(?: \(excerpt\))?", first.strip())
        if not match or not (REPO / match.group(1)).is_file():
            continue
        lines = set((REPO / match.group(1)).read_text(encoding="utf-8").splitlines())
        shown = [line for line in rest.splitlines() if line.strip() and line.strip() != "..."]
        missing = [line for line in shown if line not in lines]
        assert missing == [], f"{page.name}: lines not in {match.group(1)} (regenerated?): {missing}"


def _commands(page: Path) -> list[list[str]]:
    """The `mscodegen ...` command lines of a page's code blocks (`$ ` prompts and `\\` continuations too)."""
    commands = []
    for lang, body in _blocks(page):
        if lang not in ("bash", "sh", "console", "text", ""):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.removeprefix("$ ").strip()
            if line.startswith("mscodegen "):
                commands.append(shlex.split(line, comments=True))
    return commands


@functools.cache
def _help(command: str) -> str:
    args = [sys.executable, "-m", "mscodegen", *([command] if command else []), "--help"]
    return subprocess.run(args, capture_output=True, text=True, check=True, timeout=60).stdout


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_commands_use_real_subcommands_and_flags(page):
    for argv in _commands(page):
        command = argv[1]
        assert re.search(rf"^\s+{re.escape(command)}\b", _help(""), re.MULTILINE), f"{page.name}: {argv}"
        own = argv[2 : argv.index("--")] if "--" in argv else argv[2:]  # record passes the rest on
        for flag in (a.split("=")[0] for a in own if a.startswith("--")):
            assert re.search(rf"{re.escape(flag)}\b", _help(command)), f"{page.name}: {command} has no {flag}"


@functools.cache
def _script_flags() -> set[str]:
    flags: set[str] = set()
    for script in (REPO / "generated").glob("*/train_*.py"):
        flags |= set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', script.read_text(encoding="utf-8")))
    return flags


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_script_flags_exist(page):
    """`python train_native.py --flag` in the docs: a flag some generated script defines."""
    assert "--fast-dev-run" in _script_flags()
    for _, body in _blocks(page):
        for line in body.splitlines():
            if line.startswith("mscodegen record "):  # its own options, then -- and the script's
                line = "train_native.py " + line.partition(" -- ")[2] if " -- " in line else ""
            found = re.search(r"train_(?:model|native)\.py((?:\s+[^#\s]+)*)", line)
            if found:
                used = {token for token in found.group(1).split() if token.startswith("--")}
                assert used <= _script_flags(), f"{page.name}: {sorted(used - _script_flags())} in {line!r}"
