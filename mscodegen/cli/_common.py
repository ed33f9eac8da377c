"""What the commands share: exit codes, the subcommand parser helper, --out/--variant/--set, loading."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from mscodegen.config.load import LoadedConfig
    from mscodegen.output.lock import LockMeta
    from mscodegen.plan import Variant

SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # add_subparsers()'s

EXIT_OK, EXIT_FAIL, EXIT_CONFIG = 0, 1, 2


def command(sub: SubParsers, name: str, help_: str, example: str) -> argparse.ArgumentParser:
    """A subcommand whose --help shows its description and an example."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_,
        description=help_,
        epilog=f"example:\n  {example}",
    )
    return parser


def generation_args(p: argparse.ArgumentParser) -> None:
    """What `new` and `update` generate from: the config, --out, --variant, --set."""
    p.add_argument("config", type=Path)
    p.add_argument("--out", type=Path, default=None, help="output directory (default: generated/<name>)")
    p.add_argument(
        "--variant",
        choices=("model", "native", "both"),
        default="both",
        help="which script(s) to write (default: %(default)s)",
    )
    overrides(p)


def overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="override one config value (repeatable; dotted keys, list indices: metrics.0.name=loss; "
        "the value is read as YAML: 'network.input_shape=[3, 32, 32]', and a mapping replaces the key "
        "whole: 'optimizer={name: adam, lr: 0.001}'). `new`/`update` record them in the lock; without "
        "--set, `update` and `new --check` reuse the recorded ones",
    )


def load(path: Path, overrides: Sequence[str] = ()) -> LoadedConfig:
    """load_config, with any unexpected failure of the reader turned into a located ConfigError."""
    from mscodegen.config.errors import ConfigError, Problem
    from mscodegen.config.load import load_config

    try:
        return load_config(path, overrides)
    except ConfigError:
        raise
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - no traceback for any input
        message = f"cannot read this config ({type(exc).__name__}: {exc}); please report it"
        raise ConfigError([Problem("", 1, 1, message)], str(path)) from None


def prepare(args: argparse.Namespace, *, same_config: bool = False) -> tuple[Path, dict[str, str], LockMeta]:
    """The output directory, the generated files and their lock metadata for `args.config`.

    Without --set, the overrides recorded in the directory's lock are reused when the lock is this
    config's. With ``same_config`` (update), a directory generated from another config is refused
    unless --force. An unreadable lock raises LockError, except under --force (`new --force`
    replaces it).
    """
    from mscodegen.output.generate import default_out_dir, generate, lock_meta
    from mscodegen.output.lock import LOCK_NAME, LockError, read_lock
    from mscodegen.output.lock import same_config as same
    from mscodegen.output.write import OtherConfigError

    loaded = load(args.config, args.set or ())
    out_dir = args.out or default_out_dir(loaded)
    if (out_dir / LOCK_NAME).exists():
        try:
            lock = read_lock(out_dir)
        except LockError:
            if not args.force:
                raise
            lock = None
        ours = lock is not None and same(lock, out_dir, args.config)
        if lock is not None and not ours and same_config and not args.force:
            raise OtherConfigError(out_dir, lock.config_path(out_dir).as_posix(), args.config)
        if args.set is None and lock is not None and ours and lock.meta.overrides:
            loaded = load(args.config, lock.meta.overrides)  # reproduce the scripts as they were made
    variants: tuple[Variant, ...] = ("model", "native") if args.variant == "both" else (args.variant,)
    return out_dir, generate(loaded, out_dir, variants), lock_meta(loaded, out_dir)
