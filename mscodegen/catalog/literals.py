"""Config values as Python source: literals and calls, never raw text."""

from __future__ import annotations

import keyword
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import PurePath
from typing import Any


@dataclass(frozen=True, slots=True)
class Name:
    """A name of the script as a value (WEIGHT_DECAY, a parameter): written as itself, unquoted."""

    name: str


@dataclass(frozen=True, slots=True)
class Call:
    """A call the script makes, as facts: `func(*args, **kwargs)`; `literal` writes it.

    func is a name (`nn.Accuracy`, `create_model`); args and kwargs values are plain data, Names or Calls.
    """

    func: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        for key, _ in self.kwargs:
            if not key.isidentifier() or keyword.iskeyword(key) or key == "__debug__":
                raise ValueError(f"{key!r} cannot be a keyword argument name")

    @classmethod
    def of(cls, func: str, /, *args: Any, **kwargs: Any) -> Call:
        """`func` is positional-only so that a config kwarg named `func` is just another keyword."""
        return cls(func, args, tuple(kwargs.items()))


def literal(value: Any) -> str:
    """A config value (or a Name, a Call) as Python source: repr() of plain data only, never raw text.

    Strings are quoted and floats written the way black would leave them (:func:`string`; no `+`
    in an exponent), so black has less to do.
    Non-finite floats raise ValueError: repr() gives `inf`/`nan`, which are names, not literals
    (the schema rejects them, so a config never gets here with one).
    """
    if isinstance(value, Lambda | Under | Fraction | PurePath | RunStamp | PerShard):
        return _script_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no Python literal")
    if isinstance(value, str):
        return string(value)
    if isinstance(value, float):
        return repr(value).replace("e+", "e")  # black writes 1e16, not repr's 1e+16
    if value is None or isinstance(value, (bool, int)):
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
    if isinstance(value, Name):
        return value.name
    if isinstance(value, Call):
        args = [*map(literal, value.args), *(f"{k}={literal(v)}" for k, v in value.kwargs)]
        return f"{value.func}({', '.join(args)})"
    raise TypeError(f"cannot render {type(value).__name__} as a literal")


def string(value: str) -> str:
    """repr(value) in black's quotes: double quotes unless they need more escapes than single ones.

    repr() picks single quotes unless the text holds a single quote and no double quote; black
    (string normalization) turns '...' into "..." when that escapes no more quotes than before.
    Either way the escapes of everything else (backslashes, line breaks, unprintables) are repr's.
    """
    text = repr(value)
    if text[0] == '"' or value.count('"') > value.count("'"):
        return text  # black keeps these: double quotes already, or single ones escape fewer quotes
    body, out, i = text[1:-1], [], 0
    while i < len(body):  # repr's body: \' becomes ', a bare " becomes \", other escapes stay
        ch = body[i]
        if ch == "\\":
            pair = body[i : i + 2]
            out.append("'" if pair == "\\'" else pair)
            i += 2
            continue
        out.append('\\"' if ch == '"' else ch)
        i += 1
    return '"' + "".join(out) + '"'


@dataclass(frozen=True, slots=True)
class Lambda:  # lambda params: body
    params: tuple[str, ...]
    body: Call


@dataclass(frozen=True, slots=True)
class Under:  # a path under a folder the script names: data_dir / "train.csv" (None: the folder)
    folder: str
    path: PurePath | None


@dataclass(frozen=True, slots=True)
class PerShard:  # one worker's share of a global count that divides: 40 // num_shards
    count: int


@dataclass(frozen=True, slots=True)
class RunStamp:  # when the run started, and its process: "20261205-194500-4242"
    pass


def _script_value(value: Lambda | Under | Fraction | PurePath | RunStamp | PerShard) -> str:
    """A Fraction as a division (1.0 / 255.0); a PurePath absolute, or else from the script's folder
    (where a copied script finds what lies beside it)."""
    if isinstance(value, RunStamp):
        return "f\"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}\""
    if isinstance(value, PerShard):
        return f"{value.count} // num_shards"
    if isinstance(value, Lambda):
        return f"lambda {', '.join(value.params)}: {literal(value.body)}"
    if isinstance(value, Under):
        return value.folder if value.path is None else f"{value.folder} / {string(value.path.as_posix())}"
    if isinstance(value, Fraction):
        return f"{float(value.numerator)} / {float(value.denominator)}"
    if value.is_absolute():
        return f"Path({string(value.as_posix())})"
    return "Path(__file__).parent" + ("" if str(value) == "." else f" / {string(value.as_posix())}")
