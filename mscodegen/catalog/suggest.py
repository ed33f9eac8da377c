"""The one "did you mean" matcher every error message uses (schema keys, names, ops, CLI keys)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_WORD = 100
# Units a key counts in: `every_steps` is not a misspelt `every_epochs`, it means another thing.
UNITS = frozenset({"step", "epoch", "batch", "sample", "second", "minute"})


def _units(word: str) -> set[str]:
    return {part.lower().removesuffix("s") for part in word.split("_")} & UNITS


def _same_meaning(word: str, choice: str) -> bool:
    """False when both name a unit and the units differ (every_steps, every_epochs)."""
    a, b = _units(word), _units(choice)
    return not (a and b and a != b)


def close_matches(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """Up to `n` choices most like `word`: a case-insensitive equal first, then the one it abbreviates
    (`acc` for accuracy, from 3 letters on), then difflib's closest (as typed, then ignoring case),
    without repeats, and never one counting in another unit (`every_steps` is not `every_epochs`).
    A word far longer than any name matches nothing (difflib's cost grows with its
    length)."""
    if len(word) > MAX_WORD:
        return []
    options = sorted(set(choices))
    lower = {c.lower(): c for c in options}
    found = [c for c in options if c.lower() == word.lower()]
    if len(word) >= 3:
        found += [c for c in options if c.lower().startswith(word.lower())][:1]
    found += difflib.get_close_matches(word, options, n=n)
    found += [lower[c] for c in difflib.get_close_matches(word.lower(), list(lower), n=n)]
    unique = [c for c in dict.fromkeys(found) if _same_meaning(word, c)]
    return unique[:n]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """ "; did you mean 'x'?" for the closest choice, or "" when nothing is close."""
    match = close_matches(word, choices)
    return f"; did you mean {match[0]!r}?" if match else ""
