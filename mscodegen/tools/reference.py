"""The config reference (Markdown), generated from the schema so that it cannot go stale.

python -m mscodegen.tools.reference            # print it
python -m mscodegen.tools.reference --write    # replace the block between the markers in README.md
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from mscodegen.schema import Config

START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The BaseModel classes an annotation can hold (through Optional, unions, Annotated, lists)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        found += _models(arg)
    return found


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(get_args(annotation)[0])
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in get_args(annotation))
    if origin is list:
        return f"list of {_type_name(get_args(annotation)[0])}"
    if origin is dict:
        return "mapping"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: Any) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "**required**"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(section defaults)"
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return ", ".join(str(v.model_dump(mode="json")) for v in value)
    return f"`{value!r}`" if value is not None else "—"


def _doc(cls: type) -> str:
    """The docstring's first paragraph, on one line."""
    paragraph = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _rows(model: type[BaseModel], prefix: str, seen: dict[tuple[object, ...], str]) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = f"{prefix}{key}"
        nested = _models(field.annotation)
        description = field.description or (_doc(nested[0]) if len(nested) == 1 else "")
        type_name = _type_name(field.annotation)
        if len(nested) == 1 and type_name.replace(" \\| null", "") == "section":
            type_name = "section"
        elif len(nested) == 1:  # a section or something else: say both (shuffle, transforms)
            type_name = type_name.replace(" \\| null", "")
        elif nested:
            type_name = type_name.replace(" \\| ".join(["section"] * len(nested)), "one of the kinds below")
        rows.append(f"| `{path}` | {type_name} | {_default(field)} | {description.replace('|', '/')} |")
        if len(nested) > 1 and tuple(nested) in seen:
            rows[-1] = rows[-1][: -len(" |")] + f" Same kinds as `{seen[tuple(nested)]}`. |"
            continue
        if len(nested) > 1:
            seen[tuple(nested)] = path
        if len(nested) == 1:
            rows += _rows(nested[0], f"{path}.", seen)
        elif nested:
            tag = "kind" if any("kind" in sub.model_fields for sub in nested) else "name"
            for sub in nested:
                if tag not in sub.model_fields:  # the form without a kind (loss: a mindspore.nn loss)
                    rows.append(f"| `{path}` without `{tag}` | | | {_doc(sub)} |")
                    rows += _rows(sub, f"{path}.", seen)
                    continue
                choices = get_args(sub.model_fields[tag].annotation)
                if len(choices) == 1:
                    kind = f"`{tag}: {choices[0]}`"
                else:  # one class for several values (the built-in metrics): list every one
                    kind = f"`{tag}` one of " + " \\| ".join(f"`{c}`" for c in choices)
                rows.append(f"| `{path}` with {kind} | | | {_doc(sub)} |")
                rows += [r for r in _rows(sub, f"{path}.", seen) if not r.startswith(f"| `{path}.{tag}` ")]
    return rows


def reference() -> str:
    lines = [
        "| key | type | default | meaning |",
        "| --- | --- | --- | --- |",
        *_rows(Config, "", {}),
    ]
    return "\n".join(lines) + "\n"


def write_readme(readme: Path) -> bool:
    """Replace the block between the markers; True if the file changed."""
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = f"{head}{START}\n{reference()}{END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    if "--write" in sys.argv:
        changed = write_readme(Path(__file__).resolve().parents[2] / "README.md")
        print("README.md updated" if changed else "README.md already up to date")
    else:
        sys.stdout.write(reference())
