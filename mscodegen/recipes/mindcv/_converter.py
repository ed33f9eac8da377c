"""The conversion's shared state, and what it produces.

`Converter` is the one mutable object the section rules (`_system`, `_model`, `_data`, `_augmentation`,
`_optim`, `_training`) are given: it reads the recipe's arguments (`Arguments`), writes values and
their comments into the config (`put`), and records what became of each argument (`mapped`,
`ignored`, `unconverted`, `approximated`). `finish` checks that every argument was decided on.
`Conversion` and `Finding` are the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mscodegen.recipes.mindcv._arguments import Arguments
from mscodegen.recipes.mindcv._defaults import DEFAULTS, LEGACY_KEYS, MINDCV_VERSION
from mscodegen.recipes.mindcv._emit import KeyPath, config_yaml

# mscodegen's order of the config's sections (the rules fill them in another order)
SECTIONS = ("runtime", "network", "data", "loss", "optimizer", "lr_schedule", "train")


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


class Converter(Arguments):
    """The recipe's arguments, the config being written, and what became of each argument."""

    def __init__(self, recipe: dict[str, Any], devices: int, out_dir: Path) -> None:
        super().__init__(recipe)
        self.devices = devices
        self.out_dir = out_dir
        self.done: set[str] = set()
        self.comments: dict[KeyPath, str] = {}
        self.result = Conversion({}, self.comments)
        for section in SECTIONS:
            self.result.config[section] = {}

    def mapped(self, *keys: str) -> None:
        self.done.update(keys)

    def ignored(self, key: str, reason: str) -> None:
        self.done.add(key)
        if self.given(key):
            self.result.ignored.append(Finding(key, self.raw(key), reason, False))

    def unconverted(self, key: str, reason: str) -> None:
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
