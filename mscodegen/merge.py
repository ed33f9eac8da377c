"""Line-based three-way merge (diff3 style) built on :mod:`difflib`.

``merge3(base, ours, theirs)`` combines the user's edits (``ours``) with a new
generation (``theirs``), both derived from the pristine generated text
(``base``). Lines keep their own endings, so CRLF files and files without a
trailing newline come out unchanged wherever no conflict occurs.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

__all__ = ["MergeResult", "merge3", "split_lines", "unified_diff"]

_LINE_RE = re.compile(r"(?<=\n)")


@dataclass
class MergeResult:
    """Merged text plus the 1-based line number of each ``<<<<<<<`` marker."""

    text: str
    conflicts: list[int] = field(default_factory=list)

    @property
    def has_conflicts(self) -> bool:
        """True if the text contains at least one conflict block."""
        return bool(self.conflicts)


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping line endings (``\\r`` stays in the line)."""
    return [line for line in _LINE_RE.split(text) if line]


def unified_diff(old: str, new: str, name: str) -> str:
    """Unified diff ``a/name`` -> ``b/name``; a missing final newline is marked like git."""
    a, b = split_lines(old), split_lines(new)
    lines = difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", lineterm="\n")
    missing_eol = "\n\\ No newline at end of file\n"
    return "".join(ln if ln.endswith("\n") else ln + missing_eol for ln in lines)


# A sync region: base[b0:b1] == ours[o0:o1] == theirs[t0:t1].
_Sync = tuple[int, int, int, int, int, int]
# A change: base[i1:i2] is replaced by the given lines.
_Hunk = tuple[int, int, list[str]]


def _sync_regions(base: list[str], ours: list[str], theirs: list[str]) -> list[_Sync]:
    """Base ranges left unchanged by both sides, with their positions in each side."""
    mo = difflib.SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    mt = difflib.SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    regions: list[_Sync] = []
    i = j = 0
    while i < len(mo) and j < len(mt):
        ob, oo, olen = mo[i]
        tb, tt, tlen = mt[j]
        lo, hi = max(ob, tb), min(ob + olen, tb + tlen)
        if lo < hi:
            o0, t0 = oo + lo - ob, tt + lo - tb
            regions.append((lo, hi, o0, o0 + hi - lo, t0, t0 + hi - lo))
        if ob + olen < tb + tlen:
            i += 1
        else:
            j += 1
    n = len(base), len(ours), len(theirs)
    regions.append((n[0], n[0], n[1], n[1], n[2], n[2]))
    return regions


def _hunks(base: list[str], side: list[str]) -> list[_Hunk]:
    """Changed base ranges ``[i1, i2)`` of ``side`` with their replacement lines.

    A same-length replacement is split into one hunk per changed line, so an
    edit of several consecutive lines can combine with the other side's edits.
    """
    hunks: list[_Hunk] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, base, side, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            pairs = zip(range(i1, i2), side[j1:j2], strict=True)
            hunks.extend((i, i + 1, [line]) for i, line in pairs if base[i] != line)
        elif tag != "equal":
            hunks.append((i1, i2, side[j1:j2]))
    return hunks


def _clash(a: _Hunk, b: _Hunk) -> bool:
    """Hunks overlap, or an insertion touches the other hunk (order ambiguous)."""
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return lo < hi or (lo == hi and (a[0] == a[1] or b[0] == b[1]))


def _resolve(bc: list[str], oc: list[str], tc: list[str]) -> list[str] | None:
    """Apply both sides' edits to ``bc`` if they touch distinct lines, else None."""
    ho = _hunks(bc, oc)
    ht = [h for h in _hunks(bc, tc) if h not in ho]  # identical edits count once
    if any(_clash(a, b) for a in ho for b in ht):
        return None
    out: list[str] = []
    pos = 0
    for i1, i2, repl in sorted(ho + ht, key=lambda h: (h[0], h[1])):
        out.extend(bc[pos:i1])
        out.extend(repl)
        pos = i2
    out.extend(bc[pos:])
    return out


def _eol(lines: list[str]) -> str:
    """Line ending used for markers: CRLF if the first line uses it, else LF."""
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _terminated(lines: list[str], eol: str) -> list[str]:
    """Lines with a final line ending added so a marker never joins a line."""
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + eol]
    return lines


def merge3(
    base: str,
    ours: str,
    theirs: str,
    *,
    labels: tuple[str, str, str] = ("yours", "pristine", "generated"),
    resolve_adjacent: bool = True,
) -> MergeResult:
    """Merge ``ours`` and ``theirs`` against their common ancestor ``base``.

    Regions changed by one side only take that side; regions changed identically
    on both sides are taken once; anything else becomes a diff3 conflict block::

        <<<<<<< yours / ||||||| pristine / ======= / >>>>>>> generated

    With ``resolve_adjacent`` (default), a chunk where both sides edited
    *different* lines with no unchanged line between them (e.g. ``epochs`` and
    ``lr`` on consecutive lines) is merged instead of conflicting, unless an
    insertion touches the other side's change. ``False`` gives classic diff3.
    """
    if ours == theirs or theirs == base:
        return MergeResult(ours)
    if ours == base:
        return MergeResult(theirs)
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    eol = _eol(o or t or b)
    out: list[str] = []
    conflicts: list[int] = []
    bi = oi = ti = 0
    for b0, b1, o0, o1, t0, t1 in _sync_regions(b, o, t):
        bc, oc, tc = b[bi:b0], o[oi:o0], t[ti:t0]
        if oc == bc:
            out.extend(tc)
        elif tc == bc or oc == tc:
            out.extend(oc)
        elif resolve_adjacent and (both := _resolve(bc, oc, tc)) is not None:
            out.extend(both)
        else:
            if out and not out[-1].endswith("\n"):
                out[-1] += eol
            conflicts.append(len(out) + 1)
            out.append(f"<<<<<<< {labels[0]}{eol}")
            out.extend(_terminated(oc, eol))
            out.append(f"||||||| {labels[1]}{eol}")
            out.extend(_terminated(bc, eol))
            out.append(f"======={eol}")
            out.extend(_terminated(tc, eol))
            out.append(f">>>>>>> {labels[2]}{eol}")
        out.extend(b[b0:b1])
        bi, oi, ti = b1, o1, t1
    return MergeResult("".join(out), conflicts)
