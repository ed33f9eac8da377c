"""`mscodegen import-mindcv`: convert a mindcv recipe into a mscodegen config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mscodegen.cli._common import EXIT_CONFIG, EXIT_FAIL, EXIT_OK, SubParsers


def add(sub: SubParsers) -> None:
    import_mindcv = sub.add_parser(
        "import-mindcv",
        help="convert a mindcv recipe (its config.py arguments) into a mscodegen config",
        description="Convert a mindcv recipe YAML (the arguments of mindcv's config.py; omitted ones take "
        "mindcv 0.3.0's defaults) into a mscodegen config. Every argument that mscodegen cannot express, "
        "or only approximately, is printed on stderr with its value and listed on top of the written "
        "config, which is then validated as `mscodegen validate` does (a data folder that is not on this "
        "machine yet is only noted). Exit 0: everything converted; 1: something was not (the config is "
        "written anyway); 2: the recipe cannot be read, its own numbers contradict each other (the reason "
        "names the keys; nothing is written), or the written config does not validate.",
        epilog="examples:\n"
        "  mscodegen import-mindcv configs/resnet/resnet_18_ascend.yaml -o resnet18.yaml --devices 8\n"
        "  mscodegen import-mindcv my_recipe.yaml -o my_run.yaml && mscodegen new my_run.yaml\n"
        "  mscodegen import-mindcv recipe.yaml -o run.yaml --data-path ~/data/imagenet --force",
    )
    import_mindcv.add_argument("recipe", type=Path, metavar="RECIPE")
    import_mindcv.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="CONFIG",
        help="config file to write; an existing file is kept unless --force",
    )
    import_mindcv.add_argument("--force", action="store_true", help="overwrite CONFIG if it exists")
    import_mindcv.add_argument(
        "--data-path",
        type=Path,
        default=None,
        metavar="DIR",
        help="the dataset on this machine, instead of the recipe's data_dir: image folders are "
        "DIR/<train_split> and DIR/<val_split>, mnist and cifar10 read DIR (relative to where you run this)",
    )
    import_mindcv.add_argument(
        "--devices",
        type=int,
        default=1,
        metavar="N",
        help="devices the recipe runs on (distribute: true): mindcv's batch_size is per device, "
        "mscodegen's is global, so it is multiplied by N (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    import shlex

    from mscodegen.output.write import atomic_write
    from mscodegen.recipes.mindcv import RecipeError, convert, header_lines, read_recipe

    if args.devices < 1:
        print("error: --devices must be at least 1", file=sys.stderr)
        return EXIT_CONFIG
    if args.output.is_dir() or (args.output.exists() and not args.force):
        what = "is a directory" if args.output.is_dir() else "exists; pass --force to overwrite it"
        print(f"error: {args.output} {what} (nothing was written)", file=sys.stderr)
        return EXIT_CONFIG
    try:
        recipe = read_recipe(args.recipe)
        if args.data_path is not None:
            recipe["data_dir"] = args.data_path.as_posix()
        conversion = convert(recipe, devices=args.devices, out_dir=args.output.parent)
    except RecipeError as exc:
        print(f"error: {args.recipe}: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    command = shlex.join(
        ["mscodegen", "import-mindcv", args.recipe.as_posix(), "-o", args.output.as_posix()]
        + (["--devices", str(args.devices)] if args.devices != 1 else [])
        + (["--data-path", args.data_path.as_posix()] if args.data_path is not None else [])
    )
    try:
        atomic_write(
            args.output, conversion.to_yaml(header_lines(args.recipe, command, args.devices, conversion))
        )
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_CONFIG
    for finding in conversion.approximated:
        print(f"approximated: {finding.describe()}", file=sys.stderr)
    for finding in conversion.not_converted:
        print(f"not converted: {finding.describe()}", file=sys.stderr)
    for note in conversion.notes:
        print(f"note: {note}", file=sys.stderr)
    if not _validates(args.output):
        return EXIT_CONFIG
    print(f"wrote {args.output}")
    return EXIT_OK if conversion.complete else EXIT_FAIL


def _validates(output: Path) -> bool:
    """What `mscodegen validate` says of the written config (no MindSpore import), on stderr; a data
    folder the recipe names that is not on this machine is a note, not a failure."""
    from mscodegen.recipes.mindcv._check import validate_written

    problems, missing_data = validate_written(output)
    for problem in missing_data:
        print(f"note: the recipe's data is not here yet: {problem.path}: {problem.message}", file=sys.stderr)
    if problems:
        print(f"error: wrote {output}, but it does not validate:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem.format(str(output))}", file=sys.stderr)
    return not problems
