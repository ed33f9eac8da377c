"""The configuration reference: Markdown pages of the docs site, generated from the schema so that they
cannot go stale.

python -m mscodegen.reference            # print every page
python -m mscodegen.reference --write    # rewrite docs/reference/*.md (a test fails when they are stale)

One page per group of top-level sections (PAGES; a section missing from it gets a page of its own).
Rows are folded: a choice of kinds (`data.train`'s 6 sources, `optimizer`'s 7 names) gets one table of
the keys every kind shares, then per kind only its own keys; a section class met again on the page
(`network.conv_init` after `network.dense_init`) is one row saying where its keys are.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from mscodegen.schema import Config

# page file stem -> (title, the top-level keys it documents, in this order)
PAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "runtime": ("Runtime", ("runtime",)),
    "network": ("Network", ("network",)),
    "data": ("Data", ("data",)),
    "loss": ("Loss", ("loss",)),
    "optimizer": ("Optimizer and LR schedule", ("optimizer", "lr_schedule")),
    "training": ("Training, evaluation, callbacks, EMA", ("train", "eval", "callbacks", "ema")),
    "precision": ("Mixed precision and gradients", ("amp", "loss_scale", "grad")),
    "parallel": ("Parallel", ("parallel",)),
    "distill": ("Knowledge distillation", ("distill",)),
}
# Read by the config loader before the schema (mscodegen/compose.py), so not a field of Config.
EXTENDS_ROW = (
    "| `extends` | str \\| list of str | — | A base config, or a list applied in order, that this file "
    "overrides: mappings merge key by key, lists and scalars replace; paths relative to this file. |"
)
HEADER = "| key | type | default | meaning |\n| --- | --- | --- | --- |"
Row = tuple[str, str]  # (dotted key, the table row)


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


def _default(field: FieldInfo) -> str:
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


def _tag(kinds: list[type[BaseModel]]) -> str:
    return "kind" if any("kind" in sub.model_fields for sub in kinds) else "name"


def _kind_label(sub: type[BaseModel], tag: str) -> str:
    """`kind: digits`, `name` one of `accuracy` \\| `loss` ..., or `without kind` (loss: a mindspore.nn loss)."""
    if tag not in sub.model_fields:
        return f"without `{tag}`"
    choices = get_args(sub.model_fields[tag].annotation)
    if len(choices) == 1:
        return f"`{tag}: {choices[0]}`"
    return f"`{tag}` one of " + " \\| ".join(f"`{c}`" for c in choices)


def _kind_name(sub: type[BaseModel], tag: str) -> str:
    """The value(s) of the kind's tag (`digits`, `accuracy/loss/...`), or `no <tag>`."""
    if tag not in sub.model_fields:
        return f"no {tag}"
    return "/".join(str(c) for c in get_args(sub.model_fields[tag].annotation))


def _kinds_phrase(kinds: list[type[BaseModel]]) -> str:
    """one of the kinds below (`kind`: `builtin`, `mindcv`, `import`)"""
    tag = _tag(kinds)
    if not all(tag in sub.model_fields for sub in kinds):
        return "one of the kinds below"
    values = ", ".join(f"`{c}`" for sub in kinds for c in get_args(sub.model_fields[tag].annotation))
    return f"one of the kinds below (`{tag}`: {values})"


def _row(path: str, type_name: str, default: str, meaning: str) -> str:
    return f"| `{path}` | {type_name} | {default} | {meaning.replace('|', '/')} |"


class _Page:
    """One page: a main table, then a block per choice of kinds, in the order they are met."""

    def __init__(self) -> None:
        self.seen: dict[object, str] = {}  # a section class, or a tuple of kinds -> where its keys are listed
        self.blocks: list[str] = []

    def rows(
        self, model: type[BaseModel], prefix: str, keep: Callable[[str], bool], where: str = ""
    ) -> list[Row]:
        rows: list[Row] = []
        for name, field in model.model_fields.items():
            rows += self.field_rows(f"{prefix}{field.alias or name}", field, keep, where)
        return rows

    def field_rows(self, path: str, field: FieldInfo, keep: Callable[[str], bool], where: str) -> list[Row]:
        nested = _models(field.annotation)
        description = field.description or (_doc(nested[0]) if len(nested) == 1 else "")
        type_name = _type_name(field.annotation)
        if len(nested) == 1:  # "section", or a section or something else: say both (shuffle, transforms)
            type_name = type_name.replace(" \\| null", "")
        elif nested:
            type_name = type_name.replace(" \\| ".join(["section"] * len(nested)), _kinds_phrase(nested))
        if not keep(path):  # not on this table, but a nested key may be
            if len(nested) == 1:
                return self.rows(nested[0], f"{path}.", keep, where)
            return []
        key: object = nested[0] if len(nested) == 1 else tuple(nested)
        if nested and key in self.seen:
            what = "keys" if len(nested) == 1 else "kinds"
            meaning = f"{description} Same {what} as {self.seen[key]}.".strip()
            return [(path, _row(path, type_name, _default(field), meaning))]
        rows = [(path, _row(path, type_name, _default(field), description))]
        if len(nested) == 1:
            self.seen[key] = f"`{path}`{where}"
            rows += self.rows(nested[0], f"{path}.", keep, where)
        elif nested:
            self.seen[key] = f"`{path}`"
            self.blocks.append(self.kinds(path, nested))
        return rows

    def kinds(self, path: str, kinds: list[type[BaseModel]]) -> str:
        """The keys several kinds share, once, saying which; then each kind with the keys only it has."""
        tag = _tag(kinds)
        own = {f"{path}.{tag}"}
        full = [dict(_Page().rows(sub, f"{path}.", lambda p: p not in own)) for sub in kinds]
        names = [_kind_name(sub, tag) for sub in kinds]

        def having(i: int, key: str) -> list[str]:  # the kinds with kind i's row of `key`, word for word
            return [name for name, rows in zip(names, full, strict=True) if rows.get(key) == full[i][key]]

        shared: list[Row] = []
        for i, sub in enumerate(kinds):  # each shared row once, by the first kind that has it
            first = {k for k in full[i] if len(having(i, k)) > 1 and having(i, k)[0] == names[i]}
            for key, row in self.rows(sub, f"{path}.", first.__contains__):
                which = having(i, key)
                kinds_cell = "all" if len(which) == len(kinds) else ", ".join(f"`{n}`" for n in which)
                shared.append((key, row.replace(" | ", f" | {kinds_cell} | ", 1)))
        parts = []
        if shared:
            header = "| key | kinds | type | default | meaning |\n| --- | --- | --- | --- | --- |"
            table = "\n".join([header, *(row for _, row in shared)])
            parts.append(f"## `{path}`: keys several kinds share\n\n{table}")
        for i, sub in enumerate(kinds):
            label = _kind_label(sub, tag)
            alone = {k for k in full[i] if len(having(i, k)) == 1}
            rows = self.rows(sub, f"{path}.", alone.__contains__, f" (under {label})")
            heading = f"## `{path}` {'with ' if tag in sub.model_fields else ''}{label}"
            also = [  # the shared keys (not all kinds') this kind has, top level only
                f"`{key}`"
                for key in dict.fromkeys(key for key, _ in shared)
                if "." not in key[len(path) + 1 :] and key in full[i]
                if 1 < len(having(i, key)) < len(kinds)
            ]
            notes = [_doc(sub)] if _doc(sub) else []
            if also:
                notes.append(f"Also takes {', '.join(also)} (shared, above).")
            body = _table(rows) if rows else "No keys of its own."
            parts.append("\n\n".join([heading, *notes, body]))
        return "\n\n".join(parts)


def _table(rows: list[Row]) -> str:
    return "\n".join([HEADER, *(row for _, row in rows)])


def _intro(title: str, keys: tuple[str, ...]) -> str:
    sections = ", ".join(f"`{k}`" for k in keys)
    return (
        f"# {title}\n\n"
        f"<!-- Generated from the schema by `python -m {__spec__.name if __spec__ else __name__} --write`: "
        "edit the schema's descriptions, not this file. -->\n\n"
        f"The keys of {sections}. A config states only what differs from the defaults."
    )


def _page_keys() -> dict[str, tuple[str, tuple[str, ...]]]:
    """PAGES, plus a page for every top-level section that none lists (a new section is never lost)."""
    listed = {key for _, keys in PAGES.values() for key in keys}
    pages = dict(PAGES)
    for name, field in Config.model_fields.items():
        if name not in listed and _models(field.annotation):
            pages[name] = (f"`{name}`", (name,))
    return pages


def pages() -> dict[str, str]:
    """File stem -> Markdown, the index first."""
    fields = Config.model_fields
    layout = _page_keys()
    out: dict[str, str] = {}
    index_rows = [EXTENDS_ROW]
    for name, field in fields.items():
        if not _models(field.annotation):  # a top-level value (name): listed on the index
            index_rows.append(
                _row(name, _type_name(field.annotation), _default(field), field.description or "")
            )
    for stem, (title, keys) in layout.items():
        page = _Page()
        rows: list[Row] = []
        for key in keys:
            rows += page.field_rows(key, fields[key], lambda _: True, "")
            nested = _models(fields[key].annotation)
            meaning = fields[key].description or (_doc(nested[0]) if len(nested) == 1 else "")
            meaning = meaning or _kinds_phrase(nested).replace("one of the kinds below", "One of the kinds")
            index_rows.append(_row(key, f"[section]({stem}.md)", _default(fields[key]), meaning))
        out[stem] = "\n\n".join([_intro(title, keys), _table(rows), *page.blocks]) + "\n"
    index = (
        "# Configuration reference\n\n"
        "Every key a config may hold, generated from the schema (`mscodegen schema` prints the same as JSON "
        "Schema, for editor completion). A config states only what differs from the defaults; "
        "`mscodegen show CONFIG` prints the resolved config with each value's origin.\n\n"
        + _table([("", row) for row in index_rows])
        + "\n"
    )
    return {"index": index, **out}


def reference() -> str:
    """Every page, one after the other."""
    return "\n".join(pages().values())


def repo_root() -> Path:
    """The checkout this module lives in: the first parent with mkdocs.yml."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "mkdocs.yml").is_file():
            return parent
    raise SystemExit(f"no mkdocs.yml above {Path(__file__).parent}: --write works in a checkout")


def write_docs(directory: Path) -> list[str]:
    """Rewrite the pages in `directory` (removing pages no longer generated); the names that changed."""
    directory.mkdir(parents=True, exist_ok=True)
    new = {f"{stem}.md": text for stem, text in pages().items()}
    changed = []
    for name, text in new.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    for path in sorted(directory.glob("*.md")):
        if path.name not in new:
            path.unlink()
            changed.append(path.name)
    return changed


if __name__ == "__main__":
    if "--write" in sys.argv:
        target = repo_root() / "docs" / "reference"
        changed = write_docs(target)
        print(f"{target}: {', '.join(changed)} updated" if changed else f"{target}: up to date")
    else:
        sys.stdout.write(reference())
