"""Convert a mindcv recipe (a YAML file of mindcv's `config.py` arguments) into a mscodegen config.

mindcv's `train.py` reads a recipe such as `configs/resnet/resnet_18_ascend.yaml` as defaults for the
arguments of its `config.py`; every argument the recipe leaves out keeps its `config.py` default. This
package reads the recipe the same way (the defaults of mindcv 0.3.0, the version mscodegen's scripts
import, are in `_defaults.DEFAULTS`) and maps each argument onto mscodegen's schema, section by section (each rule
module's docstring lists the arguments it maps; docs/from-mindcv.md is the user's account).

Every argument ends in one of four states: mapped (including values that equal what mscodegen does
anyway, e.g. `hflip: 0.0`), ignored (mindcv itself does not use it with the other values, e.g.
`momentum` with `opt: adamw`), approximated (written, but mscodegen's behaviour differs, and why), or
not converted (mscodegen cannot express it: AugMix, augmentation splits, ...). The last two are reported.
A recipe mindcv itself cannot train as written (a warm-up longer than the training, one_cycle with a
warm-up, ...) is refused: `RecipeError`, naming its keys, and nothing is written. `_check` validates the
written config as `mscodegen validate` does.

Why hand-written: the mapping is a list of judgements about mindcv's code (which arguments `train.py`
actually uses, what `create_scheduler` and `create_optimizer` compute), not a rename of keys; each
rule cites what it relies on, so that a new mindcv release can be checked rule by rule.
mindcv itself is never imported (the generator must not import MindSpore).

The package: `_defaults` (config.py's arguments and defaults), `_converter` (reading them typed, the
state the rules share, the result and its YAML with comments), the rules by section (`_system`, `_model`,
`_data`, `_augmentation`, `_optim`, `_training`) and `_check` (the validation of the written config).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.reader import read_config_bytes
from mscodegen.recipes.mindcv import _augmentation, _data, _model, _optim, _system, _training
from mscodegen.recipes.mindcv._converter import Conversion, Converter, RecipeError
from mscodegen.recipes.mindcv._defaults import MINDCV_VERSION

__all__ = ["MINDCV_VERSION", "Conversion", "RecipeError", "convert", "header_lines", "read_recipe"]


def read_recipe(path: Path) -> dict[str, Any]:
    """The recipe's mapping; RecipeError when it is not readable as mindcv reads it (yaml.safe_load)."""
    try:
        data = yaml.safe_load(read_config_bytes(path).decode("utf-8"))
    except ConfigError as exc:  # not a regular file, or over the size of a config
        raise RecipeError(f"cannot read it: {exc.problems[0].message}") from None
    except UnicodeDecodeError as exc:
        raise RecipeError(f"not UTF-8 text: {exc}") from None
    except yaml.YAMLError as exc:  # one located line, not PyYAML's several
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = str(getattr(exc, "problem", None) or exc).replace("'<stream end>'", "the end of the file")
        raise RecipeError(f"{where}not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise RecipeError(f"a mindcv recipe is a mapping of config.py arguments, got {type(data).__name__}")
    for key in data:
        if not isinstance(key, str):
            raise RecipeError(f"key {key!r} is not a string")
    return data


def convert(recipe: dict[str, Any], *, devices: int = 1, out_dir: Path | None = None) -> Conversion:
    """Map `recipe` (config.py arguments) onto a mscodegen config for `devices` (>= 1, callers check) devices.

    `out_dir` is where the config will be written: relative `data_dir`s (relative to the directory
    mindcv runs in, taken to be the current one) are rewritten relative to it.
    """
    c = Converter(recipe, devices, out_dir or Path.cwd())
    # the rules, section by section in mscodegen's order
    _system.runtime(c)
    _model.network(c)
    _data.data(c)
    _augmentation.augmentation(c)
    _model.loss(c)
    _optim.optimizer(c)
    _optim.lr_schedule(c)
    _training.train(c)
    _training.evaluation(c)
    _training.checkpoint(c)
    _training.precision(c)
    _training.grad(c)
    _system.parallel(c)
    return c.finish()


def header_lines(recipe: Path, command: str, devices: int, conversion: Conversion) -> list[str]:
    """The comment on top of the written config: source, command, batch and distribute handling."""
    lines = [
        f"Converted from the mindcv recipe {recipe.as_posix()} by:",
        f"  {command}",
        f"Arguments the recipe leaves out take mindcv {MINDCV_VERSION}'s config.py defaults.",
    ]
    train = conversion.config.get("data", {}).get("train", {})
    if "parallel" in conversion.config and conversion.config["parallel"].get("mode") == "data_parallel":
        lines.append(
            f"mindcv's batch_size is per device: data.train.batch_size is the global batch over "
            f"--devices {devices} ({train.get('batch_size')})."
        )
    else:
        lines.append("mindcv's batch_size is per device; converted for one device (--devices 1).")
    return lines
