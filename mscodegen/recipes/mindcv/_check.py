"""mscodegen's own validation of a config import-mindcv wrote: `load_config` (schema, cross-section rules,
files), as `mscodegen validate` runs it, without MindSpore.

A recipe names its dataset (`data_dir`) on the machine it was written on: a data folder that is not on
this one yet is not a fault of the conversion, so those problems are kept apart (`missing_data`); every
other problem means the written config does not validate.
"""

from __future__ import annotations

from pathlib import Path

from mscodegen.config.errors import ConfigError, Problem
from mscodegen.config.load import load_config

# where the converter writes the recipe's data_dir (data.train / data.eval of kind image_folder, mnist, cifar10)
DATA_PATHS = ("data.train.path", "data.eval.path")


def validate_written(path: Path) -> tuple[list[Problem], list[Problem]]:
    """Validate the config at `path` as `mscodegen validate` does (no MindSpore import): the problems that
    mean the written config does not validate, and those that only say the recipe's data is not here."""
    try:
        load_config(path)
    except ConfigError as exc:
        data = [p for p in exc.problems if p.path in DATA_PATHS]
        return [p for p in exc.problems if p.path not in DATA_PATHS], data
    return [], []
