"""The conversion's shared state, and what it produces.

`Converter` is the one mutable object the section rules (`_system`, `_model`, `_data`, `_augmentation`,
`_optim`, `_training`) are given: it reads the recipe's arguments as mindcv's `config.py` (argparse)
would (`raw` is the recipe's value, or mindcv's default when the recipe leaves the key out; `int_`,
`float_`, `bool_`, `str_` and the list readers convert it the way argparse's `type=` does and raise
`RecipeError` for a value of the wrong type), writes values and their comments into the config (`put`),
and records what became of each argument (`mapped`, `ignored`, `unconverted`, `approximated`). `finish`
checks that every argument was decided on. `Conversion` and `Finding` are the result; `config_yaml`
writes it as YAML with comments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mscodegen.recipes.mindcv._defaults import DEFAULTS, LEGACY_KEYS, MINDCV_VERSION

# mscodegen's order of the config's sections (the rules fill them in another order)
SECTIONS = ("runtime", "network", "data", "loss", "optimizer", "lr_schedule", "train")
KeyPath = tuple[str | int, ...]  # an int indexes a pipeline's entries


class RecipeError(Exception):
    """The recipe cannot be read (exit 2): not YAML, not a mapping, or a value of the wrong type."""


@dataclass(frozen=True)
class Finding:
    """A mindcv argument that mscodegen reproduces only approximately, or not at all."""

    key: str
    value: Any
    reason: str
    from_default: bool  # the recipe does not set it: mindcv's config.py default applies

    def describe(self) -> str:
        default = ", mindcv's default" if self.from_default else ""
        return f"{self.key} = {self.value!r}{default} ({self.reason})"


@dataclass
class Conversion:
    """The converted config as plain data, comments by key path, and what did not convert exactly."""

    config: dict[str, Any]
    comments: dict[KeyPath, str]
    not_converted: list[Finding] = field(default_factory=list)
    approximated: list[Finding] = field(default_factory=list)
    ignored: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.not_converted and not self.approximated

    def to_yaml(self, header: list[str]) -> str:
        """The config as YAML: `header` lines and the unconverted keys as comments on top."""
        findings = [
            ("Approximated (written, but mscodegen behaves differently):", self.approximated),
            ("Not converted (mscodegen cannot express them):", self.not_converted),
            ("Ignored (mindcv does not use them with the values above):", self.ignored),
        ]
        described = [(title, [f.describe() for f in found]) for title, found in findings]
        return config_yaml(header, described, self.config, self.comments)


class Converter:
    """The recipe's arguments, the config being written, and what became of each argument."""

    def __init__(self, recipe: dict[str, Any], devices: int, out_dir: Path) -> None:
        self.recipe = recipe
        self.devices = devices
        self.out_dir = out_dir
        self.done: set[str] = set()
        self.comments: dict[KeyPath, str] = {}
        self.result = Conversion({section: {} for section in SECTIONS}, self.comments)

    def given(self, key: str) -> bool:
        return key in self.recipe

    def raw(self, key: str) -> Any:
        return self.recipe[key] if key in self.recipe else DEFAULTS[key]

    def bad(self, key: str, expected: str) -> RecipeError:
        return RecipeError(f"{key}: expected {expected}, got {self.raw(key)!r}")

    def int_(self, key: str) -> int:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self.bad(key, "an integer")
        if isinstance(value, int):
            return value
        try:  # argparse's type=int converts string values too
            return int(str(value))
        except ValueError:
            raise self.bad(key, "an integer") from None

    def opt_int(self, key: str) -> int | None:
        return None if self.raw(key) is None else self.int_(key)

    def float_(self, key: str) -> float:
        value = self.raw(key)
        if isinstance(value, bool):
            raise self.bad(key, "a number")
        try:  # PyYAML reads `1e-6` as a string; argparse's type=float converts it
            number = float(value)
        except (TypeError, ValueError):
            raise self.bad(key, "a number") from None
        if not math.isfinite(number):
            raise self.bad(key, "a finite number")
        return number

    def opt_float(self, key: str) -> float | None:
        return None if self.raw(key) is None else self.float_(key)

    def bool_(self, key: str) -> bool:
        value = self.raw(key)
        if isinstance(value, bool):
            return value
        text = str(value).lower()  # config.py's str2bool
        if text in ("yes", "true", "1"):
            return True
        if text in ("no", "false", "0"):
            return False
        raise self.bad(key, "true or false")

    def str_(self, key: str) -> str:
        value = self.raw(key)
        if not isinstance(value, str):
            raise self.bad(key, "a string")
        return value

    def opt_str(self, key: str) -> str | None:
        return None if self.raw(key) is None else self.str_(key)

    def numbers(self, key: str) -> list[float]:
        value = self.raw(key)
        if not isinstance(value, (list, tuple)) or any(isinstance(v, bool) for v in value):
            raise self.bad(key, "a list of numbers")
        try:
            return [float(v) for v in value]
        except (TypeError, ValueError):
            raise self.bad(key, "a list of numbers") from None

    def int_list(self, key: str) -> list[int]:
        value = self.raw(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.bad(key, "a list of integers")
        return list(value)

    def mapped(self, *keys: str) -> None:
        self.done.update(keys)

    def ignored(self, keys: str | tuple[str, ...], reason: str) -> None:
        for key in (keys,) if isinstance(keys, str) else keys:
            self.done.add(key)
            if self.given(key):
                self.result.ignored.append(Finding(key, self.raw(key), reason, False))

    def unconverted(self, keys: str | tuple[str, ...], reason: str) -> None:
        for key in (keys,) if isinstance(keys, str) else keys:
            self.done.add(key)
            self.result.not_converted.append(Finding(key, self.raw(key), reason, not self.given(key)))

    def approximated(self, key: str, reason: str) -> None:
        self.done.add(key)
        self.result.approximated.append(Finding(key, self.raw(key), reason, not self.given(key)))

    def put(self, path: str, value: Any, comment: str | None = None) -> None:
        """Set a dotted path in the config (sections are created in the order first used)."""
        keys = tuple(path.split("."))
        node = self.result.config
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
        if comment:
            self.comments[keys] = comment

    def src(self, key: str) -> str:
        """The mindcv key a value came from, noting when it is mindcv's default."""
        return key if self.given(key) else f"{key} (mindcv default)"

    def default_mark(self, key: str) -> str | None:
        """The comment of a value whose key has the same name in mindcv: only whether it is the default."""
        return None if self.given(key) else "mindcv default"

    def source(self, key: str, target: str) -> str | None:
        """The comment of a value written at `target`: the mindcv key when the names differ, and
        whether the value is mindcv's default."""
        if key == target.rsplit(".", 1)[-1]:
            return self.default_mark(key)
        return self.src(key)

    def finish(self) -> Conversion:
        """The result, once every argument is decided on; sections left empty are dropped."""
        for key in self.recipe:
            if key not in DEFAULTS and key not in LEGACY_KEYS:
                self.unconverted(key, f"not an argument of mindcv {MINDCV_VERSION}'s config.py")
        missed = set(DEFAULTS) - self.done
        if missed:  # every argument must be decided on by the rules
            raise AssertionError(f"import-mindcv does not handle: {', '.join(sorted(missed))}")
        self.result.config = {k: v for k, v in self.result.config.items() if v != {}}
        return self.result


def config_yaml(
    header: list[str],
    findings: list[tuple[str, list[str]]],
    config: dict[str, Any],
    comments: dict[KeyPath, str],
) -> str:
    """`config` as YAML under a comment of `header` lines and (title, described findings) groups (a group
    without findings is left out): block style, each value's source as an end-of-line comment.

    PyYAML's dumper cannot write comments, so the sections and keys are laid out here and only the leaf
    values go through `yaml.safe_dump` (in flow style); the text must read back as the config it came
    from. A transform pipeline (a list of one-key mappings, `[{OpName: {kwargs}}, ...]`) is written as a
    block sequence, one op a line, so that each op can carry its own comment (keyed by its index).
    """
    lines = [f"# {_one_line(h)}" if h else "#" for h in header]
    for title, described in findings:
        if described:
            lines.append(f"# {title}")
            lines += [f"#   {_one_line(d)}" for d in described]
    for key, value in config.items():
        lines.append("")
        lines += _emit(key, value, (key,), 0, comments)
    text = "\n".join(lines) + "\n"
    if yaml.safe_load(text) != config:  # the emitter must round-trip exactly
        raise AssertionError("import-mindcv wrote YAML that does not read back as the converted config")
    return text


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _flow(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def _emit(key: str, value: Any, path: KeyPath, depth: int, comments: dict[KeyPath, str]) -> list[str]:
    pad = "  " * depth
    comment = comments.get(path)
    suffix = f"  # {_one_line(comment)}" if comment else ""
    if isinstance(value, dict) and value:
        lines = [f"{pad}{key}:{suffix}"]
        for sub_key, sub_value in value.items():
            lines += _emit(sub_key, sub_value, (*path, sub_key), depth + 1, comments)
        return lines
    if _is_pipeline(value):
        lines = [f"{pad}{key}:{suffix}"]
        for index, entry in enumerate(value):
            ((name, kwargs),) = entry.items()
            note = comments.get((*path, index))
            tail = f"  # {_one_line(note)}" if note else ""
            lines.append(f"{pad}  - {_flow(name)}: {_flow(kwargs)}{tail}")
        return lines
    return [f"{pad}{key}: {_flow(value)}{suffix}"]


def _is_pipeline(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and len(e) == 1 and isinstance(next(iter(e)), str) for e in value)
    )
