"""Command line: `mscodegen init|new|validate|schema|update|diff|parity|show|explain|record|plot|import-mindcv`.

One module per command, each with `add(subparsers)` and `run(args)`. Start-up must stay fast: a
command imports what it needs inside `run`, and nothing here (or below it) imports MindSpore or mindcv.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from mscodegen import __version__
from mscodegen.cli import (
    diff,
    explain,
    import_mindcv,
    init,
    new,
    parity,
    plot,
    record,
    schema,
    show,
    update,
    validate,
)
from mscodegen.cli._common import EXIT_CONFIG, EXIT_FAIL

# In the order `--help` lists them
COMMANDS = (init, new, validate, schema, update, diff, parity, show, explain, record, plot, import_mindcv)

EXAMPLES = """\
examples:
  mscodegen init --list                              # the shipped examples, one line each
  mscodegen init quickstart my.yaml                  # copy one (with its data and helpers) to start from
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
  mscodegen record generated/lenet_digits/train_native.py --logs logs   # each step and evaluation as JSON
  mscodegen plot logs/loss.jsonl -o loss.png         # curves from those records
  mscodegen import-mindcv recipe.yaml -o run.yaml    # a mindcv recipe -> a config, and what did not convert
"""


class Interrupted(Exception):
    """SIGINT or SIGTERM reached mscodegen; every process it started has been stopped."""

    def __init__(self, signum: int, stopped: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum, self.stopped = signum, stopped


def _stop_children(signum: int, _frame: FrameType | None) -> None:
    """On SIGINT or SIGTERM, kill every process below this one before unwinding: `parity` and
    `validate --run` wait for their scripts in threads, and msrun's workers run in sessions of their
    own, so neither the terminal's SIGINT nor a SIGTERM sent to mscodegen alone would reach them all."""
    import psutil

    signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C while stopping changes nothing
    children = psutil.Process().children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.kill()
    raise Interrupted(signum, len(children))


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `record SCRIPT -- ARGS`: what follows -- is the script's (argparse mishandles it after a subcommand)
    passed = argv[argv.index("--") + 1 :] if "--" in argv else None
    args = parser.parse_args(argv[: argv.index("--")] if passed is not None else argv)
    if passed is not None:
        if args.command != "record":
            parser.error("-- passes options to a script: only `mscodegen record` takes it")
        args.script_args = [*args.script_args, *passed]
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_CONFIG
    # only the main thread may set handlers (a test may call main() from another); restored at the end
    signals = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    previous = {signum: signal.signal(signum, _stop_children) for signum in signals}
    try:
        return _run(args)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(args: argparse.Namespace) -> int:
    from mscodegen.config.errors import ConfigError
    from mscodegen.output.lock import WriteError
    from mscodegen.render.fmt import GeneratedCodeError

    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except Interrupted as exc:
        stopped = f"; stopped the {exc.stopped} processes it had started" if exc.stopped else ""
        print(f"mscodegen {args.command}: interrupted by {exc}{stopped}", file=sys.stderr)
        return 128 + exc.signum
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
        return exc.exit_code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mscodegen",
        description="Generate readable MindSpore training scripts (Model API and native loop) from one YAML file.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mscodegen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add(sub)
        command = list(sub.choices.values())[-1]  # the parser add() just made
        command.set_defaults(func=module.run)
        command.formatter_class = argparse.RawDescriptionHelpFormatter  # descriptions and examples as written
    return parser


if __name__ == "__main__":
    sys.exit(main())
