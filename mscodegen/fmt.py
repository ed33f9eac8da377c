"""Format generated code with black and prove it parses.

black is imported only when its output is not already in the user cache (mscodegen/_cache.py):
the cache key is sha256 of (black version, mode settings, input text), so a hit returns exactly
what black.format_str would.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from functools import cache
from pathlib import Path
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
    return format_all({name: source})[name]


def format_all(sources: dict[str, str]) -> dict[str, str]:
    """{name: black output} for several scripts: cache hits first, then black for the misses.

    black (compiled with mypyc) holds the GIL, so threads cannot share its work; with two or more
    cores, where forking is safe (_can_fork), the misses beyond the first are formatted in forked
    processes while this one formats the first (a cold `mscodegen new` formats two ~20 kB
    scripts). Otherwise in order. Either way the output is black's, in the order given.
    """
    root = _cache.cache_root()
    out: dict[str, str] = {}
    paths: dict[str, Path] = {}
    for name, source in sources.items():
        if root is None:
            continue
        entry = _cache.key(_CACHE_FORMAT, black_version(), repr(sorted(MODE_SETTINGS.items())), source)
        paths[name] = root / "black" / entry
        cached = _cache.read(paths[name])
        if cached is not None:
            try:
                formatted = cached.decode("utf-8")
                ast.parse(formatted, filename=name)
                out[name] = formatted
            except (UnicodeDecodeError, SyntaxError, ValueError):
                pass  # impossible unless the entry was tampered with: format again
    misses = [name for name in sources if name not in out]
    for name, formatted in zip(misses, _black_many([(sources[n], n) for n in misses]), strict=True):
        ast.parse(formatted, filename=name)
        out[name] = formatted
        if name in paths and _imported_black_version() == black_version():
            _cache.write(paths[name], formatted.encode("utf-8"))
    return {name: out[name] for name in sources}


def _can_fork() -> bool:
    """Forking is safe here: Linux, and no other thread (the CLI has none; a test runner or a
    process that imported MindSpore may, and a forked child could inherit a lock they hold)."""
    return sys.platform == "linux" and threading.active_count() == 1 and "mindspore" not in sys.modules


def _black_many(jobs: list[tuple[str, str]]) -> list[str]:
    workers = min(len(jobs) - 1, (os.cpu_count() or 1) - 1)
    if workers < 1 or not _can_fork():
        return [_black(source, name) for source, name in jobs]
    import multiprocessing  # here, not at the top: ~30 ms of imports only a fork needs
    from concurrent.futures import ProcessPoolExecutor

    import black  # noqa: F401  (imported once here, inherited by the forked workers)

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        rest = [pool.submit(_black_in_worker, source, name) for source, name in jobs[1:]]
        first = _black(*jobs[0])
        return [first, *(future.result() for future in rest)]


def _black_in_worker(source: str, name: str) -> str:
    return _black(source, name)  # looked up in the worker: a module-level name pickles by reference


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
