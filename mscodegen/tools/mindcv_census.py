"""The mindcv census: `import-mindcv` on every recipe of a mindcv checkout, and what became of each.

    python -m mscodegen.tools.mindcv_census MINDCV_CHECKOUT_OR_CONFIGS_DIR [--devices N] [--each]
    make mindcv-census MINDCV=~/src/mindcv

Each recipe (every *.yaml under the folder, or under its configs/) is converted as `import-mindcv` converts
it, the config is written to a temporary folder and validated as `mscodegen validate` validates it (no
MindSpore import; a data folder that is not on this machine does not count). Each recipe ends in one of:

- exact: every argument converted exactly (import-mindcv exits 0);
- approximated: some written, but mscodegen behaves differently (exit 1);
- not converted: some argument mscodegen cannot express (exit 1; approximated ones may come with it);
- refused: import-mindcv writes nothing, with the reason (exit 2: the recipe's own numbers contradict
  each other, or a value is of the wrong type);
- written, not valid: the written config fails validation -- a converter bug, and the census exits 1.

Printed as Markdown (the table of docs/from-mindcv.md): the counts, then per argument the number of
recipes in which it is not converted or approximated, then each refusal with its reason; with --each,
a table of every recipe's result and the arguments behind it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mscodegen.recipes.mindcv import MINDCV_VERSION, RecipeError, convert, header_lines, read_recipe
from mscodegen.recipes.mindcv._check import validate_written

RESULTS = ("exact", "approximated", "not converted", "refused", "written, not valid")


@dataclass
class Census:
    results: dict[str, list[str]] = field(default_factory=lambda: {r: [] for r in RESULTS})
    not_converted: Counter[str] = field(default_factory=Counter)  # argument -> recipes
    approximated: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, str] = field(default_factory=dict)  # refused / invalid recipe -> why
    keys: dict[str, list[str]] = field(default_factory=dict)  # recipe -> its inexact arguments, for --each


def recipes_under(folder: Path) -> tuple[Path, list[Path]]:
    """The folder of recipes (a mindcv checkout's configs/, or `folder`) and its recipes, sorted."""
    root = folder / "configs" if (folder / "configs").is_dir() else folder
    return root, sorted(root.rglob("*.yaml"))


def take(census: Census, name: str, recipe: Path, devices: int, work: Path) -> None:
    """Import `recipe` as `import-mindcv RECIPE -o work/NAME.yaml --devices N` would, and file the result."""
    out = work / f"{recipe.stem}.yaml"
    try:
        data = read_recipe(recipe)
        conversion = convert(data, devices=devices if data.get("distribute") else 1, out_dir=work)
    except RecipeError as exc:
        census.results["refused"].append(name)
        census.reasons[name] = str(exc)
        return
    command = f"mscodegen import-mindcv {name} -o {out.name}"
    out.write_text(conversion.to_yaml(header_lines(recipe, command, devices, conversion)), encoding="utf-8")
    problems, _ = validate_written(out)
    if problems:
        census.results["written, not valid"].append(name)
        census.reasons[name] = "; ".join(f"{p.path}: {p.message}" for p in problems)
        return
    inexact = {"not converted": conversion.not_converted, "approximated": conversion.approximated}
    census.not_converted.update({f.key for f in conversion.not_converted})
    census.approximated.update({f.key for f in conversion.approximated})
    census.keys[name] = [f"{f.key} ({result})" for result, found in inexact.items() for f in found]
    census.results[next((result for result, found in inexact.items() if found), "exact")].append(name)


def take_all(folder: Path, devices: int = 1) -> Census:
    census = Census()
    root, recipes = recipes_under(folder)
    with tempfile.TemporaryDirectory(prefix="mindcv-census-") as work:
        for recipe in recipes:
            take(census, recipe.relative_to(root).as_posix(), recipe, devices, Path(work))
    return census


def each(census: Census) -> str:
    """One line per recipe: its result and what made it so."""
    lines = ["", "| recipe | result | arguments |", "|---|---|---|"]
    for result in RESULTS:
        for name in census.results[result]:
            why = census.reasons.get(name) or ", ".join(census.keys.get(name, []))
            lines.append(f"| `{name}` | {result} | {why} |")
    return "\n".join(lines)


def report(census: Census, folder: Path, devices: int) -> str:
    commit = _commit(folder)
    lines = [
        f"{sum(map(len, census.results.values()))} mindcv recipes under {folder}"
        + (f" (commit {commit})" if commit else "")
        + f", converted with mindcv {MINDCV_VERSION}'s config.py defaults, --devices {devices} "
        "for the recipes with distribute: true.",
        "",
        "| result | recipes |",
        "|---|---:|",
        *(f"| {result} | {len(census.results[result])} |" for result in RESULTS),
        "",
        "| argument | not converted in | approximated in |",
        "|---|---:|---:|",
    ]
    keys = sorted(
        set(census.not_converted) | set(census.approximated),
        key=lambda k: (-(census.not_converted[k] + census.approximated[k]), k),
    )
    for key in keys:
        lines.append(f"| `{key}` | {census.not_converted[key] or ''} | {census.approximated[key] or ''} |")
    for result in ("refused", "written, not valid"):
        if census.results[result]:
            lines += ["", f"{result.capitalize()}:", ""]
            lines += [f"- `{name}`: {census.reasons[name]}" for name in census.results[result]]
    return "\n".join(lines)


def _commit(folder: Path) -> str | None:
    """The mindcv commit, when the folder is in a git checkout."""
    command = ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mscodegen.tools.mindcv_census",
        description="import-mindcv every recipe of a mindcv checkout; print the counts and per-argument tallies",
    )
    parser.add_argument(
        "folder", type=Path, metavar="MINDCV", help="a mindcv checkout, or a folder of recipes"
    )
    parser.add_argument(
        "--devices",
        type=int,
        default=1,
        metavar="N",
        help="--devices for the recipes with distribute: true (default: %(default)s)",
    )
    parser.add_argument("--each", action="store_true", help="then a table of every recipe's result")
    args = parser.parse_args(argv)
    if not args.folder.is_dir() or not recipes_under(args.folder)[1]:
        print(f"error: no *.yaml recipes under {args.folder}", file=sys.stderr)
        return 2
    if args.devices < 1:
        print("error: --devices must be at least 1", file=sys.stderr)
        return 2
    census = take_all(args.folder, args.devices)
    print(report(census, args.folder, args.devices))
    if args.each:
        print(each(census))
    return 1 if census.results["written, not valid"] else 0


if __name__ == "__main__":
    sys.exit(main())
