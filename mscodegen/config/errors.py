"""ConfigError: every mistake in the user's config, with file:line:column positions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# A key is echoed at most this long, escaped: a file that is not a config (an `extends` or a lock's
# config pointing elsewhere) must not come back through its "unknown keys".
MAX_SHOWN_KEY = 40


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
    """``("metrics", 2, "k")`` -> ``"metrics[2].k"``; a long or unprintable key is shortened and quoted."""
    text = ""
    for element in path:
        if isinstance(element, int):
            text += f"[{element}]"
        elif element.isprintable() and len(element) <= MAX_SHOWN_KEY:
            text += f".{element}"
        else:
            text += f".{quote_key(element)}"
    return text.removeprefix(".")


def quote_key(key: object, limit: int = MAX_SHOWN_KEY) -> str:
    """``key`` quoted with its control characters escaped, cut to ``limit`` characters (``…`` marks a cut)."""
    return f"'{printable(str(key), limit)}'"


def printable(text: str, limit: int) -> str:
    """``text`` on one line: line breaks and other control characters escaped, at most ``limit`` long."""
    escaped = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit + 1])
    return escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"


def _position(problem: Problem) -> tuple[bool, int, int]:
    return (problem.line is None, problem.line or 0, problem.column or 0)
