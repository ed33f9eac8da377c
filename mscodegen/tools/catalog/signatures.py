"""A MindSpore class's `__init__` parameters as a table entry: name, required or its default, the docstring's type.

The entry format is `mscodegen.catalog.signatures`'s, which checks a config's keyword arguments against it.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
from typing import Any


def literal(value: object) -> tuple[bool, object]:
    """(True, JSON value) when `value` is a JSON literal (tuples become lists), else (False, None)."""
    if isinstance(value, enum.Enum):  # IntEnum/str enums are not the literal the user writes
        return False, None
    if value is None or isinstance(value, (bool, int, str)):
        return True, value
    if isinstance(value, float):
        return value == value and abs(value) != float("inf"), value
    if isinstance(value, (tuple, list)):
        items = [literal(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    return False, None


def default_repr(value: object) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def doc_types(cls: type) -> dict[str, str]:
    """The `name (type): ...` entries of the Args section of a class docstring."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    args = re.split(r"\n(?=\S)", doc.partition("\nArgs:\n")[2])[0]
    return {m[1]: m[2] for m in re.finditer(r"^    \*{0,2}(\w+) \((.*)\):", args, re.MULTILINE)}


def parameters(cls: type) -> list[dict[str, Any]]:
    """Every `__init__` parameter of `cls`: name, required or its default, the docstring's type."""
    types = doc_types(cls)
    params = []
    for p in inspect.signature(cls).parameters.values():
        entry: dict[str, Any] = {"name": p.name, "required": False}
        if p.kind is p.VAR_POSITIONAL:
            entry["kind"] = "var_positional"
        elif p.kind is p.VAR_KEYWORD:
            entry["kind"] = "var_keyword"
        elif p.default is p.empty:
            entry["required"] = True
        else:
            ok, value = literal(p.default)
            entry.update({"default": value} if ok else {"default_repr": default_repr(p.default)})
        entry["type"] = types.get(p.name)
        params.append(entry)
    return params


def dumps(value: object, depth: int = 0) -> str:
    """JSON with one line per parameter (and per enum), so that a refresh diffs readably."""
    flat = not isinstance(value, (dict, list)) or not value
    if flat or depth >= 4 or (isinstance(value, list) and not isinstance(value[0], (dict, list))):
        return json.dumps(value, ensure_ascii=False)
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, depth + 1)}" for k, v in value.items()]
        text = "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    else:
        assert isinstance(value, list)
        text = "[\n" + ",\n".join(pad + dumps(v, depth + 1) for v in value) + "\n" + " " * depth + "]"
    return text + ("\n" if depth == 0 else "")
