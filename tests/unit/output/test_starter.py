"""`mscodegen init`: the shipped examples listed and copied out with what they read, never overwriting."""

from __future__ import annotations

import pytest

from mscodegen.cli import main
from mscodegen.config.load import load_config
from mscodegen.output.starter import examples_dir, list_examples

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def test_examples_are_found_in_the_repository():
    assert examples_dir() == REPO / "examples"
    assert [e.name for e in list_examples()] == [p.stem for p in EXAMPLES] and len(EXAMPLES) >= 10


def test_list_shows_every_example_on_one_line(capsys):
    assert main(["init", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(EXAMPLES)
    assert any(line.startswith("mnist_quickstart ") and "quick start" in line for line in lines)


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_every_copied_example_validates_where_it_lands(config, tmp_path, monkeypatch, capsys):
    """Copied into an empty folder, each example finds its bases, data and modules (only the
    fine-tuning checkpoint is left for the helper it names, which validate checks, not load)."""
    monkeypatch.chdir(tmp_path)
    assert main(["init", config.stem, "start/my.yaml"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    loaded = load_config(tmp_path / "start" / "my.yaml")
    assert loaded.config == load_config(config).config
    if "run first:" in config.read_text():
        assert "then run first: python start/make_pretrained.py" in out
        assert (tmp_path / "start" / "make_pretrained.py").is_file()


def test_a_part_of_a_name_picks_the_one_example_it_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "quickstart", "my.yaml"]) == 0
    out = capsys.readouterr().out
    assert "wrote  my.yaml" in out and "wrote  data/mnist" in out and "next: mscodegen new my.yaml" in out
    assert sorted(p.name for p in (tmp_path / "data" / "mnist").iterdir()) == [
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
    ]


def test_unknown_ambiguous_and_existing_are_one_line_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "quikstart"]) == 2
    assert "no example 'quikstart'; did you mean 'mnist_quickstart'?" in capsys.readouterr().err
    assert main(["init", "lenet"]) == 2
    assert "'lenet' matches several examples: lenet_amp_accum, lenet_digits" in capsys.readouterr().err
    (tmp_path / "my.yaml").write_text("mine\n")
    assert main(["init", "quickstart", "my.yaml"]) == 2
    assert "my.yaml exists" in capsys.readouterr().err
    assert (tmp_path / "my.yaml").read_text() == "mine\n"
    assert main(["init", "quickstart", "my.txt"]) == 2
    assert "with .yaml" in capsys.readouterr().err


def test_existing_companions_are_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two_input_parts.py").write_text("# my edited copy\n")
    assert main(["init", "two_input", "a.yaml"]) == 0
    assert "kept yours  two_input_parts.py" in capsys.readouterr().out
    assert (tmp_path / "two_input_parts.py").read_text() == "# my edited copy\n"
