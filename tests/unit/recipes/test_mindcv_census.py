"""The mindcv census (`python -m mscodegen.tools.mindcv_census`, `make mindcv-census`) on a small folder of
recipes written here: one of each result, counted and tallied per argument as import-mindcv decides."""

from __future__ import annotations

from pathlib import Path

import yaml

from mscodegen.tools.mindcv_census import main

# a recipe that converts exactly: the data folder it names is not here, which is only a note
EXACT = {
    "dataset": "imagenet",
    "data_dir": "/data/imagenet",
    "num_classes": 10,
    "model": "resnet18",
    "epoch_size": 4,
    "warmup_epochs": 0,
    "decay_epochs": 4,
    "opt": "momentum",
}

RECIPES = {
    "resnet/exact.yaml": EXACT,
    "resnet/more/also_exact.yaml": {**EXACT, "opt": "rmsprop", "eps": 0.001},
    # approximated: mindcv steps the LR schedule every micro-batch (opt adamw itself is exact)
    "vit/adamw.yaml": {**EXACT, "opt": "adamw", "gradient_accumulation_steps": 2},
    "vit/adamw_repeats.yaml": {**EXACT, "opt": "adamw", "pretrained": True},  # pretrained not converted
    "volo/contradiction.yaml": {**EXACT, "warmup_epochs": 10, "epoch_size": 3},  # refused
}


def write(root: Path, recipes: dict[str, dict]) -> None:
    for name, recipe in recipes.items():
        (root / "configs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "configs" / name).write_text(yaml.safe_dump(recipe))
    (root / "configs" / "README.md").write_text("not a recipe\n")


def test_census_counts_each_result_and_tallies_the_arguments(tmp_path: Path, capsys) -> None:
    write(tmp_path, RECIPES)
    assert main([str(tmp_path), "--each"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"5 mindcv recipes under {tmp_path}")
    for row in (
        "| exact | 2 |",
        "| approximated | 1 |",
        "| not converted | 1 |",
        "| refused | 1 |",
        "| written, not valid | 0 |",
        "| `gradient_accumulation_steps` |  | 1 |",
        "| `pretrained` | 1 |  |",
    ):
        assert row in out
    tallies = out[out.index("| argument | not converted in | approximated in |") + 2 :]
    assert tallies[: tallies.index("")] == [
        "| `gradient_accumulation_steps` |  | 1 |",
        "| `pretrained` | 1 |  |",
    ]
    refusal = next(line for line in out if line.startswith("- `volo/contradiction.yaml`: "))
    assert "warmup_epochs 10 > epoch_size 3" in refusal
    # --each: every recipe, by result, with the arguments behind it
    assert out[out.index("| recipe | result | arguments |") + 2 :] == [
        "| `resnet/exact.yaml` | exact |  |",
        "| `resnet/more/also_exact.yaml` | exact |  |",
        "| `vit/adamw.yaml` | approximated | gradient_accumulation_steps (approximated) |",
        "| `vit/adamw_repeats.yaml` | not converted | pretrained (not converted) |",
        f"| `volo/contradiction.yaml` | refused | {refusal.split(': ', 1)[1]} |",
    ]


def test_census_fails_when_a_written_config_does_not_validate(tmp_path: Path, capsys) -> None:
    # one-channel resnet18 on an image folder of RGB images: mindcv would fail at the first convolution,
    # and mscodegen's validate says so at network.kwargs.in_channels
    write(tmp_path, {"gray.yaml": {**EXACT, "in_channels": 1}})
    assert main([str(tmp_path / "configs")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "| written, not valid | 1 |" in out
    assert any(line.startswith("- `gray.yaml`: network.kwargs.in_channels: ") for line in out), out


def test_census_of_a_folder_without_recipes_is_an_error(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no *.yaml recipes under" in capsys.readouterr().err
