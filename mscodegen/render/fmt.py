"""Format generated code with black and prove it parses.

Every generated file goes through black's `format_str` (black is imported here, not at start-up:
`validate` never needs it). The templates do not imitate black's layout; black lays the code out.
"""

from __future__ import annotations

import ast
from importlib.metadata import version

LINE_LENGTH = 100


class GeneratedCodeError(Exception):
    """The templates produced invalid Python: a bug in mscodegen, not in the config."""


def format_code(source: str, name: str) -> str:
    """`source` as black formats it at LINE_LENGTH; GeneratedCodeError if it is not valid Python."""
    import black

    try:
        formatted = black.format_str(source, mode=black.Mode(line_length=LINE_LENGTH))
    except black.parsing.InvalidInput as exc:
        raise GeneratedCodeError(f"{name}: template output is not valid Python: {exc}") from exc
    ast.parse(formatted, filename=name)
    return formatted


def format_all(sources: dict[str, str]) -> dict[str, str]:
    """{name: black output} for several scripts, in the order given."""
    return {name: format_code(source, name) for name, source in sources.items()}


def black_version() -> str:
    """The installed black's version (recorded in the lock), without importing black."""
    return version("black")
