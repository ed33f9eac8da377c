"""Load a config file: YAML with positions -> schema -> cross-section and file-system rules.

Every problem is collected and reported at once, each with its key path and line:column.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from mscodegen.config.compose import compose, with_origin
from mscodegen.config.errors import ConfigError, Problem, format_path
from mscodegen.config.forms import ONE_NETWORK_ONLY, form_problems, root_model
from mscodegen.config.reader import LoadedYaml, Mark, read_config_bytes
from mscodegen.config.validation import from_validation_error
from mscodegen.schema import Config
from mscodegen.schema._base import RUN_NAME_PATTERN
from mscodegen.schema.data import Data
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.rules import (
    GAN_SECTIONS,
    SECTIONS,
    cross_section_problems,
    file_problems,
    identifier_problems,
    weight_file_problems,
)
from mscodegen.schema.rules.hints import dropout_hints

# Config.name's pattern. Without `name:` the file's stem names the run: it goes into the
# scripts' docstrings and the output directory, so it must obey the same pattern.
NAME_PATTERN = re.compile(RUN_NAME_PATTERN)
_TOP_LEVEL_NAME = re.compile(r"^(name|extends)\s*:", re.MULTILINE)  # a base may set the name


@dataclass
class LoadedConfig:
    config: Config | GanConfig  # one network, or two (gan:)
    path: Path
    sha256: str
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE texts applied, in order
    loaded_yaml: LoadedYaml | None = field(default=None, repr=False)  # the composed tree, for `show`
    # compose's: a base file -> the `extends` entry that brought it in
    brought_in: dict[str, Mark] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.config.name or self.path.stem


# A file name may have at most 255 bytes; checkpoint files add "-<epoch>_<step>.ckpt" to the prefix.
MAX_NAME_BYTES = 200
_NAMES = (("name",), ("callbacks", "checkpoint", "prefix"))


def load_config(path: Path, overrides: Sequence[str] = ()) -> LoadedConfig:
    """Compose `path` (extends, --set overrides), validate it; raise ConfigError listing every problem.

    Every stage that can still run does: a YAML error is reported with the file-name problem, a
    schema error in one section with the cross-section rules among the sections that validated.
    """
    try:
        composed = compose(path, overrides)
    except ConfigError as exc:
        raise ConfigError([*exc.problems, *_file_name_problems(path)], exc.source) from None
    loaded = composed.loaded
    problems = [*loaded.problems, *_name_problems(loaded, path)]
    # One network or two (gan:): keys of the other form are reported here, not by the schema.
    model = root_model(loaded.data)
    form, replaced = form_problems(loaded.data)
    tree = loaded.data
    if model is GanConfig and isinstance(tree, dict):
        tree = {k: v for k, v in tree.items() if k not in ONE_NETWORK_ONLY}  # keys GanConfig has not
    config: Config | GanConfig
    try:
        config = model.model_validate(tree)
        valid: frozenset[str] = GAN_SECTIONS if model is GanConfig else SECTIONS
    except ValidationError as exc:
        # A value the reader could not read is None by now: its schema error would say it twice.
        unread = {p.path for p in loaded.problems if not p.message.startswith("duplicate key")}
        problems += [
            p
            for p in from_validation_error(exc, loaded, model).problems
            if p.path not in unread and p.path.split(".")[0].split("[")[0] not in replaced
        ]
        config, valid = _partial_config(tree, exc, model)
    found = [*form, *cross_section_problems(config, path.parent, valid)]
    if isinstance(config, GanConfig):
        found += file_problems(config, path.parent, valid)
    else:
        found += [*identifier_problems(config, valid), *file_problems(config, path.parent, valid)]
    problems += [problem_at(loaded, key, message) for key, message in found]
    if problems:
        raise ConfigError(with_origin(problems, composed.brought_in), loaded.source)
    return LoadedConfig(config, path, composed.sha256, tuple(overrides), loaded, composed.brought_in)


def _partial_config(
    data: object, exc: ValidationError, model: type[Config] | type[GanConfig] = Config
) -> tuple[Config | GanConfig, frozenset[str]]:
    """The sections that validate on their own, in a `model` built without validation, and their names.

    Rules read only the sections they name, so the failed ones (left out) are never looked at.
    """
    failed = {error["loc"][0] for error in exc.errors() if error["loc"]}
    values: dict[str, Any] = {}
    valid = set()
    tree = data if isinstance(data, dict) else {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key in failed:
            continue
        if key in tree:
            try:
                adapter: TypeAdapter[Any] = TypeAdapter(Annotated[info.annotation, info])  # type: ignore[arg-type]
                values[name] = adapter.validate_python(tree[key])
            except ValidationError:
                continue
        elif info.is_required():
            continue
        valid.add(name)
    if "data" in valid:
        valid.add("data.train")
    elif isinstance(tree.get("data"), dict) and "train" in tree["data"]:
        train = Data.model_fields["train"]
        try:
            adapter = TypeAdapter(Annotated[train.annotation, train])  # type: ignore[arg-type]
            values["data"] = Data.model_construct(train=adapter.validate_python(tree["data"]["train"]))
            valid.add("data.train")
        except ValidationError:
            pass
    return model.model_construct(**values), frozenset(valid)


def _file_name_problems(path: Path) -> list[Problem]:
    """The file-name check when the YAML did not parse: skipped if the text sets a name (or has bases)."""
    try:
        text = read_config_bytes(path).decode("utf-8", errors="replace")
    except ConfigError:  # not a readable file: that is the problem reported
        return []
    if _TOP_LEVEL_NAME.search(text):
        return []
    empty = LoadedYaml({}, {(): Mark(1, 1)})
    return [dataclasses.replace(p, source=str(path)) for p in _name_problems(empty, path)]


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
    key: tuple[str, ...]
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


def weight_problems(loaded: LoadedConfig) -> list[Problem]:
    """`mscodegen validate`'s check of the files the scripts read at run time (see weight_file_problems)."""
    if isinstance(loaded.config, GanConfig):
        return []  # a gan's networks load no weights (rejected by its rules)
    return _located(loaded, weight_file_problems(loaded.config, loaded.path.parent))


def hints(loaded: LoadedConfig) -> list[Problem]:
    """What is not wrong but surprises (schema/rules/hints.py), at its key: `validate` warns of it, `parity`
    explains a difference with it."""
    return _located(loaded, dropout_hints(loaded.config, loaded.path.parent))


def _located(loaded: LoadedConfig, found: list[tuple[tuple[str | int, ...], str]]) -> list[Problem]:
    if loaded.loaded_yaml is None:  # a config parity switched to --workers
        return [Problem(format_path(key), None, None, message) for key, message in found]
    return with_origin(
        [problem_at(loaded.loaded_yaml, key, message) for key, message in found], loaded.brought_in
    )


def problem_at(loaded: LoadedYaml, key: tuple[str | int, ...], message: str) -> Problem:
    """A Problem at `key`'s value (or the nearest enclosing key the file has), in the file that wrote it."""
    matched, mark = loaded.mark_for(key)
    return Problem(format_path(key), mark.line, mark.column, message, mark.source)
