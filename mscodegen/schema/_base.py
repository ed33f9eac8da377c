"""Building blocks shared by every config section."""

from __future__ import annotations

import keyword
import math
import struct
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, field_validator

# A run name (`name:`, or the config file's stem): it names the output directory and the scripts'
# docstrings, so letters, digits, `_`, `.` and `-` only, not starting with `.` or `-`.
RUN_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$"


class Section(BaseModel):
    """A config section: unknown keys are errors, values are immutable after validation.

    Numbers must be finite: `inf`/`nan` have no Python literal, so a script could not spell them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*")
    @classmethod
    def _floats_fit_float32(cls, value: Any) -> Any:
        """Every float of a section reaches MindSpore as float32 (learning rates, weight decay, momentum,
        normalization, initializers, CSV fill): one beyond 3.4e38 becomes inf there and the loss NaN.
        Keyword arguments (dicts) are Python values in the scripts and are left alone."""
        for number in _floats(value):
            if abs(number) > FLOAT32_MAX:
                raise ValueError(
                    f"{number!r} overflows float32 (largest 3.4e38), which MindSpore computes in"
                )
        return value


# The largest integer a config may hold: MindSpore counts steps, epochs and sizes in int32, so a larger one
# overflows at run time (`epochs: 100000000000000000000000000000` validated before).
MAX_INT = 2**31 - 1

# The seed MindSpore accepts: ms.set_seed() passes it to mindspore.dataset.config.set_seed, which raises
# above UINT32_MAX.
MAX_SEED = 2**32 - 1


FLOAT32_MAX = 3.4028234663852886e38


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, (list, tuple)):
        return [f for item in value for f in _floats(item)]
    return []


def python_name(name: str) -> str:
    """The identifier Python reads for `name`: it NFKC-normalizes identifiers (PEP 3131), so the
    ligature in 'ﬁle' is 'file' and a full-width 'ｉｆ' is the keyword 'if'."""
    return unicodedata.normalize("NFKC", name)


def _identifier_problem(name: str) -> str | None:
    normal = python_name(name)
    shown = repr(name) if normal == name else f"{name!r} (which Python reads as {normal!r})"
    if not normal.isidentifier():
        return f"{shown} is not a valid Python identifier"
    if keyword.iskeyword(normal):
        return f"{shown} is a Python keyword"
    if normal == "__debug__":  # a constant: naming a column or an argument so is a SyntaxError
        return f"{shown} is Python's built-in constant and cannot be assigned (a SyntaxError)"
    return None


def raising(problem_of: Callable[[Any], str | None]) -> AfterValidator:
    """A validator that raises what `problem_of` finds wrong with a value (nothing: the value passes)."""

    def check(value: Any) -> Any:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


def _check_import_path(path: str) -> str:
    """`package.module:name`; returned NFKC-normalized, as Python would import it."""
    module, sep, attr = path.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{path!r} is not of the form 'package.module:name'")
    for part in [*module.split("."), attr]:
        problem = _identifier_problem(part)
        if problem:
            raise ValueError(f"{path!r}: {problem}")
    return python_name(path)


def _check_float32(value: float) -> float:
    """A positive threshold the scripts hand to MindSpore as float32: it must stay positive and finite."""
    try:
        (single,) = struct.unpack("f", struct.pack("f", value))
    except OverflowError:
        single = math.inf
    if math.isinf(single):
        raise ValueError(f"{value!r} overflows float32 (largest 3.4e38)")
    if single == 0.0:
        raise ValueError(f"{value!r} underflows to 0 in float32 (smallest positive 1.4e-45)")
    return value


def _check_literal_value(value: Any) -> Any:
    """Keyword-argument values end up as Python literals: only plain data is allowed."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} has no Python literal; use a finite number")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_check_literal_value(v) for v in value]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise ValueError("nested mapping keys must be strings")
            if not key.isprintable():
                # Keys are listed in the scripts' settings comment: a line break would end the comment.
                raise ValueError(f"nested mapping key {key!r} contains a line break or control character")
        return {k: _check_literal_value(v) for k, v in value.items()}
    raise ValueError(f"unsupported value of type {type(value).__name__}")


# What Linux allows: 255 bytes a file or directory name, 4096 a path (PATH_MAX, with its terminating null).
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095
# Characters that reorder the text shown around them (U+202A-U+202E, U+2066-U+2069): a path that shows
# as `outputs` may name another directory.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def path_text_problem(path: str) -> str | None:
    """Why `path` cannot name a file or directory the scripts create or read, or None.

    Python's os functions raise on a null byte ("embedded null byte") and on a lone surrogate (it has no
    UTF-8); a tab, a line break or a bidirectional control makes a name nobody can type or read back;
    a name over 255 bytes or a path over 4095 fails with "File name too long".
    """
    for at, char in enumerate(path, 1):
        category = unicodedata.category(char)
        if category in ("Cc", "Zl", "Zp") or char in _BIDI_CONTROLS:
            return (
                f"a path cannot contain the control character {char!r} (at character {at}); remove it "
                "(in YAML, a double-quoted string reads \\0, \\t, \\n as control characters)"
            )
        if category == "Cs":
            return (
                f"a path cannot contain the lone surrogate {char!r} (at character {at}), which has no UTF-8"
            )
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        return f"the path is {size} bytes; a path may have at most {MAX_PATH_BYTES} (Linux's PATH_MAX)"
    longest = max(path.replace("\\", "/").split("/"), key=lambda name: len(name.encode("utf-8")))
    if len(longest.encode("utf-8")) > MAX_NAME_BYTES:
        return (
            f"a name in the path is {len(longest.encode('utf-8'))} bytes; a file or directory name may have "
            f"at most {MAX_NAME_BYTES}"
        )
    return None


def _not_a_boolean(value: Any) -> Any:
    """A YAML boolean (`yes`, `on`) where a number belongs: pydantic would read true as 1.0."""
    if isinstance(value, bool):
        raise ValueError(
            f"expected a number, got {str(value).lower()} (YAML reads yes/no, on/off, true/false as booleans)"
        )
    return value


# Before a float's own validation (ints are strict already; floats stay lax: YAML reads 1e-3 as a string)
NOT_BOOL = BeforeValidator(_not_a_boolean)
Identifier = Annotated[str, raising(_identifier_problem)]
# Every file or directory name in a config (data paths, checkpoint files, output directories).
PathText = Annotated[str, raising(path_text_problem)]
ImportPath = Annotated[
    str,
    AfterValidator(_check_import_path),
    Field(description="Python object as 'package.module:name', importable where the script runs."),
]
Kwargs = Annotated[
    dict[Identifier, Annotated[Any, AfterValidator(_check_literal_value)]],
    Field(description="Keyword arguments, rendered into the script as Python literals."),
]
# Flags are strict: pydantic would otherwise read 1 as true and the strings 'no', 'off', 'f' as false.
Bool = Annotated[bool, Strict()]
# Integers are strict: YAML reads `yes`/`on` as true, which pydantic would otherwise take for 1.
PositiveInt = Annotated[int, Strict(), Field(gt=0, le=MAX_INT)]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0, le=MAX_INT)]
NonNegativeFloat = Annotated[float, NOT_BOOL, Field(ge=0)]
PositiveFloat = Annotated[float, NOT_BOOL, Field(gt=0)]
PositiveFloat32 = Annotated[float, NOT_BOOL, Field(gt=0), AfterValidator(_check_float32)]
# Between 0 and 1, both excluded: betas, decays, fractions.
Fraction = Annotated[float, NOT_BOOL, Field(gt=0, lt=1)]
Seed = Annotated[int, Strict(), Field(ge=0, le=MAX_SEED)]
