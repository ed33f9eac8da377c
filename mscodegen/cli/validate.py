"""`mscodegen validate`: check configs statically, and with `--run` by training one batch per variant."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mscodegen.cli._common import EXIT_CONFIG, EXIT_OK, SubParsers, command, load, overrides

if TYPE_CHECKING:
    from mscodegen.config.load import LoadedConfig


def add(sub: SubParsers) -> None:
    validate = command(
        sub,
        "validate",
        "check a config; print every problem with key path and line:column",
        "mscodegen validate examples/resnet.yaml\n  mscodegen validate examples/resnet.yaml --run   "
        "# then train one batch per variant (imports MindSpore)",
    )
    validate.add_argument("config", type=Path, nargs="+")
    overrides(validate)
    validate.add_argument(
        "--run",
        action="store_true",
        help="after the static checks, generate both scripts into a temporary directory and run each "
        "with --fast-dev-run (one train batch with a real forward/backward/update, one eval batch, "
        "nothing written); a failure is mapped back to the YAML key that caused it. Costs what two "
        "short trainings cost: each variant imports MindSpore, compiles the network and trains one "
        "batch (seconds to minutes; the output directory is never touched)",
    )
    validate.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="with --run: seconds per variant (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.config.errors import ConfigError
    from mscodegen.config.load import hints, weight_problems

    failed = 0
    for path in args.config:
        try:
            loaded = load(path, args.set or ())
            # the files the scripts read when they run (network.checkpoint.path), at their key
            problems = weight_problems(loaded)
            if args.run and not problems:
                from mscodegen.run.preflight import run_preflight

                print(
                    f"{loaded.path}: running both variants for one batch (--fast-dev-run)...", file=sys.stderr
                )
                problems = run_preflight(loaded, timeout=args.timeout)
            if problems:
                raise ConfigError(problems, str(loaded.path))
        except ConfigError as exc:
            failed += 1
            print(exc, file=sys.stderr)
            continue
        for hint in hints(loaded):  # not wrong but surprising: a warning, and the config stays valid
            print(f"warning: {hint.format(str(loaded.path))}", file=sys.stderr)
        print(f"{path}: ok" + (" (both variants trained and evaluated one batch)" if args.run else ""))
        _shard_note(loaded, args.run)
    return EXIT_CONFIG if failed else EXIT_OK


def _shard_note(loaded: LoadedConfig, ran: bool) -> None:
    """What validate says of a data-parallel factory: checked by --run, or not checked yet."""
    from mscodegen.run.shards import sharded_factory

    if not sharded_factory(loaded):
        return
    if ran:
        print(f"{loaded.path}: data.train.factory's dataset takes a sampler per worker (data parallel)")
    else:
        print(
            f"note: {loaded.path}: data.train.factory is not called without --run: under data parallel its "
            "dataset must be random-access (__getitem__) to be sharded; validate --run checks it",
            file=sys.stderr,
        )
