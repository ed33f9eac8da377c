"""Checks against the file system and the user's own modules, read statically (never imported):
data folders, weight files, factories' import paths, keyword arguments and names.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from mscodegen.catalog.suggest import did_you_mean
from mscodegen.schema import Config
from mscodegen.schema._base import python_name
from mscodegen.schema.data import ImportedData
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.network import BuiltinNetwork, ImportedNetwork
from mscodegen.schema.optim import ImportedLoss
from mscodegen.schema.rules._registry import SECTIONS, KeyPath, Violation
from mscodegen.schema.training import ImportedMetric

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # the nodes that define a name
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def _valid_splits(valid: Collection[str]) -> tuple[str, ...]:
    """The data splits that passed the schema."""
    return ("train", "eval") if "data" in valid else ("train",) if "data.train" in valid else ()


def _kwargs_sites(cfg: Config, valid: Collection[str]) -> Iterator[tuple[KeyPath, dict[str, object]]]:
    if "network" in valid and not isinstance(cfg.network, BuiltinNetwork):
        yield ("network", "kwargs"), cfg.network.kwargs
    for split in _valid_splits(valid):
        spec = getattr(cfg.data, split)
        if isinstance(spec, ImportedData):
            yield ("data", split, "kwargs"), spec.kwargs
    if "loss" in valid and cfg.loss.kwargs:
        yield ("loss", "kwargs"), cfg.loss.kwargs
    if "eval" in valid and cfg.eval is not None:
        for i, metric in enumerate(cfg.eval.metrics):
            if isinstance(metric, ImportedMetric):
                yield ("eval", "metrics", i, "kwargs"), metric.kwargs


def identifier_problems(cfg: Config, valid: Collection[str] = SECTIONS) -> list[Violation]:
    """Keyword names that Python reads as one (NFKC). An imported name that is one of the script's own
    is imported under another (plan/setup.py `_alias`), so no name is refused."""
    problems: list[Violation] = []
    for at, kwargs in _kwargs_sites(cfg, valid):
        seen: dict[str, str] = {}
        for key in kwargs:
            normal = python_name(key)
            if normal in seen:
                same = f"{key!r} and {seen[normal]!r} are the same keyword argument {normal!r} to Python"
                problems.append(((*at, key), f"{same} (it NFKC-normalizes identifiers)"))
            seen.setdefault(normal, key)
    return problems


def file_problems(
    cfg: Config | GanConfig, config_dir: Path, valid: Collection[str] = SECTIONS
) -> list[Violation]:
    """Data directories that do not exist, import paths that do not resolve."""
    problems: list[Violation] = []
    for split in _valid_splits(valid):
        dataset = getattr(cfg.data, split)
        if hasattr(dataset, "path"):
            problems += _data_dir_problems(dataset, ("data", split), config_dir)
    for at, path, kwargs in _import_sites(cfg, valid):
        problems += _import_problems(path, at, config_dir, kwargs)
    return problems


def _import_sites(cfg: Config | GanConfig, valid: Collection[str]) -> Iterator[tuple[KeyPath, str, Any]]:
    """Each import path of the config: the key that names it, the path, the keyword arguments it is called
    with (data factories, networks: gan's two or network and distill.teacher, metrics, grad.process, loss)."""
    for split in _valid_splits(valid):
        spec = getattr(cfg.data, split)
        if isinstance(spec, ImportedData):
            yield ("data", split, "factory"), spec.factory, spec.kwargs
    for at, net in networks(cfg, valid):
        if isinstance(net, ImportedNetwork):
            yield (*at, "factory"), net.factory, net.kwargs
    if isinstance(cfg, GanConfig):
        return
    for i, metric in enumerate(cfg.eval.metrics if "eval" in valid and cfg.eval else []):
        if isinstance(metric, ImportedMetric):
            yield ("eval", "metrics", i, "class"), metric.cls, metric.kwargs
    if "grad" in valid and cfg.grad.process:
        yield ("grad", "process"), cfg.grad.process, None
    if "loss" in valid and isinstance(cfg.loss, ImportedLoss):
        yield ("loss", "path"), cfg.loss.path, cfg.loss.kwargs


def networks(cfg: Config | GanConfig, valid: Collection[str]) -> list[tuple[KeyPath, object]]:
    """The network sections among `valid`: gan's two, or network and distill.teacher (None: not there)."""
    if isinstance(cfg, GanConfig):
        roles = ("generator", "discriminator") if "gan" in valid else ()
        return [(("gan", role, "network"), getattr(cfg.gan, role).network) for role in roles]
    teacher = cfg.distill.teacher if "distill" in valid and cfg.distill is not None else None
    return [(("network",), cfg.network if "network" in valid else None), (("distill", "teacher"), teacher)]


def weight_file_problems(cfg: Config, config_dir: Path) -> list[Violation]:
    """Files only the scripts read, when they run: checked by `mscodegen validate`, not by `new`
    (weights may be downloaded after generating; the script then stops with the same message).

    network.checkpoint.path and distill.teacher.checkpoint.path must be files (relative to the config).
    """
    problems = []
    teacher = cfg.distill.teacher if cfg.distill is not None else None
    for at, net in (("network",), cfg.network), (("distill", "teacher"), teacher):
        if net is None or net.checkpoint is None:
            continue
        path = net.checkpoint.path
        file = config_dir / path
        if not file.is_file():
            what = "is a directory, not a file" if file.is_dir() else "does not exist"
            problems.append(
                ((*at, "checkpoint", "path"), f"checkpoint file {path!r} {what} (looked in {file})")
            )
    return problems


def _data_dir_problems(dataset: Any, at: KeyPath, config_dir: Path) -> list[Violation]:
    if dataset.kind == "csv":
        file = config_dir / dataset.path
        if file.is_file():
            return []
        what = "is a directory, not a CSV file" if file.is_dir() else "does not exist"
        return [(at + ("path",), f"file {dataset.path!r} {what} (looked in {file})")]
    directory = config_dir / dataset.path
    if not directory.is_dir():
        return [(at + ("path",), f"directory {dataset.path!r} does not exist (looked in {directory})")]
    if dataset.kind == "mnist":
        usages = ("train", "test") if dataset.usage == "all" else (dataset.usage,)
        missing = {u: [name for name in MNIST_FILES[u] if not (directory / name).is_file()] for u in usages}
        # usage all reads whichever of the train and test pairs is there (MindSpore's MnistDataset)
        if all(missing.values()):
            names = [name for u in usages for name in missing[u]]
            either = " (usage all needs the train or the test pair)" if len(usages) > 1 else ""
            return [(at + ("path",), f"MNIST file(s) missing in {directory}: {', '.join(names)}{either}")]
    if dataset.kind == "cifar10" and not any(directory.glob("*.bin")):
        return [(at + ("path",), f"no CIFAR-10 binary batches (*.bin) in {directory}")]
    if dataset.kind == "image_folder" and not any(p.is_dir() for p in directory.iterdir()):
        return [
            (at + ("path",), f"no class sub-directories (one per class, holding its images) in {directory}")
        ]
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


def _import_problems(
    path: str, at: KeyPath, config_dir: Path, kwargs: dict[str, Any] | None = None
) -> list[Violation]:
    module, _, attr = path.partition(":")
    source = find_module_file(module, config_dir)
    if source is None:
        return [(at, f"cannot find module {module!r} (looked next to the config file and on sys.path)")]
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    except (SyntaxError, UnicodeDecodeError) as exc:
        return [(at, f"module {module!r} ({source}) does not parse: {exc}")]
    names = _top_level_names(tree)
    if attr not in names and "*" not in names and "__getattr__" not in names:  # star imports: cannot tell
        return [(at, f"module {module!r} ({source}) defines no top-level {attr!r}")]
    return _keyword_problems(tree, attr, at[:-1], kwargs or {})


def _keyword_problems(tree: ast.Module, attr: str, owner: KeyPath, kwargs: dict[str, Any]) -> list[Violation]:
    """kwargs the called object's signature does not take (read from its source, never imported).

    Only a plain function, or a class with its own __init__, without decorators and **kwargs is
    judged; anything else (a base class's __init__, a decorator, an assignment) cannot be told.
    """
    params = _keyword_parameters(tree, attr)
    if params is None:
        return []
    takes = ", ".join(sorted(params)) or "none"
    return [
        (
            (*owner, "kwargs", key),
            f"{attr}() takes no keyword argument {name!r} (it takes: {takes}){did_you_mean(name, params)}",
        )
        for key in kwargs
        if (name := python_name(key)) not in params
    ]


def _keyword_parameters(tree: ast.Module, attr: str) -> set[str] | None:
    """Names `attr` accepts as keywords, or None when that cannot be read reliably."""
    definitions = [node for node in tree.body if isinstance(node, DEFINITIONS) and node.name == attr]
    others = [
        node for node in tree.body if attr in _top_level_names(ast.Module(body=[node], type_ignores=[]))
    ]
    if len(definitions) != 1 or len(others) != 1 or definitions[0].decorator_list:
        return None  # redefined, imported, or decorated: the signature is not this one
    node = definitions[0]
    if isinstance(node, ast.ClassDef):
        inits = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
        if len(inits) != 1 or inits[0].decorator_list:
            return None  # inherited __init__ (nn.Cell's subclasses, dataclasses): unknown here
        arguments, skip = inits[0].args, 1  # self
    else:
        arguments, skip = node.args, 0
    if arguments.kwarg is not None:
        return None
    return {a.arg for a in [*arguments.args[skip:], *arguments.kwonlyargs]}


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, DEFINITIONS):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names
