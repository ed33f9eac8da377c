"""Line-based three-way merge (diff3 style) on the :mod:`merge3` package.

``merge3(base, ours, theirs)`` combines the user's edits (``ours``) with a new
generation (``theirs``), both derived from the pristine generated text
(``base``). ``merge3.Merge3`` finds the regions (unchanged, changed on one side,
changed identically on both, conflict); this module only renders them:

- Regions are git's: edits on *adjacent* lines of the two sides (no unchanged
  line between them) are one conflict, as in ``git merge-file --diff3`` (the tests
  compare with it; difflib and git's xdiff may still align unusual edits
  differently). The hand-written merge this replaces resolved adjacent edits
  itself; that was not git's behaviour and is gone.
- The line matcher is difflib's ``SequenceMatcher`` with ``autojunk=False``
  (``Merge3`` takes the matcher class; its default keeps autojunk on): with
  autojunk, difflib ignores "popular" lines (blank lines, ``)``) in files over 200
  lines, so edits separated only by blank lines fuse into one change, which then
  conflicts with an edit the other side made between them. git has no such heuristic.
- Markers are rendered here rather than by ``Merge3.merge_lines``, because that
  method reports no line numbers (the CLI prints ``file:line`` for each conflict)
  and would glue a marker onto a last line that has no newline. Lines keep their
  own endings, so CRLF files and files without a trailing newline come out
  unchanged wherever no conflict occurs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from merge3 import Merge3

_LINE_RE = re.compile(r"(?<=\n)")


@dataclass
class MergeResult:
    """Merged text plus the 1-based line number of each ``<<<<<<<`` marker."""

    text: str
    conflicts: list[int] = field(default_factory=list)


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping line endings (``\\r`` stays in the line)."""
    return [line for line in _LINE_RE.split(text) if line]


def unified_diff(old: str, new: str, name: str) -> str:
    """Unified diff ``a/name`` -> ``b/name``; a missing final newline is marked like git."""
    a, b = split_lines(old), split_lines(new)
    lines = difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", lineterm="\n")
    missing_eol = "\n\\ No newline at end of file\n"
    return "".join(ln if ln.endswith("\n") else ln + missing_eol for ln in lines)


class _LineMatcher:
    """difflib's matcher without the autojunk heuristic (see the module docstring), as Merge3 calls it."""

    def __init__(
        self,
        isjunk: Callable[[str], bool] | None = None,
        a: Sequence[str] = "",
        b: Sequence[str] = "",
        autojunk: bool = False,  # noqa: ARG002 (Merge3's protocol names it; always off here)
    ) -> None:
        self._matcher = difflib.SequenceMatcher(isjunk, a, b, autojunk=False)

    def get_matching_blocks(self) -> list[tuple[int, int, int]]:
        return [(m.a, m.b, m.size) for m in self._matcher.get_matching_blocks()]


def _eol(lines: Sequence[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _terminated(lines: Sequence[str], eol: str) -> list[str]:
    """Lines with a final line ending added so a marker never joins a line."""
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + eol]
    return list(lines)


def merge3(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge ``ours`` and ``theirs`` against their common ancestor ``base``.

    Regions changed by one side only take that side; regions changed identically
    on both sides are taken once; anything else becomes a diff3 conflict block::

        <<<<<<< yours / ||||||| pristine / ======= / >>>>>>> generated
    """
    if ours == theirs or theirs == base:
        return MergeResult(ours)
    if ours == base:
        return MergeResult(theirs)
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    eol = _eol(o or t or b)
    out: list[str] = []
    conflicts: list[int] = []
    merger = Merge3(b, o, t, sequence_matcher=_LineMatcher)
    for group in merger.merge_groups():
        if group[0] != "conflict":
            out.extend(group[1])
            continue
        _, bc, oc, tc = group
        if out and not out[-1].endswith("\n"):
            out[-1] += eol
        conflicts.append(len(out) + 1)
        out.append(f"<<<<<<< yours{eol}")
        out.extend(_terminated(oc, eol))
        out.append(f"||||||| pristine{eol}")
        out.extend(_terminated(bc, eol))
        out.append(f"======={eol}")
        out.extend(_terminated(tc, eol))
        out.append(f">>>>>>> generated{eol}")
    return MergeResult("".join(out), conflicts)
