"""Plan of fine-tuning and weight averaging: network.checkpoint, network.freeze, ema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mscodegen.plan.setup import Relative
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
