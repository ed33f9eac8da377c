"""`mscodegen plot`: curves from the scripts' records (`mscodegen record`, `parity --keep`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_CONFIG, EXIT_OK, SubParsers


def add(sub: SubParsers) -> None:
    plot = sub.add_parser(
        "plot",
        help="draw loss, LR, loss scale and eval metrics from records (`mscodegen record`, `parity --keep`) into a PNG",
        description="Draw every quantity the logs hold (loss, lr, loss_scale, eval metrics), one "
        "subplot each, one labelled curve per file. Needs matplotlib: pip install -e '.[plot]' in the mscodegen checkout.",
        epilog="examples:\n  mscodegen plot run/loss.jsonl -o loss.png\n"
        "  mscodegen plot model/loss.jsonl native/loss.jsonl model/eval.jsonl -o runs.png",
    )
    plot.add_argument("logs", type=Path, nargs="+", metavar="LOG")
    plot.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="PNG",
        help="the image to write: .png (added when the name has no suffix), .svg or .pdf",
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.run.plot import PlotError, output_path, plot_logs

    try:
        output = output_path(args.output)
        plot_logs(args.logs, output)
    except PlotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"wrote {output}")
    return EXIT_OK
