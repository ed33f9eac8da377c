"""The rule registry: each cross-section rule names the sections it reads, and runs only when they validated."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from mscodegen.schema import Config

KeyPath = tuple[str | int, ...]
Violation = tuple[
    KeyPath, str
]  # a broken rule: the key to change, and why (config.errors.Problem adds the position)
Rule = Callable[[Config, Path | None], Iterable[Violation]]


# The top-level sections, and data.train alone: a broken data.eval leaves the rules that read only
# data.train running.
SECTIONS = frozenset({*Config.model_fields, "data.train"})
_RULES: list[tuple[frozenset[str], Rule]] = []


def rule(*sections: str) -> Callable[[Rule], Rule]:
    """Register a rule that reads `sections` of the config (it runs only when they all validated)."""

    def register(function: Rule) -> Rule:
        _RULES.append((frozenset(sections), function))
        return function

    return register


def cross_section_problems(
    cfg: Config, config_dir: Path | None = None, valid: Collection[str] = SECTIONS
) -> list[Violation]:
    """Every broken rule that involves more than one section.

    `config_dir` lets the rules count samples and classes of file sources (None: skip those).
    `valid`: the sections that passed the schema (the others are not looked at).
    """
    return [
        problem for sections, rule in _RULES if sections <= set(valid) for problem in rule(cfg, config_dir)
    ]
