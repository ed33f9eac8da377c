"""Rules that tie config sections together, and checks against the file system.

Each rule returns problems as (key path, message) so that the error points at the
key to change, with its line in the YAML file.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

from . import Config, image_shape_of
from .data import ImportedData
from .network import BuiltinNetwork, ImportedNetwork
from .optim import PiecewiseLR, WarmupCosineLR
from .training import DEFAULT_METRICS, ImportedMetric

Path_ = tuple[str | int, ...]
Problem = tuple[Path_, str]

LENET5_MIN_SIZE = 16  # two (5x5 valid conv + 2x2 pool) stages need at least 16 pixels per side
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def cross_section_problems(cfg: Config) -> list[Problem]:
    """Every broken rule that involves more than one section."""
    return [
        *_eval_rules(cfg),
        *_early_stopping_rules(cfg),
        *_schedule_rules(cfg),
        *_network_rules(cfg),
        *_precision_rules(cfg),
        *_parallel_rules(cfg),
    ]


def _early_stopping_rules(cfg: Config) -> Iterator[Problem]:
    early = cfg.callbacks.early_stopping
    if early is None:
        return
    if cfg.data.eval is None:
        yield ("callbacks", "early_stopping"), "early stopping watches an evaluation metric: add data.eval"
        return
    keys = metric_keys(cfg)
    if early.monitor not in keys:
        yield (
            ("callbacks", "early_stopping", "monitor"),
            (f"{early.monitor!r} is not an eval metric; eval.metrics gives: {', '.join(keys)}"),
        )


def metric_keys(cfg: Config) -> list[str]:
    """Names of the evaluation results, in order (the keys of Model.eval's dict)."""
    return [metric.key for metric in (cfg.eval.metrics if cfg.eval else DEFAULT_METRICS)]


def _eval_rules(cfg: Config) -> Iterator[Problem]:
    if cfg.eval is not None and cfg.data.eval is None:
        yield ("eval",), "eval is configured but there is no data.eval to evaluate on"
    if cfg.eval is not None:
        seen: set[str] = set()
        for i, key in enumerate(metric_keys(cfg)):
            if key in seen:
                yield ("eval", "metrics", i), f"metric {key!r} is listed twice"
            seen.add(key)


def _schedule_rules(cfg: Config) -> Iterator[Problem]:
    epochs, schedule = cfg.train.epochs, cfg.lr_schedule
    if isinstance(schedule, PiecewiseLR) and schedule.milestones[-1] >= epochs:
        yield (
            ("lr_schedule", "milestones"),
            (
                f"the last milestone ({schedule.milestones[-1]}) must be below train.epochs ({epochs}), "
                "or it never takes effect"
            ),
        )
    if isinstance(schedule, WarmupCosineLR) and schedule.warmup_epochs >= epochs:
        yield (
            ("lr_schedule", "warmup_epochs"),
            (f"warm-up ({schedule.warmup_epochs} epochs) must be shorter than train.epochs ({epochs})"),
        )


def _network_rules(cfg: Config) -> Iterator[Problem]:
    net = cfg.network
    if not isinstance(net, BuiltinNetwork):
        return
    transforms = getattr(cfg.data.train, "transforms", None)
    if transforms is not None and not transforms.hwc_to_chw:
        yield (
            ("data", "train", "transforms", "hwc_to_chw"),
            "builtin networks expect CHW images; keep it true",
        )
    shape = tuple(net.input_shape) if net.input_shape else image_shape_of(cfg.data.train)
    if shape is None:
        yield (
            ("network",),
            (
                f"builtin {net.name} needs the input shape: set network.input_shape "
                "(or data.train.image_shape, or data.train.transforms.resize)"
            ),
        )
    elif net.name == "lenet5" and min(shape[1:]) < LENET5_MIN_SIZE:
        yield (
            ("network", "name"),
            (
                f"lenet5 needs images of at least {LENET5_MIN_SIZE}x{LENET5_MIN_SIZE} but data.train gives "
                f"{shape[1]}x{shape[2]}; add data.train.transforms.resize: [32, 32]"
            ),
        )


def _precision_rules(cfg: Config) -> Iterator[Problem]:
    if cfg.amp.fp32_cells and cfg.amp.level == "O0":
        yield ("amp", "fp32_cells"), "has no effect with amp.level O0 (everything is float32)"
    if cfg.amp.keep_batchnorm_fp32 is not None and cfg.amp.level not in ("O2", "O3"):
        yield ("amp", "keep_batchnorm_fp32"), f"applies to amp.level O2 and O3, not {cfg.amp.level}"
    k = cfg.grad.accumulation_steps
    if k > 1 and not cfg.data.train.drop_remainder:
        yield (
            ("data", "train", "drop_remainder"),
            (
                f"grad.accumulation_steps ({k}) averages micro-batch gradients with equal weights 1/{k}; "
                "a smaller last batch would be over-weighted: keep drop_remainder true"
            ),
        )
    batches = _known_train_batches(cfg)
    if k > 1 and batches is not None and k > batches * cfg.train.epochs:
        yield (
            ("grad", "accumulation_steps"),
            (
                f"{k} is more than the {batches * cfg.train.epochs} batches of the whole run "
                f"({batches} per epoch x {cfg.train.epochs} epochs): no optimizer step would ever be taken"
            ),
        )


def _known_train_batches(cfg: Config) -> int | None:
    """Batches per epoch of data.train when the config alone tells it (synthetic, digits)."""
    spec = cfg.data.train
    if spec.kind == "synthetic":
        samples = spec.num_samples
    elif spec.kind == "digits":
        total = 1797  # sklearn.datasets.load_digits
        test = int(total * spec.test_fraction)
        samples = total - test if spec.split == "train" else test
    else:
        return None
    if spec.drop_remainder:
        return samples // spec.batch_size
    return -(-samples // spec.batch_size)


def _parallel_rules(cfg: Config) -> Iterator[Problem]:
    par = cfg.parallel
    if par.mode == "stand_alone" and par.workers != 1:
        yield ("parallel", "workers"), "more than one worker needs parallel.mode: data_parallel"
    if par.mode == "data_parallel":
        # Only data.train is sharded: every rank evaluates the whole of data.eval with its (identical)
        # replica, so the metrics are those of the full eval set and its batch size is not split.
        dataset = cfg.data.train
        if dataset.batch_size % par.workers:
            yield (
                ("data", "train", "batch_size"),
                (
                    f"{dataset.batch_size} is the global batch and must divide evenly over "
                    f"parallel.workers ({par.workers})"
                ),
            )


def file_problems(cfg: Config, config_dir: Path) -> list[Problem]:
    """Data directories that do not exist, import paths that do not resolve."""
    problems: list[Problem] = []
    for split in ("train", "eval"):
        dataset = getattr(cfg.data, split)
        if dataset is None:
            continue
        if hasattr(dataset, "path"):
            problems += _data_dir_problems(dataset, ("data", split), config_dir)
        if isinstance(dataset, ImportedData):
            problems += _import_problems(dataset.factory, ("data", split, "factory"), config_dir)
    if isinstance(cfg.network, ImportedNetwork):
        problems += _import_problems(cfg.network.factory, ("network", "factory"), config_dir)
    for i, metric in enumerate(cfg.eval.metrics if cfg.eval else []):
        if isinstance(metric, ImportedMetric):
            problems += _import_problems(metric.cls, ("eval", "metrics", i, "class"), config_dir)
    if cfg.grad.process:
        problems += _import_problems(cfg.grad.process, ("grad", "process"), config_dir)
    return problems


def _data_dir_problems(dataset, at: Path_, config_dir: Path) -> list[Problem]:  # noqa: ANN001
    directory = config_dir / dataset.path
    if not directory.is_dir():
        return [(at + ("path",), f"directory {dataset.path!r} does not exist (looked in {directory})")]
    if dataset.kind == "mnist":
        usages = ("train", "test") if dataset.usage == "all" else (dataset.usage,)
        missing = [name for u in usages for name in MNIST_FILES[u] if not (directory / name).is_file()]
        if missing:
            return [(at + ("path",), f"MNIST file(s) missing in {directory}: {', '.join(missing)}")]
    if dataset.kind == "cifar10" and not any(directory.glob("*.bin")):
        return [(at + ("path",), f"no CIFAR-10 binary batches (*.bin) in {directory}")]
    return []


def find_module_file(module: str, config_dir: Path) -> Path | None:
    """Where `module` would be imported from (next to the config, then sys.path), without importing it."""
    parts = module.split(".")
    for root in [config_dir, *(Path(p) for p in sys.path if p)]:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _import_problems(path: str, at: Path_, config_dir: Path) -> list[Problem]:
    module, _, attr = path.partition(":")
    source = find_module_file(module, config_dir)
    if source is None:
        return [(at, f"cannot find module {module!r} (looked next to the config file and on sys.path)")]
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    except (SyntaxError, UnicodeDecodeError) as exc:
        return [(at, f"module {module!r} ({source}) does not parse: {exc}")]
    if attr not in _top_level_names(tree):
        return [(at, f"module {module!r} ({source}) defines no top-level {attr!r}")]
    return []


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names
