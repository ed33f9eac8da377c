"""Writing the converted config as YAML: block style, each value's source as an end-of-line comment.

PyYAML's dumper cannot write comments, so the sections and keys are laid out here and only the leaf
values go through `yaml.safe_dump` (in flow style); the text must read back as the config it came
from. A transform pipeline (a list of one-key mappings, `[{OpName: {kwargs}}, ...]`) is written as a
block sequence, one op a line, so that each op can carry its own comment (keyed by its index).
"""

from __future__ import annotations

from typing import Any

import yaml

KeyPath = tuple[str | int, ...]  # an int indexes a pipeline's entries


def config_yaml(
    header: list[str],
    findings: list[tuple[str, list[str]]],
    config: dict[str, Any],
    comments: dict[KeyPath, str],
) -> str:
    """`config` as YAML under a comment of `header` lines and (title, described findings) groups;
    a group without findings is left out."""
    lines = [f"# {_one_line(h)}" if h else "#" for h in header]
    for title, described in findings:
        if described:
            lines.append(f"# {title}")
            lines += [f"#   {_one_line(d)}" for d in described]
    for key, value in config.items():
        lines.append("")
        lines += _emit(key, value, (key,), 0, comments)
    text = "\n".join(lines) + "\n"
    if yaml.safe_load(text) != config:  # the emitter must round-trip exactly
        raise AssertionError("import-mindcv wrote YAML that does not read back as the converted config")
    return text


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _flow(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def _emit(key: str, value: Any, path: KeyPath, depth: int, comments: dict[KeyPath, str]) -> list[str]:
    pad = "  " * depth
    comment = comments.get(path)
    suffix = f"  # {_one_line(comment)}" if comment else ""
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key}:{suffix}"]
        for sub_key, sub_value in value.items():
            lines += _emit(sub_key, sub_value, (*path, sub_key), depth + 1, comments)
        return lines
    if _is_pipeline(value):
        lines = [f"{pad}{key}:{suffix}"]
        for index, entry in enumerate(value):
            ((name, kwargs),) = entry.items()
            note = comments.get((*path, index))
            tail = f"  # {_one_line(note)}" if note else ""
            lines.append(f"{pad}  - {_flow(name)}: {_flow(kwargs)}{tail}")
        return lines
    return [f"{pad}{key}: {_flow(value)}{suffix}"]


def _is_pipeline(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and len(e) == 1 and isinstance(next(iter(e)), str) for e in value)
    )
