"""`mscodegen diff`: the user's edits relative to the pristine generated text."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_FAIL, EXIT_OK, SubParsers, command


def add(sub: SubParsers) -> None:
    diff = command(
        sub,
        "diff",
        "show your edits relative to the pristine generated text",
        "mscodegen diff generated/lenet_digits",
    )
    diff.add_argument(
        "dir",
        type=Path,
        nargs="?",
        default=None,
        help="output directory (default: every directory under generated/ with a lock file)",
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.output.lock import LOCK_NAME
    from mscodegen.output.write import user_edits

    dirs = [args.dir] if args.dir else sorted(p.parent for p in Path("generated").glob(f"*/{LOCK_NAME}"))
    if not dirs:
        print(
            f"no generated/*/{LOCK_NAME} under {Path.cwd()}; name the output directory: mscodegen diff DIR",
            file=sys.stderr,
        )
        return EXIT_FAIL
    edited = False
    for out_dir in dirs:
        for text in user_edits(out_dir).values():
            edited = True
            sys.stdout.write(text)
    if not edited:
        print("no edits: the files match their pristine generated text")
    return EXIT_OK
