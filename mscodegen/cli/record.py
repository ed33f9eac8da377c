"""`mscodegen record`: run a generated script and write what it trained as JSON lines, from outside it.

The scripts hold no logging of their own for this tool. `record` starts one with the observer
(mscodegen/run/observer) loaded at start-up and its own command line passed through, so the records
are what MindSpore computed: each step's loss, the learning rate applied, the loss scale; each
evaluation's metrics. `mscodegen plot` draws them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_CONFIG, SubParsers, command


def add(sub: SubParsers) -> None:
    record = command(
        sub,
        "record",
        "run a generated script, writing each step (loss, lr, loss scale) and evaluation to LOGS/*.jsonl",
        "mscodegen record generated/lenet_digits/train_native.py --logs runs/logs -- --epochs 2\n"
        "  mscodegen plot runs/logs/loss.jsonl runs/logs/eval.jsonl -o runs/curves.png",
    )
    record.add_argument("script", type=Path, help="a train_model.py or train_native.py")
    record.add_argument("--logs", type=Path, required=True, help="folder for loss.jsonl and eval.jsonl")
    record.add_argument(
        "script_args", nargs="*", help="after --: the script's own options, e.g. -- --epochs 2"
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.run.observer import observed_env

    script: Path = args.script
    if not script.is_file():
        print(f"error: {script}: no such script", file=sys.stderr)
        return EXIT_CONFIG
    if args.logs.exists() and not args.logs.is_dir():
        print(f"error: --logs {args.logs}: a file; give a folder", file=sys.stderr)
        return EXIT_CONFIG
    args.logs.mkdir(parents=True, exist_ok=True)
    old = [*args.logs.glob("loss*.jsonl"), *args.logs.glob("eval*.jsonl")]
    if old:
        print(
            f"error: --logs {args.logs} holds an earlier run's {old[0].name}: give an empty folder",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    env = observed_env(script, args.logs.resolve())
    returncode = subprocess.run(
        [sys.executable, str(script), *args.script_args], env=env, check=False
    ).returncode
    written = sorted(p.name for p in args.logs.glob("*.jsonl"))
    print(f"records in {args.logs}: {', '.join(written) or 'none (no step was trained)'}", file=sys.stderr)
    return returncode
