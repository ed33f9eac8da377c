"""Load a config file: YAML with positions -> schema -> cross-section and file-system rules.

Every problem is collected and reported at once, each with its key path and line:column.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ._yaml import LoadedYaml
from .compose import compose
from .errors import ConfigError, Problem, format_path, from_validation_error
from .schema import Config
from .schema.rules import cross_section_problems, file_problems

# Config.name's pattern. Without `name:` the file's stem names the run: it goes into the
# scripts' docstrings and the output directory, so it must obey the same pattern.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass
class LoadedConfig:
    config: Config
    path: Path
    sha256: str
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE texts applied, in order
    loaded_yaml: LoadedYaml | None = field(default=None, repr=False)  # the composed tree, for `show`

    @property
    def name(self) -> str:
        return self.config.name or self.path.stem


def load_config(path: Path, overrides: Sequence[str] = ()) -> LoadedConfig:
    """Compose `path` (extends, --set overrides), validate it; raise ConfigError listing every problem."""
    composed = compose(path, overrides)
    loaded = composed.loaded
    try:
        config = Config.model_validate(loaded.data)
    except ValidationError as exc:
        raise from_validation_error(exc, loaded, Config) from None
    found = cross_section_problems(config) + file_problems(config, path.parent)
    problems = [_problem(loaded, key, message) for key, message in found]
    if config.name is None and not NAME_PATTERN.fullmatch(path.stem):
        message = (
            f"the file name {path.stem!r} cannot name the run (use letters, digits, '_', '.', '-'): "
            "rename the file or set name:"
        )
        problems.append(Problem("name", None, None, message))
    if problems:
        raise ConfigError(problems, loaded.source)
    return LoadedConfig(config, path, composed.sha256, tuple(overrides), loaded)


def _problem(loaded: LoadedYaml, key: tuple[str | int, ...], message: str) -> Problem:
    matched, mark = loaded.mark_for(key)
    return Problem(format_path(key), mark.line, mark.column, message, mark.source)
