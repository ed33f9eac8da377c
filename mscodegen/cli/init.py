"""`mscodegen init`: list the shipped example configs, or copy one out as a starting point."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_CONFIG, EXIT_OK, SubParsers


def add(sub: SubParsers) -> None:
    init = sub.add_parser(
        "init",
        help="start from a shipped example: list them, or copy one (with its data and helpers) to a new config",
        description="Copy an example config shipped with mscodegen to CONFIG, with what it reads beside it "
        "(bases, small data folders, helper modules), so that `mscodegen new CONFIG` works at once. "
        "Nothing that exists is overwritten.",
        epilog="examples:\n  mscodegen init --list\n  mscodegen init quickstart my.yaml && mscodegen new my.yaml\n"
        "  python generated/my/train_model.py --max-steps 5",
    )
    init.add_argument("example", nargs="?", help="an example's name, or a unique part of it (quickstart)")
    init.add_argument("config", nargs="?", type=Path, help="the config to write (default: ./<example>.yaml)")
    init.add_argument("--list", action="store_true", help="list the examples, one line each")


def run(args: argparse.Namespace) -> int:
    from mscodegen.output.starter import StarterError, copy_example, find_example, list_examples

    if args.list or args.example is None:
        examples = list_examples()
        width = max(len(e.name) for e in examples)
        for example in examples:
            print(f"{example.name:<{width}}  {example.summary}")
        if not args.list:
            print("\ncopy one: mscodegen init NAME [CONFIG.yaml]", file=sys.stderr)
        return EXIT_OK
    try:
        example = find_example(args.example)
        copied = copy_example(example, args.config or Path(f"{example.name}.yaml"))
    except StarterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    for path in copied.written:
        print(f"      wrote  {path}")
    for path in copied.kept:
        print(f"   kept yours  {path}")
    for command in copied.run_first:
        print(f"then run first: {command}")
    print(f"next: mscodegen new {copied.config}")
    return EXIT_OK
