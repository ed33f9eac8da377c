"""`mscodegen new`: generate the training scripts for a config (and `--check` that generated/ is current)."""

from __future__ import annotations

import argparse
import sys

from mscodegen.cli._common import EXIT_FAIL, EXIT_OK, SubParsers, command, generation_args, prepare


def add(sub: SubParsers) -> None:
    new = command(
        sub,
        "new",
        "generate the training scripts for a config",
        "mscodegen new examples/lenet_digits.yaml --variant native",
    )
    generation_args(new)
    new.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files on disk differ from what would be generated",
    )
    new.add_argument(
        "--force",
        action="store_true",
        help="overwrite files you edited (each is kept as <file>.bak, or .bak.1, ... if that exists); "
        "also replaces a lock that cannot be read, and scripts that are not UTF-8",
    )


def run(args: argparse.Namespace) -> int:
    import shlex

    from mscodegen.output.lock import LOCK_NAME
    from mscodegen.output.write import check, user_edits, write_new

    out_dir, files, meta = prepare(args)
    if args.check:
        stale = check(out_dir, files, meta)
        if stale:
            # `new` refuses to overwrite edited files: point at the command that keeps them. (An
            # unreadable lock or script raises here: one line naming it and `new --force`.)
            edited = sorted(set(stale) & set(user_edits(out_dir))) if (out_dir / LOCK_NAME).exists() else []
            print(f"{out_dir}: out of date: {', '.join(stale)}", file=sys.stderr)
            variant = "" if args.variant == "both" else f" --variant {args.variant}"
            where = f"{shlex.quote(args.config.as_posix())}{variant} --out {shlex.quote(out_dir.as_posix())}"
            if edited:
                print(f"{out_dir}: you edited {', '.join(edited)} (see `mscodegen diff`)", file=sys.stderr)
                print(f"regenerate keeping your edits with: mscodegen update {where}", file=sys.stderr)
            else:
                print(f"regenerate with: mscodegen new {where}", file=sys.stderr)
            return EXIT_FAIL
        print(f"{out_dir}: up to date")
        return EXIT_OK
    report = write_new(out_dir, files, meta, force=args.force)
    for path in report.removed:
        print(f"    removed  {path} (a temp file left by an interrupted run)")
    for name, status in report.statuses.items():
        print(f"{status:>11}  {out_dir / name}")
    for backup in report.backups:
        print(f"     backup  {out_dir / backup}")
    return EXIT_OK
