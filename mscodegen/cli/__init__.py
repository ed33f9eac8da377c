"""Command line: `mscodegen new|validate|schema|update|diff|parity|show|explain|plot|import-mindcv`.

Start-up must stay fast: nothing here (or below it) imports MindSpore or mindcv.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mscodegen import __version__

if TYPE_CHECKING:
    from mscodegen.config.load import LoadedConfig
    from mscodegen.output.write import LockMeta
    from mscodegen.plan import Variant

EXAMPLES = """\
examples:
  mscodegen new examples/resnet.yaml                 # generated/resnet/train_model.py, train_native.py
  mscodegen new examples/lenet_digits.yaml --variant native
  mscodegen new examples/lenet_digits.yaml --check   # exit 1 if generated/ is out of date
  mscodegen validate examples/resnet.yaml            # every error with key, line:column; exit 2
  mscodegen schema > mscodegen.schema.json           # JSON Schema for editor completion
  mscodegen update examples/lenet_digits.yaml        # regenerate and merge your edits (3-way)
  mscodegen diff generated/lenet_digits              # your edits vs the pristine generated text
  mscodegen parity examples/lenet_digits.yaml --steps 20
  mscodegen parity generated/lenet_digits            # run the scripts on disk (your edits) and compare
  mscodegen parity examples/lenet_digits.yaml --workers 2   # both variants data parallel under msrun
  mscodegen show examples/lenet_digits_warmup.yaml   # the resolved config, each value with its origin
  mscodegen explain examples/lenet_amp_accum.yaml grad.clip   # the script lines a key produced
  mscodegen explain generated/lenet_digits/train_native.py:120   # the keys behind a line
  mscodegen plot outputs/loss.jsonl -o loss.png      # curves from --loss-log/--eval-log files
  mscodegen import-mindcv recipe.yaml -o run.yaml    # a mindcv recipe -> a config, and what did not convert
"""

EXIT_OK, EXIT_FAIL, EXIT_CONFIG = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_CONFIG
    from mscodegen.config.errors import ConfigError
    from mscodegen.output.write import WriteError
    from mscodegen.render.fmt import GeneratedCodeError

    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except GeneratedCodeError as exc:
        print(f"internal error (please report it): {exc}", file=sys.stderr)
        return EXIT_FAIL
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_FAIL
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        count = len(exc.problems)
        print(
            f"{count} problem{'s' if count != 1 else ''} in {exc.source}; nothing was written.",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    except WriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAIL


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mscodegen",
        description="Generate readable MindSpore training scripts (Model API and native loop) from one YAML file.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mscodegen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help_: str, example: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_,
            description=help_,
            epilog=f"example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return p

    new = command(
        "new",
        "generate the training scripts for a config",
        "mscodegen new examples/lenet_digits.yaml --variant native",
    )
    new.add_argument("config", type=Path)
    _out_and_variant(new)
    _overrides(new)
    new.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files on disk differ from what would be generated",
    )
    new.add_argument(
        "--force", action="store_true", help="overwrite files you edited (each is kept as <file>.bak)"
    )
    new.set_defaults(func=_cmd_new)

    validate = command(
        "validate",
        "check a config; print every problem with key path and line:column",
        "mscodegen validate examples/resnet.yaml\n  mscodegen validate examples/resnet.yaml --run   "
        "# then train one batch per variant (imports MindSpore)",
    )
    validate.add_argument("config", type=Path, nargs="+")
    _overrides(validate)
    validate.add_argument(
        "--run",
        action="store_true",
        help="after the static checks, generate both scripts into a temporary directory and run each "
        "with --fast-dev-run (one train batch with a real forward/backward/update, one eval batch, "
        "nothing written); a failure is mapped back to the YAML key that caused it. Costs what two "
        "short trainings cost: each variant imports MindSpore, compiles the network and trains one "
        "batch (seconds to minutes; the output directory is never touched)",
    )
    validate.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="with --run: seconds per variant (default: %(default)s)",
    )
    validate.set_defaults(func=_cmd_validate)

    schema = command(
        "schema",
        "print the config's JSON Schema (for editor completion)",
        "mscodegen schema > mscodegen.schema.json",
    )
    schema.set_defaults(func=_cmd_schema)

    update = command(
        "update",
        "regenerate and 3-way merge with your edits (conflicts get markers, exit 1)",
        "mscodegen update examples/lenet_digits.yaml --dry-run",
    )
    update.add_argument("config", type=Path)
    _out_and_variant(update)
    _overrides(update)
    update.add_argument("--dry-run", action="store_true", help="print the diff it would apply; write nothing")
    update.set_defaults(func=_cmd_update)

    diff = command(
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
    diff.set_defaults(func=_cmd_diff)

    parity = command(
        "parity",
        "run both variants and compare their per-step losses and final weights (exit 0 equal, 1 not)",
        "mscodegen parity examples/lenet_digits.yaml --steps 20\n"
        "  mscodegen parity generated/lenet_digits      # the scripts as they are on disk, your edits included",
    )
    parity.add_argument(
        "target",
        type=Path,
        metavar="CONFIG|DIR",
        help="a config (both scripts generated afresh) or a directory written by `mscodegen new` "
        "(its scripts run as they are on disk)",
    )
    _overrides(parity)
    parity.add_argument("--steps", type=int, default=20, help="steps to run (default: %(default)s)")
    parity.add_argument("--epochs", type=int, default=None, help="override train.epochs")
    parity.add_argument(
        "--keep", type=Path, default=None, help="keep the scripts, logs and checkpoints in this directory"
    )
    parity.add_argument(
        "--timeout", type=float, default=600, help="seconds per variant (default: %(default)s)"
    )
    parity.add_argument(
        "--workers",
        type=int,
        default=None,
        help="run data parallel under msrun with this many workers (parallel.mode data_parallel); "
        "a data_parallel config runs under msrun without it",
    )
    parity.add_argument(
        "--plot", type=Path, default=None, metavar="PNG", help="draw both variants and their difference"
    )
    parity.add_argument(
        "--resume-at",
        type=int,
        default=None,
        metavar="K",
        help="instead: run each variant whole (--steps), then stopped at step K and resumed with --resume latest; "
        "exit 0 when the resumed tail equals the whole run",
    )
    parity.set_defaults(func=_cmd_parity)

    # --- show -------------------------------------------------------------------------------
    show = command(
        "show",
        "print the resolved config (bases, --set and defaults applied), each value with its origin",
        "mscodegen show examples/lenet_digits_warmup.yaml --set optimizer.lr=0.1",
    )
    show.add_argument("config", type=Path)
    _overrides(show)
    show.set_defaults(func=_cmd_show)

    # --- explain ----------------------------------------------------------------------------
    explain = command(
        "explain",
        "print the script lines a config key produced (per variant), or the keys behind a script line",
        "mscodegen explain examples/lenet_amp_accum.yaml loss_scale\n"
        "  mscodegen explain generated/lenet_amp_accum/train_native.py:150",
    )
    explain.add_argument("target", metavar="CONFIG | SCRIPT:LINE")
    explain.add_argument("key", nargs="?", default=None, help="a dotted config key (with CONFIG)")
    explain.add_argument("--out", type=Path, default=None, help="output directory the scripts are for")
    _overrides(explain)
    explain.set_defaults(func=_cmd_explain)

    # --- plot -------------------------------------------------------------------------------
    plot = sub.add_parser(
        "plot",
        help="draw loss, LR, loss scale and eval metrics from --loss-log/--eval-log files into a PNG",
        description="Draw every quantity the logs hold (loss, lr, loss_scale, eval metrics), one "
        "subplot each, one labelled curve per file. Needs matplotlib: pip install 'mscodegen[plot]'.",
        epilog="examples:\n  mscodegen plot run/loss.jsonl -o loss.png\n"
        "  mscodegen plot model/loss.jsonl native/loss.jsonl model/eval.jsonl -o runs.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plot.add_argument("logs", type=Path, nargs="+", metavar="LOG")
    plot.add_argument("-o", "--output", type=Path, required=True, metavar="PNG")
    plot.set_defaults(func=_cmd_plot)

    # --- import-mindcv ----------------------------------------------------------------------
    import_mindcv = sub.add_parser(
        "import-mindcv",
        help="convert a mindcv recipe (its config.py arguments) into a mscodegen config",
        description="Convert a mindcv recipe YAML (the arguments of mindcv's config.py; omitted ones take "
        "mindcv 0.3.0's defaults) into a mscodegen config. Every argument that mscodegen cannot express, "
        "or only approximately, is printed on stderr with its value and listed on top of the written "
        "config. Exit 0: everything converted; 1: something was not (the config is written anyway); "
        "2: the recipe cannot be read or the config cannot be written.",
        epilog="examples:\n"
        "  mscodegen import-mindcv configs/resnet/resnet_18_ascend.yaml -o resnet18.yaml --devices 8\n"
        "  mscodegen import-mindcv my_recipe.yaml -o my_run.yaml && mscodegen new my_run.yaml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    import_mindcv.add_argument("recipe", type=Path, metavar="RECIPE")
    import_mindcv.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="CONFIG",
        help="config file to write (overwritten)",
    )
    import_mindcv.add_argument(
        "--devices",
        type=int,
        default=1,
        metavar="N",
        help="devices the recipe runs on (distribute: true): mindcv's batch_size is per device, "
        "mscodegen's is global, so it is multiplied by N (default: %(default)s)",
    )
    import_mindcv.set_defaults(func=_cmd_import_mindcv)
    return parser


def _out_and_variant(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None, help="output directory (default: generated/<name>)")
    p.add_argument(
        "--variant",
        choices=("model", "native", "both"),
        default="both",
        help="which script(s) to write (default: %(default)s)",
    )


def _overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="override one config value (repeatable; dotted keys, list indices: metrics.0.name=loss; "
        "the value is read as a YAML scalar). `new`/`update` record them in the lock; without --set, "
        "`update` and `new --check` reuse the recorded ones",
    )


def _load(path: Path, overrides: Sequence[str] = ()) -> LoadedConfig:
    """load_config, with any unexpected failure of the reader turned into a located ConfigError."""
    from mscodegen.config.errors import ConfigError, Problem
    from mscodegen.config.load import load_config

    try:
        return load_config(path, overrides)
    except ConfigError:
        raise
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - no traceback for any input
        message = f"cannot read this config ({type(exc).__name__}: {exc}); please report it"
        raise ConfigError([Problem("", 1, 1, message)], str(path)) from None


def _prepare(args: argparse.Namespace) -> tuple[Path, dict[str, str], LockMeta]:
    from mscodegen.output.generate import default_out_dir, generate, lock_meta
    from mscodegen.output.write import LOCK_NAME, read_lock

    loaded = _load(args.config, args.set or ())
    out_dir = args.out or default_out_dir(loaded)
    if args.set is None and (out_dir / LOCK_NAME).is_file():
        lock = read_lock(out_dir)  # reproduce the scripts with the overrides they were made with
        if lock is not None and lock.meta.overrides:
            loaded = _load(args.config, lock.meta.overrides)
    variants: tuple[Variant, ...] = ("model", "native") if args.variant == "both" else (args.variant,)
    return out_dir, generate(loaded, out_dir, variants), lock_meta(loaded)


def _cmd_new(args: argparse.Namespace) -> int:
    import shlex

    from mscodegen.output.write import LOCK_NAME, check, user_edits, write_new

    out_dir, files, meta = _prepare(args)
    if args.check:
        stale = check(out_dir, files, meta)
        if stale:
            print(f"{out_dir}: out of date: {', '.join(stale)}", file=sys.stderr)
            variant = "" if args.variant == "both" else f" --variant {args.variant}"
            where = f"{shlex.quote(args.config.as_posix())}{variant} --out {shlex.quote(out_dir.as_posix())}"
            # `new` refuses to overwrite edited files: point at the command that keeps them.
            edited = sorted(set(stale) & set(user_edits(out_dir))) if (out_dir / LOCK_NAME).exists() else []
            if edited:
                print(f"{out_dir}: you edited {', '.join(edited)} (see `mscodegen diff`)", file=sys.stderr)
                print(f"regenerate keeping your edits with: mscodegen update {where}", file=sys.stderr)
            else:
                print(f"regenerate with: mscodegen new {where}", file=sys.stderr)
            return EXIT_FAIL
        print(f"{out_dir}: up to date")
        return EXIT_OK
    report = write_new(out_dir, files, meta, force=args.force)
    for name, status in report.statuses.items():
        print(f"{status:>11}  {out_dir / name}")
    for backup in report.backups:
        print(f"     backup  {out_dir / backup}")
    return EXIT_OK


def _cmd_validate(args: argparse.Namespace) -> int:
    from mscodegen.config.errors import ConfigError

    failed = 0
    for path in args.config:
        try:
            loaded = _load(path, args.set or ())
            _check_weight_files(loaded)
            if args.run:
                _preflight(loaded, args.timeout)
        except ConfigError as exc:
            failed += 1
            print(exc, file=sys.stderr)
            continue
        print(f"{path}: ok" + (" (both variants trained and evaluated one batch)" if args.run else ""))
    return EXIT_CONFIG if failed else EXIT_OK


def _check_weight_files(loaded: LoadedConfig) -> None:
    """Files the scripts read when they run (network.checkpoint.path): validate reports them at their key."""
    from mscodegen.config.errors import ConfigError
    from mscodegen.config.load import weight_problems

    problems = weight_problems(loaded)
    if problems:
        raise ConfigError(problems, str(loaded.path))


def _preflight(loaded: LoadedConfig, timeout: float) -> None:
    from mscodegen.config.errors import ConfigError
    from mscodegen.run.preflight import run_preflight

    print(f"{loaded.path}: running both variants for one batch (--fast-dev-run)...", file=sys.stderr)
    problems = run_preflight(loaded, timeout=timeout)
    if problems:
        raise ConfigError(problems, str(loaded.path))


def _cmd_show(args: argparse.Namespace) -> int:
    from mscodegen.config.show import render_show

    sys.stdout.write(render_show(_load(args.config, args.set or ())))
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace) -> int:
    from mscodegen.output.generate import default_out_dir
    from mscodegen.render.explain import ExplainError, explain_config_key, explain_script_line, parse_target

    at_line = parse_target(args.target, [args.key] if args.key else [])
    try:
        if at_line is not None:
            sys.stdout.write(explain_script_line(*at_line, load=_load))
            return EXIT_OK
    except ExplainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.key is None:
        print("error: give a KEY after the config (or SCRIPT:LINE alone)", file=sys.stderr)
        return EXIT_CONFIG
    loaded = _load(Path(args.target), args.set or ())
    out_dir = args.out or default_out_dir(loaded)
    sys.stdout.write(explain_config_key(loaded, args.key, out_dir))
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from mscodegen.schema import Config

    schema = Config.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mscodegen config"
    schema["properties"]["extends"] = {  # read by compose.py before the schema sees the config
        "description": "base config file(s), relative to this file, merged in order under this one",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    }
    print(json.dumps(schema, indent=2, sort_keys=True))
    return EXIT_OK


def _cmd_update(args: argparse.Namespace) -> int:
    from mscodegen.output.write import update

    out_dir, files, meta = _prepare(args)
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
        return EXIT_FAIL if report.has_conflicts else EXIT_OK
    for name, status in report.statuses.items():
        print(f"{status:>10}  {out_dir / name}")
    for name, line in report.conflicts:
        print(
            f"{out_dir / name}:{line}: conflict between your edit and the regenerated code", file=sys.stderr
        )
    if report.has_conflicts:
        print(
            "resolve the <<<<<<< / >>>>>>> blocks; your edited files are kept as <file>.orig", file=sys.stderr
        )
        return EXIT_FAIL
    return EXIT_OK


def _cmd_diff(args: argparse.Namespace) -> int:
    from mscodegen.output.write import LOCK_NAME, user_edits

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


def _cmd_parity(args: argparse.Namespace) -> int:
    from mscodegen.run.parity import run_parity

    if args.workers is not None and args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return EXIT_CONFIG
    if args.resume_at is not None:
        from mscodegen.run.resume_parity import run_resume_parity

        return run_resume_parity(
            args.target,
            resume_at=args.resume_at,
            steps=args.steps,
            epochs=args.epochs,
            keep=args.keep,
            timeout=args.timeout,
            overrides=args.set or (),
        )
    return run_parity(
        args.target,
        overrides=args.set or (),
        steps=args.steps,
        epochs=args.epochs,
        keep=args.keep,
        timeout=args.timeout,
        workers=args.workers,
        plot=args.plot,
    )


def _cmd_plot(args: argparse.Namespace) -> int:
    from mscodegen.run.plot import PlotError, plot_logs

    try:
        plot_logs(args.logs, args.output)
    except PlotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"wrote {args.output}")
    return EXIT_OK


def _cmd_import_mindcv(args: argparse.Namespace) -> int:
    import shlex

    from mscodegen.recipes.mindcv import RecipeError, convert, header_lines, read_recipe

    if args.devices < 1:
        print("error: --devices must be at least 1", file=sys.stderr)
        return EXIT_CONFIG
    try:
        conversion = convert(read_recipe(args.recipe), devices=args.devices, out_dir=args.output.parent)
    except RecipeError as exc:
        print(f"error: {args.recipe}: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    command = shlex.join(
        ["mscodegen", "import-mindcv", args.recipe.as_posix(), "-o", args.output.as_posix()]
        + (["--devices", str(args.devices)] if args.devices != 1 else [])
    )
    try:
        args.output.write_text(
            conversion.to_yaml(header_lines(args.recipe, command, args.devices, conversion)), encoding="utf-8"
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
    print(f"wrote {args.output}")
    return EXIT_OK if conversion.complete else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
