"""`mscodegen parity`: run both variants and compare them (or stop and resume with `--resume-at`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mscodegen.cli._common import EXIT_CONFIG, SubParsers, command, overrides


def add(sub: SubParsers) -> None:
    parity = command(
        sub,
        "parity",
        "run both variants and compare their per-step losses and final weights (exit 0 equal, 1 not, "
        "2 a usage or config error, 3 a variant ran past --timeout)",
        "mscodegen parity examples/lenet_digits.yaml --steps 20\n"
        "  mscodegen parity generated/lenet_digits      # the scripts as they are on disk, your edits included\n"
        "  mscodegen parity examples/lenet_digits.yaml --python ~/envs/ms-2.8/bin/python   # on MindSpore 2.8",
    )
    parity.add_argument(
        "target",
        type=Path,
        metavar="CONFIG|DIR",
        help="a config (both scripts generated afresh) or a directory written by `mscodegen new` "
        "(its scripts run as they are on disk)",
    )
    overrides(parity)
    parity.add_argument("--steps", type=int, default=20, help="steps to run (default: %(default)s)")
    parity.add_argument("--epochs", type=int, default=None, help="override train.epochs")
    parity.add_argument(
        "--keep", type=Path, default=None, help="keep the scripts, logs and checkpoints in this directory"
    )
    parity.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="seconds per variant run; past it the run is killed and parity exits 3 naming the variant "
        "(default: %(default)s)",
    )
    parity.add_argument(
        "--workers",
        type=int,
        default=None,
        help="run data parallel under msrun with this many workers (parallel.mode data_parallel); "
        "a data_parallel config runs under msrun without it",
    )
    parity.add_argument(
        "--plot", type=Path, default=None, metavar="PNG", help="draw both variants and their difference"
    )
    parity.add_argument(
        "--resume-at",
        type=int,
        default=None,
        metavar="K",
        help="instead: run each variant whole (--steps), then stopped at step K and resumed with --resume latest; "
        "exit 0 when the resumed tail equals the whole run",
    )
    parity.add_argument(
        "--python",
        default=None,
        metavar="PATH",
        help="run the scripts (and msrun, and the weights check) with this interpreter, e.g. another "
        "environment's MindSpore version; mscodegen itself keeps running here (default: this Python)",
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.run.parity import EXIT_TIMEOUT, ScriptTimeout, run_parity

    # refused before anything runs (MindSpore's import alone takes seconds)
    for flag, value, least in (
        ("--steps", args.steps, 1),
        ("--epochs", args.epochs, 1),
        ("--workers", args.workers, 1),
        ("--resume-at", args.resume_at, 1),
    ):
        if value is not None and value < least:
            print(f"error: {flag} must be at least {least} (got {value})", file=sys.stderr)
            return EXIT_CONFIG
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        print(f"error: --keep {args.keep}: is a file; give a folder (created if missing)", file=sys.stderr)
        return EXIT_CONFIG
    if not args.timeout > 0:
        print(
            f"error: --timeout must be a positive number of seconds (got {args.timeout:g})", file=sys.stderr
        )
        return EXIT_CONFIG
    common: dict[str, Any] = {
        "steps": args.steps,
        "epochs": args.epochs,
        "keep": args.keep,
        "timeout": args.timeout,
        "overrides": args.set or (),
        "python": args.python,
    }
    try:
        if args.resume_at is not None:
            from mscodegen.run.resume_parity import run_resume_parity

            return run_resume_parity(args.target, resume_at=args.resume_at, **common)
        return run_parity(args.target, workers=args.workers, plot=args.plot, **common)
    except ScriptTimeout as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_TIMEOUT
