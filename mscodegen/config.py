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


# A file name may have at most 255 bytes; checkpoint files add "-<epoch>_<step>.ckpt" to the prefix.
MAX_NAME_BYTES = 200
_NAMES = (("name",), ("callbacks", "checkpoint", "prefix"))


def load_config(path: Path, overrides: Sequence[str] = ()) -> LoadedConfig:
    """Compose `path` (extends, --set overrides), validate it; raise ConfigError listing every problem."""
    composed = compose(path, overrides)
    loaded = composed.loaded
    problems = [*loaded.problems, *_name_problems(loaded, path)]
    try:
        config = Config.model_validate(loaded.data)
    except ValidationError as exc:
        problems += from_validation_error(exc, loaded, Config).problems
        raise ConfigError(problems, loaded.source) from None
    found = cross_section_problems(config) + file_problems(config, path.parent)
    problems += [_problem(loaded, key, message) for key, message in found]
    if problems:
        raise ConfigError(problems, loaded.source)
    return LoadedConfig(config, path, composed.sha256, tuple(overrides), loaded)


def _name_problems(loaded: LoadedYaml, path: Path) -> list[Problem]:
    """Names that become file names: the run's (or the file's stem) and the checkpoint prefix."""
    data = loaded.data if isinstance(loaded.data, dict) else {}
    problems = []
    if data.get("name") is None and not NAME_PATTERN.fullmatch(path.stem):
        message = (
            f"the file name {path.stem!r} cannot name the run (use letters, digits, '_', '.', '-'): "
            "rename the file or set name:"
        )
        problems.append(Problem("name", 1, 1, message))
    for key in _NAMES:
        value: object = data
        for element in key:
            value = value.get(element) if isinstance(value, dict) else None
        if value is None and key == ("name",):
            value, key = path.stem, ()
        if isinstance(value, str) and len(value.encode("utf-8")) > MAX_NAME_BYTES:
            _, mark = loaded.mark_for(key)
            shown = format_path(key) or "the file name"
            message = (
                f"{shown} is {len(value.encode('utf-8'))} bytes; at most {MAX_NAME_BYTES} fit in a file name"
            )
            problems.append(Problem(format_path(key) or "name", mark.line, mark.column, message))
    return problems


def _problem(loaded: LoadedYaml, key: tuple[str | int, ...], message: str) -> Problem:
    matched, mark = loaded.mark_for(key)
    return Problem(format_path(key), mark.line, mark.column, message, mark.source)
