"""Plan of fine-tuning, weight averaging and distillation: network.checkpoint, network.freeze, ema, distill."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mscodegen.plan.setup import ImportedName, Network, Relative, build_network
from mscodegen.schema import Config


@dataclass(frozen=True, slots=True)
class Pretrained:
    """network.checkpoint: weights loaded into the network in build_network()."""

    path: str  # relative to the generated script (or absolute)
    source: str  # as the config wrote it
    skip: tuple[str, ...]
    strict: bool


@dataclass(frozen=True, slots=True)
class Freeze:
    """network.freeze: trainable parameters set requires_grad=False in build_network(), or, with `epochs`,
    an optimizer group of their own whose LR is 0 for those epochs."""

    patterns: tuple[str, ...]
    epochs: int | None = None  # network.freeze.epochs; None: the whole run

    @property
    def kind(self) -> Literal["whole_run", "first_epochs"]:
        return "whole_run" if self.epochs is None else "first_epochs"


def build_pretrained(cfg: Config, rel: Relative) -> Pretrained | None:
    ckpt = cfg.network.checkpoint
    if ckpt is None:
        return None
    return Pretrained(rel.path(ckpt.path), ckpt.path, tuple(ckpt.skip), ckpt.strict)


def build_freeze(cfg: Config) -> Freeze | None:
    freeze = cfg.network.freeze
    if freeze is None:
        return None
    return Freeze(tuple(freeze.patterns), freeze.epochs)


@dataclass(frozen=True, slots=True)
class Ema:
    """ema: the EMA cell, updated after every optimizer step; evaluation and checkpoints use it."""

    decay: float
    warmup_steps: int


def build_ema(cfg: Config) -> Ema | None:
    return None if cfg.ema is None else Ema(cfg.ema.decay, cfg.ema.warmup_steps)


@dataclass(frozen=True, slots=True)
class Distill:
    """distill: the frozen teacher train() builds, whose logits WithDistillLoss softens."""

    teacher: Network  # built as network: is
    checkpoint: str  # distill.teacher.checkpoint.path, relative to the generated script (or absolute)
    classes: tuple[str, ...]  # the teacher's classes the script writes besides the student's

    @property
    def imports(self) -> tuple[ImportedName, ...]:
        """What load_teacher() imports: an imported teacher's factory."""
        return (self.teacher.factory,) if self.teacher.factory else ()


def build_distill(cfg: Config, rel: Relative, student: Network) -> Distill | None:
    if cfg.distill is None:
        return None
    teacher = build_network(cfg, rel, cfg.distill.teacher, "distill.teacher")
    ckpt = cfg.distill.teacher.checkpoint
    assert ckpt is not None  # schema/rules/distill.py
    classes = tuple(c for c in teacher.classes if c not in student.classes)
    return Distill(teacher, rel.path(ckpt.path), classes)
