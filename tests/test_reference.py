"""The README's configuration reference is the one the schema generates."""

from mscodegen.tools.reference import END, START, reference

from conftest import REPO


def test_readme_reference_is_current():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == "\n" + reference(), "stale: run `python -m mscodegen.tools.reference --write`"


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
