"""`mscodegen explain`: the script lines a key produced, or the keys behind a line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_CONFIG, EXIT_OK, SubParsers, command, load, overrides


def add(sub: SubParsers) -> None:
    explain = command(
        sub,
        "explain",
        "print the script lines a config key produced (per variant), or the keys behind a script line",
        "mscodegen explain examples/lenet_amp_accum.yaml loss_scale\n"
        "  mscodegen explain generated/lenet_amp_accum/train_native.py:150",
    )
    explain.add_argument("target", metavar="CONFIG | SCRIPT:LINE")
    explain.add_argument("key", nargs="?", default=None, help="a dotted config key (with CONFIG)")
    explain.add_argument("--out", type=Path, default=None, help="output directory the scripts are for")
    overrides(explain)


def run(args: argparse.Namespace) -> int:
    from mscodegen.output.explain import ExplainError, explain_config_key, explain_script_line, parse_target
    from mscodegen.output.generate import default_out_dir

    try:
        at_line = parse_target(args.target, [args.key] if args.key else [])
        if at_line is not None:
            sys.stdout.write(explain_script_line(*at_line, load=load))
            return EXIT_OK
    except ExplainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.key is None:
        print("error: give a KEY after the config (or SCRIPT:LINE alone)", file=sys.stderr)
        return EXIT_CONFIG
    loaded = load(Path(args.target), args.set or ())
    out_dir = args.out or default_out_dir(loaded)
    sys.stdout.write(explain_config_key(loaded, args.key, out_dir))
    return EXIT_OK
