"""Format generated code with black and prove it parses.

black is imported only when its output is not already in the user cache (mscodegen/_cache.py):
the cache key is sha256 of (black version, mode settings, input text), so a hit returns exactly
what black.format_str would.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import TYPE_CHECKING, Any

from . import _cache

if TYPE_CHECKING:
    import black

# The black.Mode of every generated file. Plain settings so the cache key needs no black import.
LINE_LENGTH = 100
MODE_SETTINGS = {"line_length": LINE_LENGTH}
_CACHE_FORMAT = "mscodegen-black-v1"


class GeneratedCodeError(Exception):
    """The templates produced invalid Python: a bug in mscodegen, not in the config."""


def __getattr__(name: str) -> Any:  # PEP 562: `fmt.MODE` without importing black up front
    if name == "MODE":
        return _mode()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _mode() -> black.Mode:
    import black

    return black.Mode(line_length=LINE_LENGTH)


def format_code(source: str, name: str) -> str:
    root = _cache.cache_root()
    path = None
    if root is not None:
        entry = _cache.key(_CACHE_FORMAT, black_version(), repr(sorted(MODE_SETTINGS.items())), source)
        path = root / "black" / entry
        cached = _cache.read(path)
        if cached is not None:
            try:
                formatted = cached.decode("utf-8")
                ast.parse(formatted, filename=name)
                return formatted
            except (UnicodeDecodeError, SyntaxError, ValueError):
                pass  # impossible unless the entry was tampered with: format again
    formatted = _black(source, name)
    ast.parse(formatted, filename=name)
    if path is not None and _imported_black_version() == black_version():
        _cache.write(path, formatted.encode("utf-8"))
    return formatted


def _black(source: str, name: str) -> str:
    import black

    try:
        return black.format_str(source, mode=_mode())
    except black.parsing.InvalidInput as exc:
        raise GeneratedCodeError(f"{name}: template output is not valid Python: {exc}") from exc


def _imported_black_version() -> str:
    import black

    return str(black.__version__)  # type: ignore[attr-defined]


@cache
def black_version() -> str:
    """black's version without importing black (its top-level `_black_version` module)."""
    try:
        from _black_version import version  # type: ignore[import-untyped]
    except ImportError:
        from importlib.metadata import version as dist_version

        return dist_version("black")
    return str(version)
