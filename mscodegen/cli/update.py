"""`mscodegen update`: regenerate and 3-way merge with the user's edits."""

from __future__ import annotations

import argparse
import sys

from mscodegen.cli._common import EXIT_FAIL, EXIT_OK, SubParsers, command, generation_args, prepare


def add(sub: SubParsers) -> None:
    update = command(
        sub,
        "update",
        "regenerate and 3-way merge with your edits (conflicts get markers, exit 1)",
        "mscodegen update examples/lenet_digits.yaml --dry-run",
    )
    generation_args(update)
    update.add_argument("--dry-run", action="store_true", help="print the diff it would apply; write nothing")
    update.add_argument(
        "--force",
        action="store_true",
        help="merge even into a directory generated from another config (its lock names that config)",
    )


def run(args: argparse.Namespace) -> int:
    from mscodegen.output.write import update

    out_dir, files, meta = prepare(args, same_config=True)
    report = update(out_dir, files, meta, dry_run=args.dry_run)
    if args.dry_run:
        for text in report.diffs.values():
            sys.stdout.write(text)
        if not any(report.diffs.values()):
            print(f"{out_dir}: nothing to change")
        for name, line in report.conflicts:
            print(
                f"{out_dir / name}:{line}: would conflict with your edit (nothing was written)",
                file=sys.stderr,
            )
        return EXIT_FAIL if report.conflicts else EXIT_OK
    for path in report.removed:
        print(f"   removed  {path} (a temp file left by an interrupted run)")
    for name, status in report.statuses.items():
        print(f"{status:>10}  {out_dir / name}")
    for name, line in report.conflicts:
        print(
            f"{out_dir / name}:{line}: conflict between your edit and the regenerated code", file=sys.stderr
        )
    if report.conflicts:
        kept = ", ".join(str(out_dir / name) for name in report.originals)
        print(f"resolve the <<<<<<< / >>>>>>> blocks; your edited files are kept as {kept}", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK
