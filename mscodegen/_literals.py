"""Config values as Python source: literals and calls, never raw text."""

from __future__ import annotations

import keyword
import math
from typing import Any


def literal(value: Any) -> str:
    """A config value as Python source: repr() of plain data only, never raw text.

    Non-finite floats raise ValueError: repr() gives `inf`/`nan`, which are names, not literals
    (the schema rejects them, so a config never gets here with one).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no Python literal")
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return (
            f"({inner},)"
            if isinstance(value, tuple) and len(value) == 1
            else (f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as a literal")


def call(func: str, /, *args: str, **kwargs: Any) -> str:
    """`func(arg, key=literal, ...)` with every keyword value rendered by `literal`.

    `func` is positional-only so that a config kwarg named `func` is just another keyword.
    """
    for key in kwargs:
        if not key.isidentifier() or keyword.iskeyword(key):
            raise ValueError(f"{key!r} cannot be a keyword argument name")
    parts = [*args, *(f"{k}={literal(v)}" for k, v in kwargs.items())]
    return f"{func}({', '.join(parts)})"
