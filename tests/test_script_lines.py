"""Line budgets of the generated scripts (issue 20): what a person reads stays small.

The table of lines per example and variant is printed (`pytest -s tests/test_script_lines.py`), like a
benchmark; a script over its budget fails. The counts are of generated/, which test_golden keeps in
sync with the templates.
"""

from __future__ import annotations

import pytest

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# all lines of the black-formatted file: (model, native)
# issue 30 added the NaN guard (check_loss: 6 lines native, 13 model), the output-path check (4) and,
# with checkpoints, each run's own folder (run_folder: 13; in checkpoint_callback since issue 29).
BUDGETS = {
    "mnist_quickstart": (190, 220),
    "lenet_digits": (325, 345),
}
DEFAULT_BUDGET = (465, 465)


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
# Issue 30's NaN guard is a callback class in the model variant (CheckLoss, 16 lines with resume and a
# loss scale) where the native loop has 5 lines; these two were 2 lines shorter than native before it.
LONGER_MODEL = {"dcgan_digits": 1.03, "resnet18_finetune": 1.04, "lenet_amp_accum": 1.01}


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_model_variant_is_shorter_than_native(config) -> None:
    """Model does the loop, the evaluation and the checkpoints: its script is the shorter one."""
    model, native = _lines(config.stem, "train_model.py"), _lines(config.stem, "train_native.py")
    assert model < native * LONGER_MODEL.get(config.stem, 1.0)
