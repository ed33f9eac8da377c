"""Typed reading of a recipe's arguments, as mindcv's `config.py` (argparse) would read them.

`Arguments.raw` is the recipe's value, or mindcv's default when the recipe leaves the key out;
`int_`, `float_`, `bool_`, `str_` and the list readers convert it the way argparse's `type=` does
and raise `RecipeError` for a value of the wrong type.
"""

from __future__ import annotations

import math
from typing import Any

from mscodegen.recipes.mindcv._defaults import DEFAULTS


class RecipeError(Exception):
    """The recipe cannot be read (exit 2): not YAML, not a mapping, or a value of the wrong type."""


class Arguments:
    """A recipe's arguments, each read with its `config.py` type (its default when left out)."""

    def __init__(self, recipe: dict[str, Any]) -> None:
        self.recipe = recipe

    def given(self, key: str) -> bool:
        return key in self.recipe

    def raw(self, key: str) -> Any:
        return self.recipe[key] if key in self.recipe else DEFAULTS[key]

    def bad(self, key: str, expected: str) -> RecipeError:
        return RecipeError(f"{key}: expected {expected}, got {self.raw(key)!r}")

    def int_(self, key: str) -> int:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self.bad(key, "an integer")
        if isinstance(value, int):
            return value
        try:  # argparse's type=int converts string values too
            return int(str(value))
        except ValueError:
            raise self.bad(key, "an integer") from None

    def opt_int(self, key: str) -> int | None:
        return None if self.raw(key) is None else self.int_(key)

    def float_(self, key: str) -> float:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self.bad(key, "a number")
        try:  # PyYAML reads `1e-6` as a string; argparse's type=float converts it
            number = float(value)
        except (TypeError, ValueError):
            raise self.bad(key, "a number") from None
        if not math.isfinite(number):
            raise self.bad(key, "a finite number")
        return number

    def opt_float(self, key: str) -> float | None:
        return None if self.raw(key) is None else self.float_(key)

    def bool_(self, key: str) -> bool:
        value = self.raw(key)
        if isinstance(value, bool):
            return value
        text = str(value).lower()  # config.py's str2bool
        if text in ("yes", "true", "1"):
            return True
        if text in ("no", "false", "0"):
            return False
        raise self.bad(key, "true or false")

    def str_(self, key: str) -> str:
        value = self.raw(key)
        if not isinstance(value, str):
            raise self.bad(key, "a string")
        return value

    def opt_str(self, key: str) -> str | None:
        return None if self.raw(key) is None else self.str_(key)

    def numbers(self, key: str) -> list[float]:
        value = self.raw(key)
        if not isinstance(value, (list, tuple)) or isinstance(value, str):
            raise self.bad(key, "a list of numbers")
        if any(isinstance(v, bool) for v in value):
            raise self.bad(key, "a list of numbers")
        try:
            return [float(v) for v in value]
        except (TypeError, ValueError):
            raise self.bad(key, "a list of numbers") from None

    def int_list(self, key: str) -> list[int]:
        value = self.raw(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.bad(key, "a list of integers")
        return list(value)
