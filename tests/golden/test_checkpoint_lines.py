"""Checkpoint and resume in the training scripts (issue 29): at most 30 non-blank lines in
generated/lenet_digits/train_native.py. The policy both variants share (where, how many, which one
--resume takes, the refusals) is checkpoints.py's, written beside the scripts; what a script keeps is
the import, the resume block, and (native) the calls that drive ModelCheckpoint from the loop.

The rule, stated once and applied to the file as generated:
- the identifiers are the names the script imports from checkpoints.py, and CHECKPOINT_WORDS;
- a simple statement counts whole (all its lines) when it names one, or when it is the --resume
  option (its string "--resume"); an `import` counts when it imports one;
- an `if` whose condition names one counts whole, body included: it runs for checkpoints only; so
  does one whose body is all counted (`if not args.fast_dev_run:` around the checkpoint callback);
- any other compound statement (def, for, try) counts its header line when that names one (a loop
  starting at start_step), and its body is looked at statement by statement;
- the comment lines right above a counted statement count with it.
"""

from __future__ import annotations

import ast

from conftest import REPO

CEILING = 30
CHECKPOINT_WORDS = frozenset(
    {"checkpoint", "checkpoints", "cb_params", "run_context", "RunContext", "start_step", "resume"}
)


def _names(node: ast.AST) -> set[str]:
    """Every identifier `node` reads or writes, attribute names included, and its strings."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.alias):
            found.add(sub.asname or sub.name)
        elif isinstance(sub, ast.ImportFrom) and sub.module:
            found.add(sub.module)
        elif isinstance(sub, ast.Constant) and sub.value == "--resume":
            found.add("resume")
    return found


class _Counter:
    """Walks a script's statements and collects the lines the rule counts."""

    def __init__(self, text: str) -> None:
        self.tree = ast.parse(text)
        self.lines = text.splitlines()
        self.words = set(CHECKPOINT_WORDS)
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "checkpoints":
                self.words |= {alias.asname or alias.name for alias in node.names}
        self.counted: set[int] = set()

    def names_one(self, node: ast.AST) -> bool:
        return bool(_names(node) & self.words)

    def whole(self, node: ast.stmt) -> None:
        first = node.lineno
        while first > 1 and self.lines[first - 2].strip().startswith("#"):  # its comments
            first -= 1
        self.counted.update(range(first, (node.end_lineno or node.lineno) + 1))

    def visit_if(self, node: ast.If) -> None:
        if self.names_one(node.test):
            self.whole(node)
            return
        self.visit(node.body)
        self.visit(node.orelse)
        if not node.orelse and all(n.lineno in self.counted for n in node.body):
            self.counted.add(node.lineno)  # a guard around checkpoint code only

    def visit(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                self.visit_if(node)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.For | ast.While | ast.With | ast.Try):
                if isinstance(node, ast.For) and self.names_one(node.iter):
                    self.counted.add(node.lineno)
                for field in ("body", "orelse", "finalbody"):
                    self.visit(getattr(node, field, []))
                for handler in getattr(node, "handlers", []):
                    self.visit(handler.body)
            elif self.names_one(node):
                self.whole(node)


def checkpoint_lines(text: str) -> set[int]:
    """The line numbers of the checkpoint and resume code of a script, by the rule above."""
    counter = _Counter(text)
    counter.visit(counter.tree.body)
    return {n for n in counter.counted if counter.lines[n - 1].strip()}


def test_the_rule_counts_what_it_says() -> None:
    text = """import sys

from checkpoints import load_checkpoint


def train(args):
    x = 1
    start_step = 0
    if args.resume:
        # a comment in the block

        start_step = load_checkpoint(args.resume)
    for epoch in range(start_step, 3):
        y = epoch
    if x:
        sys.exit()
    if not x:
        checkpoint = 1


def parse_args(parser):
    parser.add_argument(
        "--resume", help="a checkpoint"
    )
    parser.add_argument("--epochs")
"""
    # the import, start_step = 0, the `if` (4 non-blank lines), the loop's header, the guard around
    # `checkpoint = 1` (2 lines), the option (3 lines)
    assert checkpoint_lines(text) == {3, 8, 9, 10, 12, 13, 17, 18, 22, 23, 24}


def test_checkpoint_and_resume_fit_in_30_lines_of_lenet_digits_native() -> None:
    text = (REPO / "generated" / "lenet_digits" / "train_native.py").read_text(encoding="utf-8")
    counted = checkpoint_lines(text)
    lines = text.splitlines()
    listing = "\n".join(f"{n:4} {lines[n - 1]}" for n in sorted(counted))
    assert len(counted) <= CEILING, f"{len(counted)} lines:\n{listing}"
    # what it counts is the checkpoint code: the import, the resume block, ModelCheckpoint's calls
    assert "from checkpoints import" in listing and "load_checkpoint(args.resume" in listing
    assert "checkpoint.on_train_step_end(run_context)" in listing
    assert "checkpoint.on_train_end(run_context)" in listing
    assert "def load_checkpoint" not in text and "def checkpoint_callback" not in text
