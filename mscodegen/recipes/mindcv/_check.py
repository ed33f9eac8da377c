"""mscodegen's own validation of a config import-mindcv wrote: `load_config` (schema, cross-section rules,
files), as `mscodegen validate` runs it, without MindSpore.

A recipe names its dataset (`data_dir`) on the machine it was written on: a data folder that is not on
this one yet is not a fault of the conversion, so those problems are kept apart (`missing_data`); every
other problem means the written config does not validate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mscodegen.config.errors import ConfigError, Problem
from mscodegen.config.load import load_config

# where the converter writes the recipe's data_dir (data.train / data.eval of kind image_folder, mnist, cifar10)
DATA_PATHS = ("data.train.path", "data.eval.path")


@dataclass
class Validation:
    problems: list[Problem] = field(default_factory=list)  # the written config does not validate
    missing_data: list[Problem] = field(default_factory=list)  # the recipe's data is not on this machine

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_written(path: Path) -> Validation:
    """Validate the config at `path` as `mscodegen validate` does (no MindSpore import)."""
    try:
        load_config(path)
    except ConfigError as exc:
        result = Validation()
        for problem in exc.problems:
            (result.missing_data if problem.path in DATA_PATHS else result.problems).append(problem)
        return result
    return Validation()
