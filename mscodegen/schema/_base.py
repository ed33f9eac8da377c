"""Building blocks shared by every config section."""

from __future__ import annotations

import keyword
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A config section: unknown keys are errors, values are immutable after validation."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_check_literal_value(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("nested mapping keys must be strings")
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
