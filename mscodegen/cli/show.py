"""`mscodegen show`: the resolved config, each value with its origin."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_OK, SubParsers, command, load, overrides


def add(sub: SubParsers) -> None:
    show = command(
        sub,
        "show",
        "print the resolved config (bases, --set and defaults applied), each value with its origin",
        "mscodegen show examples/lenet_digits_warmup.yaml --set optimizer.lr=0.1",
    )
    show.add_argument("config", type=Path)
    overrides(show)


def run(args: argparse.Namespace) -> int:
    from mscodegen.config.show import render_show

    sys.stdout.write(render_show(load(args.config, args.set or ())))
    return EXIT_OK
