"""Line budgets of the generated scripts (issue 20): what a person reads stays small.

The table of lines per example and variant is printed (`pytest -s tests/golden/test_script_lines.py`), like a
benchmark; a script over its budget fails. The counts are of generated/, which test_golden keeps in
sync with the templates.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# all lines of the black-formatted file (`wc -l`): (model, native), issue 29's ceilings. With
# callbacks.checkpoint, checkpoints.py beside them holds what both share of checkpoints and resume.
BUDGETS = {
    "mnist_quickstart": (130, 160),
    "lenet_digits": (220, 250),
    "dcgan_digits": (380, 380),
}
DEFAULT_BUDGET = (330, 330)
TRAINING_SHARE = 0.60


def _lines(name: str, script: str) -> int:
    return len((REPO / "generated" / name / script).read_text(encoding="utf-8").splitlines())


def test_examples_found() -> None:
    assert len(EXAMPLES) >= 10
    assert set(BUDGETS) <= {p.stem for p in EXAMPLES}


def test_line_table_within_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    rows, over = [], []
    for config in EXAMPLES:
        name = config.stem
        model, native = _lines(name, "train_model.py"), _lines(name, "train_native.py")
        budget = BUDGETS.get(name, DEFAULT_BUDGET)
        rows.append(f"{name:<22} {model:>6} {native:>7}   {budget[0]:>4} / {budget[1]:<4}")
        if model > budget[0] or native > budget[1]:
            over.append(f"{name}: {model} / {native} lines, budget {budget[0]} / {budget[1]}")
    with capsys.disabled():
        print("\nexample                 model  native   budget (model / native)")
        print("\n".join(rows))
    assert over == [], "over budget:\n" + "\n".join(over)


# Where Model cannot do the work: a GAN's model variant writes the train cell doing both updates (Model
# has no step for two optimizers), a callback printing both losses (LossMonitor prints the first of a
# tuple) and one drawing the sample grid; the native loop does all three inline. Within 3% of native.
# The NaN guard and --max-steps are a callback class in the model variant (CheckStep) where the native
# loop has a few lines inline.
LONGER_MODEL = {"dcgan_digits": 1.03, "resnet18_finetune": 1.04}


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_model_variant_is_shorter_than_native(config) -> None:
    """Model does the loop, the evaluation and the checkpoints: its script is the shorter one."""
    model, native = _lines(config.stem, "train_model.py"), _lines(config.stem, "train_native.py")
    assert model < native * LONGER_MODEL.get(config.stem, 1.0)


def training_share(text: str) -> tuple[int, int]:
    """(training lines, code lines) of a script: non-blank lines holding code (not comments, not
    docstrings). Training proper is everything but the imports, parse_args and the `__main__` block:
    the network, the data, the loss and optimizer, the step, the loop, the evaluation, the
    checkpoints, and the constants they read (the config's values). checkpoints.py, which both
    scripts import, is not added to either: all of it is checkpoints (training by this count), so
    each script's share, measured without it, is the stricter number."""
    tree = ast.parse(text)
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skip and token.type != tokenize.ENDMARKER:
            code.update(range(token.start[0], token.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and ast.get_docstring(node):
            doc = node.body[0]
            code -= set(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    harness: set[int] = set()
    for node in tree.body:
        is_main = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        named = isinstance(node, ast.FunctionDef) and node.name == "parse_args"
        if is_main or named or isinstance(node, ast.Import | ast.ImportFrom):
            harness.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines = text.splitlines()
    code = {n for n in code if lines[n - 1].strip()}
    return len(code - harness), len(code)


def test_training_share_counts_what_it_says() -> None:
    text = '''"""Doc."""

import sys

LR = 0.1  # optimizer.lr


def train(args):
    """Doc."""
    # a comment
    return LR


def parse_args():
    return None


if __name__ == "__main__":
    train(parse_args())
'''
    # training: LR, def train, return; the rest: import, def parse_args, return None, if, the call
    assert training_share(text) == (3, 8)


@pytest.mark.parametrize(
    "script", sorted((REPO / "generated").glob("*/train_*.py")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_training_is_most_of_every_script(script: Path) -> None:
    training, code = training_share(script.read_text(encoding="utf-8"))
    assert training >= TRAINING_SHARE * code, f"{training} of {code} code lines train ({training / code:.0%})"


# issue 31: predict.py, beside the training scripts of every example
PREDICT_BUDGETS = {"mnist_quickstart": 150}
PREDICT_DEFAULT = 200


def test_predict_py_within_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    counts = {config.stem: _lines(config.stem, "predict.py") for config in EXAMPLES}
    with capsys.disabled():
        print("\npredict.py lines: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
    over = [
        f"{name}: {n} lines, budget {PREDICT_BUDGETS.get(name, PREDICT_DEFAULT)}"
        for name, n in counts.items()
        if n > PREDICT_BUDGETS.get(name, PREDICT_DEFAULT)
    ]
    assert over == [], "over budget:\n" + "\n".join(over)
