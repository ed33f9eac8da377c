"""What the shipped signature tables share: reading a MindSpore class's parameters (refresh time, with
MindSpore) and checking a config's keyword arguments against a table entry (validate time, without it).

A table entry for a parameter is `{"name", "required", "default" | "default_repr", "type"}`, `type` being the
text in parentheses of the class docstring's `Args:` entry (`float`, `Union[int, Sequence[int]], optional`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from mscodegen.catalog.suggest import close_matches

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
    except (ValueError, ZeroDivisionError):
        return None
    return repr(int(value)) if value.denominator == 1 and "." not in text else repr(float(value))


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
    return f"{owner}: `{key}` takes {doc_type}, not the string {strings[0]!r}{hint}"


def suggest(word: str, choices: list[str]) -> str:
    """` (did you mean x or y?)`, or ``."""
    close = [c for c in choices if c.lower() == word.lower()]
    close += [c for c in close_matches(word, choices, n=3) if c not in close]
    return f" (did you mean {' or '.join(close[:3])}?)" if close else ""


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
        problem = string_problem(owner, key, param.get("type"), value)
        if problem:
            problems.append((key, problem))
    return problems
