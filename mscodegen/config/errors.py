"""ConfigError: every mistake in the user's config, with file:line:column positions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One mistake: dotted path (``""`` for the root), 1-based position if known, message."""

    path: str
    line: int | None
    column: int | None
    message: str
    source: str | None = None  # the file (or --set) that wrote the value, when not the config itself

    def format(self, source: str) -> str:
        """``source:line:column: path: message`` (position omitted when unknown)."""
        source = self.source or source
        where = f"{source}:{self.line}:{self.column}" if self.line else source
        return f"{where}: {self.path or '<root>'}: {self.message}"


class ConfigError(Exception):
    """The user's config is wrong; ``problems`` are deduplicated and sorted by position."""

    def __init__(self, problems: list[Problem], source: str) -> None:
        unique = dict.fromkeys(problems)
        self.problems: list[Problem] = sorted(unique, key=_position)
        self.source = source
        super().__init__(self.problems, source)

    def __str__(self) -> str:
        return "\n".join(problem.format(self.source) for problem in self.problems)


def format_path(path: Iterable[str | int]) -> str:
    """``("metrics", 2, "k")`` -> ``"metrics[2].k"``."""
    text = ""
    for element in path:
        text += f"[{element}]" if isinstance(element, int) else f".{element}"
    return text.removeprefix(".")


def _position(problem: Problem) -> tuple[bool, int, int]:
    return (problem.line is None, problem.line or 0, problem.column or 0)
