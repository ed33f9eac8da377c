"""Building blocks shared by every config section."""

from __future__ import annotations

import keyword
import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A config section: unknown keys are errors, values are immutable after validation.

    Numbers must be finite: `inf`/`nan` have no Python literal, so a script could not spell them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _check_identifier(name: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid Python identifier")
    return name


def _check_import_path(path: str) -> str:
    module, sep, attr = path.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{path!r} is not of the form 'package.module:name'")
    for part in [*module.split("."), attr]:
        if not part.isidentifier() or keyword.iskeyword(part):
            raise ValueError(f"{path!r}: {part!r} is not a valid Python identifier")
    return path


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


Identifier = Annotated[str, AfterValidator(_check_identifier)]
ImportPath = Annotated[
    str,
    AfterValidator(_check_import_path),
    Field(description="Python object as 'package.module:name', importable where the script runs."),
]
Kwargs = Annotated[
    dict[Identifier, Annotated[Any, AfterValidator(_check_literal_value)]],
    Field(description="Keyword arguments, rendered into the script as Python literals."),
]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
