"""`mscodegen show`: the resolved config as YAML, each value annotated with where it came from.

The values are the validated config's (defaults filled in by the schema); the origin of each is the
mark the composed YAML tree recorded for that path: ``file:line``, ``--set KEY=VALUE`` or ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from mscodegen.config.load import LoadedConfig


def render_show(loaded: LoadedConfig) -> str:
    data = loaded.config.model_dump(mode="json", by_alias=True, exclude_none=True)
    lines: list[str] = []
    _emit(data, (), 0, lines, loaded)
    return "\n".join(lines) + "\n"


def _origin(loaded: LoadedConfig, path: tuple[str | int, ...]) -> str:
    tree = loaded.loaded_yaml
    mark = tree.marks.get(path) if tree is not None else None
    if mark is None:
        return "default"
    source = mark.source or (tree.source if tree is not None else str(loaded.path))
    return f"{source}:{mark.line}" if mark.line else source


def _emit(
    value: Any, path: tuple[str | int, ...], depth: int, lines: list[str], loaded: LoadedConfig
) -> None:
    """`value` (a mapping, or a list holding mappings or lists) as lines indented `depth` levels; a scalar
    or a flat list is JSON, which is valid YAML (strings always quoted, so nothing re-types)."""
    pad = "  " * depth
    if isinstance(value, dict):
        for key, item in value.items():
            here = (*path, key)
            nested = isinstance(item, list) and any(isinstance(v, dict | list) for v in item)
            if isinstance(item, dict) and item or nested:
                lines.append(f"{pad}{key}:  # {_origin(loaded, here)}")
                _emit(item, here, depth + 1, lines, loaded)
            else:
                lines.append(f"{pad}{key}: {json.dumps(item, ensure_ascii=False)}  # {_origin(loaded, here)}")
        return
    for i, item in enumerate(value):
        here = (*path, i)
        if isinstance(item, dict) and item:
            block: list[str] = []
            _emit(item, here, depth + 1, block, loaded)
            lines += [f"{pad}- {block[0].lstrip()}", *block[1:]]
        else:
            lines.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}  # {_origin(loaded, here)}")
