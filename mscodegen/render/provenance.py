"""Provenance: which YAML keys produced which lines of a generated script (`mscodegen explain`).

The templates bracket what a key produces with marker comments (:data:`BEGIN` KEYS ...
:data:`END`). `render` strips them (:func:`strip_markers`), so `mscodegen new` writes no marker.
`explain` renders with provenance on: the marked text goes through black like any script, and
:func:`strip_markers` removes the markers while recording, for every remaining line, the keys
of the regions around it. black may lay a marked text out slightly differently from the plain one
(a comment can keep a block from joining), so the keys are carried over to the real script's lines
with :func:`carry_over` (difflib: equal lines only) rather than by line number.

Nothing here parses the human-readable comments of the scripts: the keys come from the templates'
``keys`` calls, which print the plan's own key paths.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Sequence
from dataclasses import dataclass

BEGIN = "# @mscodegen-keys "
END = "# @mscodegen-end"

LineKeys = list[frozenset[str]]  # index i: the keys behind line i + 1


def strip_markers(text: str) -> tuple[str, LineKeys]:
    """The text without marker lines, and the keys of the regions open around each kept line."""
    kept: list[str] = []
    line_keys: LineKeys = []
    stack: list[frozenset[str]] = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            names = stripped[len(BEGIN) :].split(",")
            stack.append(frozenset(name.strip() for name in names if name.strip()))
            continue
        if stripped == END:
            if not stack:
                raise ValueError("provenance marker: an end without a begin")
            stack.pop()
            continue
        kept.append(line)
        line_keys.append(frozenset().union(*stack) if stack else frozenset())
    if stack:
        raise ValueError("provenance marker: a begin without an end")
    return "".join(kept), line_keys


def carry_over(marked_lines: Sequence[str], keys: LineKeys, real_lines: Sequence[str]) -> LineKeys:
    """Keys for `real_lines`, taken from the equal lines of `marked_lines` (the stripped text)."""
    out: LineKeys = [frozenset() for _ in real_lines]
    matcher = difflib.SequenceMatcher(a=list(marked_lines), b=list(real_lines), autojunk=False)
    for tag, a0, a1, b0, _b1 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(a1 - a0):
                out[b0 + offset] = keys[a0 + offset]
    return out


def lines_of(line_keys: LineKeys, wanted: str) -> list[int]:
    """1-based numbers of the lines that `wanted` produced, or a key below it (`optimizer` ->
    `optimizer.lr`, `eval.metrics[0]`)."""
    below = (wanted + ".", wanted + "[")
    return [
        i + 1 for i, keys in enumerate(line_keys) if any(k == wanted or k.startswith(below) for k in keys)
    ]


@dataclass(frozen=True, slots=True)
class Explained:
    """What one key produced in one script."""

    script: str
    produced: list[int]  # lines the key's templates printed
    used: list[int]  # other lines that read a constant the key defined


def explain_key(script: str, source: str, line_keys: LineKeys, wanted: str) -> Explained:
    produced = lines_of(line_keys, wanted)
    tree = ast.parse(source)
    defined = {  # module-level names (constants) assigned on those lines: their uses are shown too
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign) and node.lineno in produced
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    used = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in defined and isinstance(node.ctx, ast.Load)
    }
    return Explained(script, produced, sorted(used - set(produced)))


def keys_at(line_keys: LineKeys, line: int) -> list[str]:
    """The keys behind 1-based `line`, most specific first."""
    if not 1 <= line <= len(line_keys):
        raise IndexError(line)
    return sorted(line_keys[line - 1], key=lambda k: (-k.count("."), k))
