"""Format generated code with black and prove it parses."""

from __future__ import annotations

import ast

import black


class GeneratedCodeError(Exception):
    """The templates produced invalid Python: a bug in mscodegen, not in the config."""


MODE = black.Mode(line_length=100)


def format_code(source: str, name: str) -> str:
    try:
        formatted = black.format_str(source, mode=MODE)
    except black.InvalidInput as exc:
        raise GeneratedCodeError(f"{name}: template output is not valid Python: {exc}") from exc
    ast.parse(formatted, filename=name)
    return formatted


def black_version() -> str:
    return black.__version__
