"""Rules on several heads (loss.heads): one head per label column, an imported network, per-head metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.catalog.losses import check_loss
from mscodegen.catalog.suggest import did_you_mean
from mscodegen.schema import Config
from mscodegen.schema._base import python_name
from mscodegen.schema.network import ImportedNetwork
from mscodegen.schema.optim import HeadsLoss, head_output, head_weight_constant
from mscodegen.schema.rules._registry import Violation, rule
from mscodegen.schema.training import BINARY_METRIC_NAMES, BuiltinMetric, TopKMetric

# Metrics that take a score per class: BCEWithLogitsLoss's one logit per sample needs the binary ones.
PER_CLASS_METRICS = ("accuracy", "precision", "recall", "f1")


@rule("data", "loss")
def _head_label_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """loss.heads names data.labels, in its order (the network's outputs' order), each once."""
    if not isinstance(cfg.loss, HeadsLoss):
        return
    heads, labels = list(cfg.loss.heads), cfg.data.labels
    for head in heads:
        if head not in labels:
            yield (
                ("loss", "heads", head),
                f"{head!r} is not a label column: each head is one of data.labels ({', '.join(labels)})"
                + did_you_mean(head, [c for c in labels if c not in heads]),
            )
    for i, label in enumerate(labels):
        if label not in heads:
            yield (
                ("data", "labels", i),
                f"label column {label!r} has no head in loss.heads: give it its loss, "
                f"e.g. loss.heads.{label}: {{name: CrossEntropyLoss}}",
            )
    if cfg.data.class_names is not None:
        yield (
            ("data", "class_names"),
            "class_names name the classes of one output; with loss.heads predict.py prints each head's class "
            "indices",
        )
    if set(heads) == set(labels) and heads != labels:
        yield (
            ("loss", "heads"),
            f"the heads are listed as {', '.join(heads)} but the network returns its outputs in data.labels' "
            f"order ({', '.join(labels)}): list them in the same order",
        )
    yield from _head_name_rules(cfg, cfg.loss)


def _head_name_rules(cfg: Config, loss_section: HeadsLoss) -> Iterator[Violation]:
    """The names the scripts make of each head (its weight's constant, its output), and its loss's kwargs."""
    constants: dict[str, str] = {}
    for head, loss in loss_section.heads.items():
        constant = head_weight_constant(head)
        if constant in constants:
            yield (
                ("loss", "heads", head),
                f"{head!r} and {constants[constant]!r} would both set {constant} in the scripts: rename one",
            )
        constants.setdefault(constant, head)
        for local in (head_output(head), f"{python_name(head)}_loss"):
            if local in map(python_name, cfg.data.columns):
                yield (
                    ("loss", "heads", head),
                    f"the scripts name this head's output and loss {head_output(head)} and {python_name(head)}_loss; "
                    f"{local} is a column: rename the column",
                )
        for key, message in check_loss(loss.name, loss.kwargs or {}):
            yield ("loss", "heads", head, *(("kwargs", key) if key is not None else ("kwargs",))), message


@rule("network", "loss")
def _head_network_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    if isinstance(cfg.loss, HeadsLoss) and not isinstance(cfg.network, ImportedNetwork):
        yield (
            ("loss", "heads"),
            f"several heads need a network that returns one output per head, but the {cfg.network.kind} "
            f"network returns one: use your own (network.kind: import)",
        )


@rule("eval", "loss")
def _head_metric_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Each metric of a head names a head; the loss is their weighted sum; binary metrics for BCE heads."""
    if cfg.eval is None:
        return
    heads = cfg.loss.heads if isinstance(cfg.loss, HeadsLoss) else None
    for i, metric in enumerate(cfg.eval.metrics):
        if not isinstance(metric, BuiltinMetric | TopKMetric):
            continue
        at = ("eval", "metrics", i)
        if heads is None:
            if metric.head is not None:
                yield (*at, "head"), "head reads one output of several: it needs loss.heads"
            continue
        if metric.name == "loss":
            if metric.head is not None:
                yield (*at, "head"), "the loss metric is the heads' weighted sum, the loss trained: drop head"
            continue
        if metric.head is None:
            yield (
                at,
                f"with loss.heads, {metric.name} reads one head's output and label: name it, "
                f"e.g. head: {next(iter(heads))}",
            )
        elif metric.head not in heads:
            yield (
                (*at, "head"),
                f"{metric.head!r} is not a head; loss.heads has {', '.join(heads)}"
                + did_you_mean(metric.head, list(heads)),
            )
        else:
            yield from _binary_head_rules(heads[metric.head].name, metric, i)


def _binary_head_rules(loss: str, metric: BuiltinMetric | TopKMetric, i: int) -> Iterator[Violation]:
    """A head trained with BCEWithLogitsLoss gives one logit per sample: binary metrics (and only then)."""
    at = ("eval", "metrics", i, "name")
    if loss == "BCEWithLogitsLoss" and (isinstance(metric, TopKMetric) or metric.name in PER_CLASS_METRICS):
        instead = "binary_accuracy" if isinstance(metric, TopKMetric) else f"binary_{metric.name}"
        yield at, f"head {metric.head} (BCEWithLogitsLoss) gives one logit per sample: use {instead}"
    elif loss != "BCEWithLogitsLoss" and metric.name in BINARY_METRIC_NAMES:
        yield at, f"{metric.name} reads one logit per sample; head {metric.head} has {loss}"
