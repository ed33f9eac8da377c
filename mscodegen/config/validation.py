"""pydantic's validation errors as located Problems: the YAML position of each, in plain words, with
"did you mean" for unknown keys and kinds."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic import BaseModel

from mscodegen.catalog.suggest import did_you_mean
from mscodegen.catalog.unsupported import unsupported
from mscodegen.config.errors import ConfigError, Problem, format_path, quote_key
from mscodegen.config.reader import LoadedYaml

_MAX_INPUT_REPR = 60
_INT32_MAX = 2**31 - 1  # schema._base.MAX_INT, the bound of the config's integers
_STRIPPED_PREFIXES = ("Value error, ", "Assertion failed, ")
_NOT_A_MAPPING = ("model_type", "model_attributes_type", "dict_type")


def from_validation_error(
    exc: pydantic.ValidationError, loaded: LoadedYaml, model: type[BaseModel]
) -> ConfigError:
    """Translate pydantic errors of validating `model` into Problems positioned in the YAML source."""
    problems = []
    for error in exc.errors(include_url=False):
        raw_loc, kind = tuple(error["loc"]), error["type"]
        loc = _without_tags(model, raw_loc)
        ctx = error.get("ctx") or {}
        discriminator = str(ctx.get("discriminator", "")).strip("'")
        path, mark = loaded.mark_for(loc)
        if kind == "union_tag_invalid":
            path, mark = loaded.mark_for((*loc, discriminator))
            tag, expected = str(ctx.get("tag")), str(ctx.get("expected_tags"))
            message = unsupported(tag) or (
                f"unknown {discriminator} {quote_key(tag)}; expected one of: {expected}"
                + _closest(tag, expected)
            )
        elif kind == "union_tag_not_found":
            message = f"missing key '{discriminator}', which selects the kind of entry"
        elif kind == "missing":
            message = f"missing required key '{loc[-1]}'"
        elif kind == "extra_forbidden":
            key_path, mark = loaded.mark_for(loc, key=True)
            path = key_path[:-1] if key_path and key_path[-1] == loc[-1] else key_path
            message = unsupported(loc[-1]) or f"unknown key {quote_key(loc[-1])}" + _suggestion(
                model, raw_loc
            )
        elif loc and loc[-1] == "[key]":  # a mapping key failed validation: point at the key
            path, mark = loaded.mark_for(loc[:-1], key=True)
            message = _plain_message(error["msg"], kind, error.get("input"), ctx)
        else:
            message = _plain_message(error["msg"], kind, error.get("input"), ctx)
            if kind == "literal_error" and isinstance(error.get("input"), str):
                message += _closest(error["input"], str(ctx.get("expected", "")))
        problems.append(Problem(format_path(path), mark.line, mark.column, message, mark.source))
    return ConfigError(problems, loaded.source)


def _without_tags(model: type[BaseModel], loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Drop the tags pydantic inserts after a discriminated union.

    Without this, ``("optimizer", "momentum", "lr")`` (tag ``momentum``) would be resolved through the
    Momentum optimizer's own ``momentum`` key and every error would land on that key.
    """
    kept: list[str | int] = []
    candidates: list[Any] = [model]
    for element in loc:
        tagged = _tagged(candidates, element)
        if not tagged:
            kept.append(element)
        candidates = tagged or _step(candidates, element) or candidates
    return tuple(kept)


def _tagged(candidates: list[Any], element: str | int) -> list[Any]:
    """The members of a discriminated union among `candidates` that `element` is the tag of: pydantic puts
    the tag right after the union, and it wins over a field that happens to share its name (Momentum is
    tagged "momentum" and has a "momentum" field)."""
    models = [tp for tp in _flatten(candidates) if _is_model(tp)]
    if len(models) > 1 and isinstance(element, str):
        return [tp for tp in models if _has_tag(tp, element)]
    return []


def _plain_message(msg: str, kind: str, value: Any, ctx: Mapping[str, Any]) -> str:
    for prefix in _STRIPPED_PREFIXES:
        msg = msg.removeprefix(prefix)
    if kind in _NOT_A_MAPPING:
        msg = "expected a mapping of keys to values"
    if kind == "int_type" and isinstance(value, bool):
        return f"expected an integer, got {str(value).lower()} (YAML reads yes/no, on/off, true/false as booleans)"
    if kind == "bool_type":
        msg = "expected true or false"
    if kind == "int_type" and isinstance(value, float) and value.is_integer():
        msg = "Input should be a valid integer, written without a decimal point"
    if kind == "less_than_equal" and ctx.get("le") == _INT32_MAX:
        msg += " (MindSpore counts steps, epochs and sizes in int32)"
    shown = repr(value)
    if kind not in ("value_error", "assertion_error") and len(shown) <= _MAX_INPUT_REPR:
        msg += f" (got {shown})"
    return msg


def _closest(value: str, expected: str) -> str:
    """The "; did you mean 'x'?" hint for the quoted choice in ``expected`` closest to ``value``."""
    return did_you_mean(value, re.findall(r"'([^']*)'", expected))


def _suggestion(model: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    """ "; did you mean ..." among the keys of the model(s) that ``loc`` leads to (best effort)."""
    candidates: list[Any] = [model]
    for element in loc[:-1]:
        candidates = _step(candidates, element) or candidates  # unknown element: skip it
    keys = {
        info.alias or name
        for tp in _flatten(candidates)
        if _is_model(tp)
        for name, info in tp.model_fields.items()
    }
    return did_you_mean(str(loc[-1]), keys)


def _step(candidates: list[Any], element: str | int) -> list[Any]:
    tagged = _tagged(candidates, element)
    if tagged:
        return tagged
    found: list[Any] = []
    for tp in _flatten(candidates):
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if _is_model(tp) and isinstance(element, str):
            fields = {info.alias or name: info for name, info in tp.model_fields.items()}
            if element in fields:
                found.append(fields[element].annotation)
            elif _has_tag(tp, element):
                found.append(tp)  # a discriminated-union tag inserted by pydantic
        elif isinstance(element, int) and origin in (list, tuple, set, frozenset):
            found.extend(arg for arg in args if arg is not Ellipsis)
        elif isinstance(element, str) and origin in (dict, Mapping) and len(args) == 2:
            found.append(args[1])
    return found


def _flatten(candidates: list[Any]) -> list[Any]:
    """Unwrap Annotated, Optional and unions into their member types."""
    flat: list[Any] = []
    for tp in candidates:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            flat.extend(_flatten([typing.get_args(tp)[0]]))
        elif origin in (typing.Union, types.UnionType):
            flat.extend(_flatten(list(typing.get_args(tp))))
        else:
            flat.append(tp)
    return flat


def _has_tag(model: type[BaseModel], tag: str) -> bool:
    """Whether some Literal field of ``model`` accepts ``tag``."""
    for info in model.model_fields.values():
        for tp in _flatten([info.annotation]):
            if typing.get_origin(tp) is typing.Literal and tag in typing.get_args(tp):
                return True
    return False


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)
