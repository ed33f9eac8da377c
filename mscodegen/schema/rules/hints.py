"""Hints: what is not wrong in a config but will surprise its user. `validate` prints them as warnings and
`parity` as hints when the variants differ; neither refuses the config.

Dropout on CPU: the two variants train `==` only with `runtime.cpu_threads: 1`. A network is known to have
Dropout from the config alone, never by importing MindSpore: a mindcv model given `drop_rate` or
`drop_path_rate` above 0 (mindcv's DropPath is a Dropout), or an imported network whose own definition
calls Dropout (read from its source). The builtin networks have none.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from mscodegen.schema import Config
from mscodegen.schema.gan import GanConfig
from mscodegen.schema.network import ImportedNetwork, MindcvNetwork
from mscodegen.schema.rules._registry import KeyPath, Violation
from mscodegen.schema.rules.modules import DEFINITIONS, find_module_file, networks

DROPOUT_CALLS = frozenset(
    {"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "dropout", "dropout1d", "dropout2d", "dropout3d"}
)
MINDCV_DROPOUT_KWARGS = ("drop_rate", "drop_path_rate")


def dropout_hints(cfg: Config | GanConfig, config_dir: Path) -> list[Violation]:
    """At each network key that shows Dropout, when the scripts run on CPU with cpu_threads other than 1."""
    threads = cfg.runtime.cpu_threads
    if cfg.runtime.device_target != "CPU" or threads == 1:
        return []
    now = "unset" if threads is None else str(threads)
    return [
        (
            at,
            f"{what} has Dropout: on CPU the two variants train identically only with runtime.cpu_threads: 1 "
            f"(now {now}); set it for `mscodegen parity` to give ==",
        )
        for at, what in _dropout_sites(cfg, config_dir)
    ]


def _dropout_sites(cfg: Config | GanConfig, config_dir: Path) -> Iterator[tuple[KeyPath, str]]:
    for at, net in networks(cfg, ("network", "gan")):  # the trained ones: not distill.teacher
        if isinstance(net, MindcvNetwork):
            for key in MINDCV_DROPOUT_KWARGS:
                value = net.kwargs.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    yield (*at, "kwargs", key), f"mindcv's {net.name} with {key} {value}"
                    break
        elif isinstance(net, ImportedNetwork) and _calls_dropout(net.factory, config_dir):
            yield (*at, "factory"), net.factory


def _calls_dropout(path: str, config_dir: Path) -> bool:
    """`module:name`'s own definition (class or function, read from its source) calls a Dropout with a rate
    that is not a literal 0. What it builds from elsewhere cannot be told without importing it."""
    module, _, attr = path.partition(":")
    source = find_module_file(module, config_dir)
    if source is None:
        return False
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return False
    definitions = [node for node in tree.body if isinstance(node, DEFINITIONS) and node.name == attr]
    return any(
        isinstance(node, ast.Call) and _called_name(node.func) in DROPOUT_CALLS and not _zero_rate(node)
        for definition in definitions
        for node in ast.walk(definition)
    )


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _zero_rate(call: ast.Call) -> bool:
    """nn.Dropout(p=0.0) / ops.dropout(x, p=0): a literal rate of 0 drops nothing."""
    return any(
        k.arg == "p" and isinstance(k.value, ast.Constant) and k.value.value in (0, 0.0)
        for k in call.keywords
    )
