"""Plan of fine-tuning and distillation: network.checkpoint, network.freeze, distill."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from mscodegen.plan.loop import Constant, config_constants
from mscodegen.plan.setup import ImportedName, Network, Relative, build_network
from mscodegen.schema import Config


@dataclass(frozen=True, slots=True)
class Pretrained:
    """network.checkpoint: weights (PRETRAINED, but PRETRAINED_SKIP) loaded into the network in build_network()."""

    strict: bool


@dataclass(frozen=True, slots=True)
class Freeze:
    """network.freeze: trainable parameters set requires_grad=False in build_network(), or, with `epochs`,
    an optimizer group of their own whose LR is 0 for those epochs."""

    epochs: int | None = None  # network.freeze.epochs; None: the whole run

    @property
    def kind(self) -> Literal["whole_run", "first_epochs"]:
        return "whole_run" if self.epochs is None else "first_epochs"


@dataclass(frozen=True, slots=True)
class Distill:
    """distill: the frozen teacher train() builds (from TEACHER_CHECKPOINT), whose logits WithDistillLoss softens."""

    teacher: Network  # built as network: is
    classes: tuple[str, ...]  # the teacher's classes the script writes besides the student's

    @property
    def imports(self) -> tuple[ImportedName, ...]:
        """What load_teacher() imports: an imported teacher's factory."""
        return (self.teacher.factory,) if self.teacher.factory else ()


def build_distill(cfg: Config, rel: Relative, student: Network) -> Distill | None:
    if cfg.distill is None:
        return None
    teacher = build_network(cfg, rel, cfg.distill.teacher, "distill.teacher")
    return Distill(teacher, tuple(c for c in teacher.classes if c not in student.classes))


def adapt_constants(
    cfg: Config, rel: Relative, between: tuple[Constant, ...] = ()
) -> tuple[tuple[Constant, ...], ...]:
    """network.checkpoint's and network.freeze's constants (one group), `between` (loss.heads'), distill's."""
    finetune, ckpt, freeze = [], cfg.network.checkpoint, cfg.network.freeze
    if ckpt is not None:
        finetune.append(Constant("PRETRAINED", PurePath(rel.path(ckpt.path)), "network.checkpoint.path"))
        finetune += config_constants(cfg, "network.checkpoint", "skip", prefix="PRETRAINED_")
    if freeze is not None:
        finetune.append(Constant("FREEZE", freeze.patterns, "network.freeze.patterns"))
        if freeze.epochs is not None:
            finetune += config_constants(cfg, "network.freeze", "epochs", prefix="FREEZE_")
    groups = [finetune, list(between)]
    if cfg.distill is not None:
        teacher = cfg.distill.teacher.checkpoint
        assert teacher is not None  # schema/rules/distill.py
        path = PurePath(rel.path(teacher.path))
        groups.append(
            [
                Constant("TEACHER_CHECKPOINT", path, "distill.teacher.checkpoint.path"),
                *config_constants(cfg, "distill", "temperature", "alpha", prefix="DISTILL_"),
            ]
        )
    return tuple(tuple(group) for group in groups if group)
