"""`mscodegen show`: the resolved config as YAML, each value annotated with where it came from.

The values are the validated config's (defaults filled in by the schema); the origin of each is the
mark the composed YAML tree recorded for that path: ``file:line``, ``--set KEY=VALUE`` or ``default``.
"""

from __future__ import annotations

import json
from typing import Any

from mscodegen.config.load import LoadedConfig

_INDENT = "  "


def render_show(loaded: LoadedConfig) -> str:
    """The resolved config of `loaded` as annotated YAML text."""
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


def _scalar(value: Any) -> str:
    # JSON is valid YAML for scalars and flat lists; strings always quoted so nothing re-types.
    return json.dumps(value, ensure_ascii=False)


def _is_flat(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def _emit(
    value: Any, path: tuple[str | int, ...], depth: int, lines: list[str], loaded: LoadedConfig
) -> None:
    pad = _INDENT * depth
    if isinstance(value, dict):
        for key, item in value.items():
            here = (*path, key)
            if isinstance(item, dict) and item or isinstance(item, list) and item and not _is_flat(item):
                lines.append(f"{pad}{key}:  # {_origin(loaded, here)}")
                _emit(item, here, depth + 1, lines, loaded)
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}  # {_origin(loaded, here)}")
        return
    for i, item in enumerate(value):  # a list holding mappings or lists
        here = (*path, i)
        if isinstance(item, dict) and item:
            first, *rest = _block(item, here, depth + 1, loaded)
            lines.append(f"{pad}- {first.lstrip()}")
            lines.extend(rest)
        else:
            lines.append(f"{pad}- {_scalar(item)}  # {_origin(loaded, here)}")


def _block(item: dict[str, Any], path: tuple[str | int, ...], depth: int, loaded: LoadedConfig) -> list[str]:
    out: list[str] = []
    _emit(item, path, depth, out, loaded)
    return out
