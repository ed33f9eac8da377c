"""The docs site's configuration reference (docs/reference/) is the one the schema generates, folded."""

import re

from mscodegen.tools import reference as reference_module
from mscodegen.tools.reference import pages, reference

from conftest import REPO

PAGES_DIR = REPO / "docs" / "reference"
FIX = f"stale: run `python -m {reference_module.__name__} --write`"


def test_docs_reference_is_current():
    expected = {f"{stem}.md": text for stem, text in pages().items()}
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in PAGES_DIR.glob("*.md")}
    assert sorted(on_disk) == sorted(expected), FIX
    for name, text in expected.items():
        assert on_disk[name] == text, f"docs/reference/{name} is {FIX}"


def test_rows_are_folded():
    # one table of the keys every kind shares, then per kind only its own: no row twice on a page
    for stem, text in pages().items():
        rows = [line for line in text.splitlines() if line.startswith("| `")]
        repeated = sorted({row for row in rows if rows.count(row) > 1})
        assert repeated == [], f"{stem}: rows repeated: {repeated}"
    data, optimizer = pages()["data"], pages()["optimizer"]
    assert data.count("| `data.train.batch_size` |") == 1
    assert optimizer.count("| `optimizer.lr` |") == 1
    assert len(re.findall(r"^## `data\.train` with `kind: \w+`", data, re.MULTILINE)) == 7
    # a key several kinds share is one row naming them; data.eval refers to data.train's kinds
    assert "| `data.train.path` | `mnist`, `cifar10`, `image_folder` |" in data
    assert "Same kinds as `data.train`." in data
    assert "Same keys as `network.dense_init`" in pages()["network"]


def test_every_top_level_key_is_on_a_page():
    from mscodegen.schema import Config

    index = pages()["index"]
    for key in [*Config.model_fields, "extends"]:
        assert f"| `{key}` |" in index, key


def test_reference_names_every_top_level_section():
    table = reference()
    for section in (
        "runtime",
        "network",
        "data",
        "loss",
        "optimizer",
        "lr_schedule",
        "train",
        "eval",
        "callbacks",
        "amp",
        "loss_scale",
        "grad",
        "parallel",
    ):
        assert f"| `{section}` |" in table, section


def _literal_values(annotation, seen: set) -> set[str]:
    """Every Literal value in `annotation`, through unions, lists and nested sections."""
    from typing import Literal, get_args, get_origin

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return set()
        seen.add(annotation)
        return set().union(*(_literal_values(f.annotation, seen) for f in annotation.model_fields.values()))
    if get_origin(annotation) is Literal:
        return {str(a) for a in get_args(annotation)}
    return set().union(set(), *(_literal_values(a, seen) for a in get_args(annotation)))


def test_reference_lists_every_accepted_value():
    # e.g. the built-in metrics share one class: precision, recall, f1, mae and mse must be listed too
    from mscodegen.schema import Config

    table = reference()
    values = _literal_values(Config, set())
    assert {"precision", "recall", "f1", "mae", "mse", "lion", "lamb", "top_k"} <= values
    assert sorted(v for v in values if f"`{v}`" not in table and f": {v}`" not in table) == []
