"""What the shipped signature tables share: reading a MindSpore class's parameters (refresh time, with
MindSpore) and checking a config's keyword arguments against a table entry (validate time, without it).

A table entry for a parameter is `{"name", "required", "default" | "default_repr", "type"}`, `type` being the
text in parentheses of the class docstring's `Args:` entry (`float`, `Union[int, Sequence[int]], optional`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mscodegen.catalog.suggest import close_matches, did_you_mean

NUMBER_WORDS = frozenset(["int", "float", "bool", "number"])
STRING_WORDS = frozenset(["str", "bytes"])


def type_words(doc_type: str | None) -> set[str]:
    """The names in a docstring type: `Union[int, Sequence[int]], optional` -> {Union, int, Sequence, optional}."""
    return set(re.findall(r"[A-Za-z_][\w.]*", doc_type or ""))


def takes_no_string(doc_type: str | None) -> bool:
    """A parameter documented as numbers (or flags) only: int, float, bool and containers of them."""
    words = type_words(doc_type)
    return bool(words & NUMBER_WORDS) and not words & STRING_WORDS


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _as_number(text: str) -> str | None:
    """`1/255` -> `0.00392156862745098`, `0.5` -> `0.5`: the number a quoted value means, if it is one."""
    match = re.fullmatch(r"\s*([-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)\s*(?:/\s*(\d+(?:\.\d*)?)\s*)?", text)
    if match is None:
        return None
    try:
        value = Fraction(match[1]) / (Fraction(match[2]) if match[2] else 1)
        number = float(value)
    except (ValueError, ZeroDivisionError, OverflowError):  # 1e400 is no float
        return None
    if not math.isfinite(number) or (number == 0 and value != 0):
        return None
    whole = value.denominator == 1 and "." not in text and "e" not in text.lower()
    return repr(int(value)) if whole else repr(number)


def string_problem(owner: str, key: str, doc_type: str | None, value: object) -> str | None:
    """A string given where the parameter takes numbers: `Rescale: {rescale: "1/255"}` reaches MindSpore as
    the text '1/255' and fails when the script runs."""
    if not takes_no_string(doc_type):
        return None
    strings = _strings(value)
    if not strings:
        return None
    number = _as_number(strings[0])
    hint = f" (write the number without quotes: {number})" if number is not None else ""
    if number is not None and re.fullmatch(r"\s*[-+]?\d+[eE][-+]?\d+\s*", strings[0]):
        hint = f" (YAML 1.1 reads {strings[0].strip()} as text, for want of a decimal point: write {number})"
    return f"{owner}: `{key}` takes {doc_type}, not the string {strings[0]!r}{hint}"


def suggest(word: str, choices: list[str]) -> str:
    """` (did you mean x or y?)`, or ``."""
    close = [c for c in choices if c.lower() == word.lower()]
    close += [c for c in choices if c.lower().endswith("." + word.lower())]  # mindcv.Mixup for Mixup
    close += [c for c in close_matches(word, choices, n=3) if c not in close]
    return f" (did you mean {' or '.join(close[:3])}?)" if close else ""


@dataclass(frozen=True)
class Values:
    """What MindSpore documents (and checks when the script builds the object) for one argument's value.

    `kind`: the Python type the class insists on ("float": an int such as `2` is refused, as MindSpore's
    `check_value_type(..., [float])` does; "number": int or float, never a bool). `low`/`high`: the range,
    open at an end whose `*_open` is set. `choices`: the strings allowed.
    """

    kind: str | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    def range_text(self) -> str:
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        return f"{'<' if self.high_open else '<='} {self.high:g}"


# The documented values of keyword arguments, by `Owner.argument` or, for every owner, `*.argument`
# (MindSpore 2.10's docstrings and __init__ checks; mindcv 0.3.0's Mixup). An owner's own entry wins.
DOCUMENTED_VALUES: dict[str, Values] = {
    "*.reduction": Values("str", choices=("mean", "sum", "none")),
    "*.label_smoothing": Values("number", 0.0, 1.0, high_open=True),
    "CrossEntropyLoss.label_smoothing": Values("float", 0.0, 1.0, high_open=True),
    "*.sparse": Values("bool"),
    "*.ignore_index": Values("int"),
    "FocalLoss.gamma": Values("float", low=0.0),
    "HuberLoss.delta": Values("number", low=0.0, low_open=True),
    "SmoothL1Loss.beta": Values("number", low=0.0, low_open=True),
    "*.eps": Values("number", low=0.0, low_open=True),
    "*.prob": Values("number", 0.0, 1.0),
    "*.switch_prob": Values("number", 0.0, 1.0),
    "*.momentum": Values("number", low=0.0),
    "*.weight_decay": Values("number", low=0.0),
    "*.beta1": Values("number", 0.0, 1.0, low_open=True, high_open=True),
    "*.beta2": Values("number", 0.0, 1.0, low_open=True, high_open=True),
}
_MAX_SHOWN = 40  # a value is echoed at most this long
_KIND_OF_DOC_WORD = {"bool": "bool", "int": "int", "float": "number", "number": "number", "str": "str"}
_KIND_TEXT = {
    "bool": "true or false",
    "int": "an integer",
    "float": "a float",
    "number": "a number",
    "str": "a string",
}


def documented_values(owner: str, key: str, doc_type: str | None) -> Values | None:
    """The table's entry for `owner`'s argument `key`, else the kind its docstring type names alone."""
    found = DOCUMENTED_VALUES.get(f"{owner}.{key}") or DOCUMENTED_VALUES.get(f"*.{key}")
    if found is not None:
        return found
    words = type_words(doc_type) - {"optional"}
    if len(words) == 1 and next(iter(words)) in _KIND_OF_DOC_WORD:
        return Values(_KIND_OF_DOC_WORD[next(iter(words))])
    return None


def _is_kind(value: object, kind: str) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, float)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def value_problem(owner: str, key: str, doc_type: str | None, value: object) -> str | None:
    """Why `value` is not one MindSpore documents for `owner`'s `key` (None when it is, or is not known);
    the message names neither (the caller locates it at the key).

    None (the default) and strings for numbers (string_problem's) are left alone.
    """
    rule = documented_values(owner, key, doc_type)
    if rule is None or value is None or (isinstance(value, str) and rule.kind not in ("str", None)):
        return None
    shown = str(value).lower() if isinstance(value, bool) else repr(value)
    shown = shown if len(shown) <= _MAX_SHOWN else shown[: _MAX_SHOWN - 1] + "…"
    if rule.kind is not None and not _is_kind(value, rule.kind):
        hint = ""
        if rule.kind == "float" and type(value) is int and abs(value) < 2**53:
            hint = f": write {float(value)!r}"
        return f"expected {_KIND_TEXT[rule.kind]}, got {shown} ({owner} checks the type){hint}"
    if rule.choices and value not in rule.choices:
        choices = ", ".join(repr(c) for c in rule.choices)
        return f"{shown} is not one of {choices}{did_you_mean(str(value), rule.choices)}"
    if isinstance(value, int | float) and _is_kind(value, "number") and (rule.low, rule.high) != (None, None):
        too_low = rule.low is not None and (value <= rule.low if rule.low_open else value < rule.low)
        too_high = rule.high is not None and (value >= rule.high if rule.high_open else value > rule.high)
        if too_low or too_high or (isinstance(value, float) and math.isnan(value)):
            return f"{shown} is out of range: must be {rule.range_text()}"
    return None


def check_kwargs(
    owner: str, params: list[dict[str, Any]], kwargs: Mapping[str, object]
) -> list[tuple[str | None, str]]:
    """(the argument, or None for a missing one; the problem): unknown keyword arguments (with the closest
    names), missing required ones, strings for numbers, values for Tensor parameters."""
    by_name = {p["name"]: p for p in params if p.get("kind") is None}
    problems: list[tuple[str | None, str]] = [
        (None, f"{owner}: missing required argument `{name}`")
        for name, p in by_name.items()
        if p["required"] and name not in kwargs
    ]
    for key, value in kwargs.items():
        param = by_name.get(key)
        if param is None:
            hint = suggest(key, list(by_name)) or f" (accepts: {', '.join(by_name) or 'no arguments'})"
            problems.append((key, f"{owner}: unknown argument `{key}`{hint}"))
            continue
        words = type_words(param.get("type"))
        if value is not None and "Tensor" in words and not words & (NUMBER_WORDS | STRING_WORDS):
            problems.append(
                (key, f"{owner}: `{key}` takes a Tensor, which a config cannot give (a list is not one)")
            )
        problem = string_problem(owner, key, param.get("type"), value) or value_problem(
            owner, key, param.get("type"), value
        )
        if problem:
            problems.append((key, problem))
    return problems
