"""python -m mscodegen.tools.catalog [ops|losses|mindcv ...] [--print]: rewrite the shipped tables."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mscodegen.catalog import dataset_ops, losses, mindcv_names
from mscodegen.tools.catalog.signatures import dumps


def _text(name: str) -> str:
    """The table's file text, from the installed MindSpore and mindcv (imported only when asked for)."""
    extracted = importlib.import_module(f"mscodegen.tools.catalog.{name}").extract()
    return extracted if isinstance(extracted, str) else dumps(extracted)


TABLES: dict[str, Path] = {
    "ops": dataset_ops.TABLE_FILE,
    "losses": losses.TABLE_FILE,
    "mindcv": mindcv_names.NAMES_FILE,
}


def _count(text: str, path: Path) -> str:
    if path.suffix == ".json":
        table = json.loads(text)
        key = "ops" if "ops" in table else "losses"
        return f"{len(table[key])} {key}"
    return f"{sum(1 for line in text.splitlines() if line and not line.startswith('#'))} names"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mscodegen.tools.catalog",
        description="Rewrite the tables in mscodegen/catalog/data/ from the installed MindSpore and mindcv.",
        epilog="example: python -m mscodegen.tools.catalog losses --print | diff - mscodegen/catalog/data/losses.json",
    )
    parser.add_argument("tables", nargs="*", metavar="TABLE", help=f"{', '.join(TABLES)} (default: all)")
    parser.add_argument("--print", action="store_true", help="write the table to stdout, not to its file")
    args = parser.parse_args(argv)
    names = args.tables or list(TABLES)
    unknown = [name for name in names if name not in TABLES]
    if unknown:
        parser.error(f"no table {unknown[0]!r}: choose from {', '.join(TABLES)}")
    if args.print and len(names) != 1:
        parser.error("--print takes one table")
    for name in names:
        path = TABLES[name]
        text = _text(name)
        if args.print:
            sys.stdout.write(text)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {_count(text, path)} to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
