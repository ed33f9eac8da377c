"""The rule registry: each cross-section rule names the sections it reads, and runs only when they validated.

A rule reads a Config or a GanConfig: one naming a section only one of them has (network, gan) never
sees the other; one naming only sections both have (data, parallel, amp) reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig

KeyPath = tuple[str | int, ...]
# A broken rule: the key to change, and why (config.errors.Problem adds the position).
Violation = tuple[KeyPath, str]
Rule = Callable[[Any, Path | None], Iterable[Violation]]  # Any: a Config or a GanConfig (see above)


# The top-level sections, and data.train alone: a broken data.eval leaves the rules that read only
# data.train running.
SECTIONS = frozenset({*Config.model_fields, "data.train"})
GAN_SECTIONS = frozenset({*GanConfig.model_fields, "data.train"})
_RULES: list[tuple[frozenset[str], Rule]] = []


def rule(*sections: str) -> Callable[[Rule], Rule]:
    """Register a rule that reads `sections` of the config (it runs only when they all validated)."""

    def register(function: Rule) -> Rule:
        _RULES.append((frozenset(sections), function))
        return function

    return register


def cross_section_problems(
    cfg: Config | GanConfig, config_dir: Path | None = None, valid: Collection[str] | None = None
) -> list[Violation]:
    """Every broken rule that involves more than one section.

    `config_dir` lets the rules count samples and classes of file sources (None: skip those).
    `valid`: the sections that passed the schema (the others are not looked at); default: all of cfg's.
    """
    if valid is None:
        valid = GAN_SECTIONS if isinstance(cfg, GanConfig) else SECTIONS
    return [
        problem for sections, rule in _RULES if sections <= set(valid) for problem in rule(cfg, config_dir)
    ]
