"""The README's configuration reference is the one the schema generates."""

from mscodegen.reference import END, START, reference

from conftest import REPO


def test_readme_reference_is_current():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == "\n" + reference(), "stale: run `python -m mscodegen.reference --write`"


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
