"""Plan of several heads (loss.heads): each head's loss and weight, and the head each metric reads."""

from __future__ import annotations

from dataclasses import dataclass, replace

from mscodegen.catalog.literals import Call
from mscodegen.plan.loop import Constant
from mscodegen.plan.setup import Loss, Metric, nn_loss
from mscodegen.schema import Config
from mscodegen.schema.optim import HeadsLoss, head_output, head_weight_constant
from mscodegen.schema.training import eval_metrics


@dataclass(frozen=True, slots=True)
class Head:
    name: str  # its label column
    loss: str  # the mindspore.nn loss's name
    call: Call  # how train() builds its loss
    weight: float
    constant: str  # the weight's constant: DIGIT_LOSS_WEIGHT
    output: str  # what the cells call its output: digit_logits


@dataclass(frozen=True, slots=True)
class Heads:
    """The heads in data.labels order: the order of the network's outputs and of the label columns."""

    heads: tuple[Head, ...]

    @property
    def outputs(self) -> str:
        """The network's outputs unpacked: `digit_logits, parity_logits`."""
        return ", ".join(h.output for h in self.heads)

    @property
    def summary(self) -> str:
        """HeadsLoss's docstring: `DIGIT_LOSS_WEIGHT x digit's CrossEntropyLoss + ...`."""
        return " + ".join(f"{h.constant} x {h.name}'s {h.loss}" for h in self.heads)

    @property
    def constants(self) -> tuple[Constant, ...]:
        return tuple(Constant(h.constant, h.weight, f"loss.heads.{h.name}.weight") for h in self.heads)


def build_heads(cfg: Config) -> Heads | None:
    if not isinstance(cfg.loss, HeadsLoss):
        return None
    return Heads(
        tuple(
            Head(
                name,
                loss.name,
                nn_loss(loss.name, loss.kwargs),
                loss.weight,
                head_weight_constant(name),
                head_output(name),
            )
            for name, loss in cfg.loss.heads.items()
        )
    )


def heads_loss(heads: Heads) -> Loss:
    """loss_fn: HeadsLoss(one loss per head, in data.labels order), the cell the script writes."""
    return Loss(Call("HeadsLoss", (), tuple((f"{h.name}_loss", h.call) for h in heads.heads)))


def with_heads(cfg: Config, heads: Heads, metrics: tuple[Metric, ...]) -> tuple[Metric, ...]:
    """The metrics, those of a head in HeadMetric(metric, its position) (the loss and imported metrics read
    every head's outputs)."""
    if not metrics:  # no data.eval
        return metrics
    names = [h.name for h in heads.heads]
    out = []
    for metric, entry in zip(
        metrics, eval_metrics(cfg.eval, cfg.loss.name, {h.name: h.loss for h in heads.heads}), strict=True
    ):
        head = getattr(entry, "head", None)
        index = None if head is None else names.index(head)
        out.append(
            metric
            if index is None
            else replace(metric, call=Call("HeadMetric", (metric.call, index)), head=index)
        )
    return tuple(out)
