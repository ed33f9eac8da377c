"""`distill`: each mistake found by validate at its key, and what the scripts write for it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import LoadedConfig, load_config, weight_problems
from mscodegen.output.generate import generate

CONFIG = """\
network: {kind: builtin, name: mlp, hidden: [16], num_classes: 10}
distill:
  teacher:
    kind: builtin
    name: lenet5
    num_classes: 10
    checkpoint: {path: teacher.ckpt}
  temperature: 2.0
  alpha: 0.25
data:
  train: {kind: digits, transforms: {resize: [16, 16]}}
  eval: {kind: digits, split: test, transforms: {resize: [16, 16]}}
optimizer: {name: momentum}
"""


def load(tmp_path: Path, text: str = CONFIG) -> LoadedConfig:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def problems(tmp_path: Path, text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    return [(p.path, p.line, p.message) for p in info.value.problems]


@pytest.mark.parametrize(
    ("old", "new", "key", "line", "says"),
    [
        ("    checkpoint: {path: teacher.ckpt}\n", "", "distill.teacher", 4, "needs its trained weights"),
        (
            "{path: teacher.ckpt}",
            "{path: teacher.ckpt, skip: [fc3.*]}",
            "distill.teacher.checkpoint.skip",
            7,
            "every",
        ),
        (
            "{path: teacher.ckpt}",
            "{path: teacher.ckpt, strict: false}",
            "distill.teacher.checkpoint.strict",
            7,
            "every",
        ),
        (
            "    checkpoint:",
            "    freeze: {patterns: [conv1.*]}\n    checkpoint:",
            "distill.teacher.freeze",
            7,
            "whole",
        ),
        (
            "num_classes: 10\n    checkpoint",
            "num_classes: 5\n    checkpoint",
            "distill.teacher.num_classes",
            6,
            "5 classes",
        ),
        ("temperature: 2.0", "temperature: 0", "distill.temperature", 8, "greater than 0"),
        ("alpha: 0.25", "alpha: 1.5", "distill.alpha", 9, "less than or equal to 1"),
        ("optimizer:", "amp: {level: O2}\noptimizer:", "amp.level", 13, "use amp.level O0"),
        ("name: lenet5", "name: mlp", "distill.teacher.name", 5, "both builtin mlp"),
        ("[16, 16]}}\n  eval", "[12, 12]}}\n  eval", "distill.teacher.name", 5, "at least 16x16"),
        (
            "name: lenet5",
            "name: lenet5\n    input_shape: [3, 16, 16]",
            "distill.teacher.input_shape",
            6,
            "contradicts",
        ),
    ],
)
def test_a_mistake_is_reported_at_its_key(
    tmp_path: Path, old: str, new: str, key: str, line: int, says: str
) -> None:
    assert old in CONFIG
    found = problems(tmp_path, CONFIG.replace(old, new))
    assert [(k, n) for k, n, m in found if says in m] == [(key, line)], found


def test_a_loss_that_scores_no_classes_is_refused(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG + "loss: {name: MSELoss}\n")
    assert ("loss.name", 14) in [(k, n) for k, n, m in found if m.startswith("distill mixes")]


def test_validate_reports_a_missing_teacher_checkpoint(tmp_path: Path) -> None:
    loaded = load(tmp_path)
    assert [(p.path, p.line) for p in weight_problems(loaded)] == [("distill.teacher.checkpoint.path", 7)]
    (tmp_path / "teacher.ckpt").write_bytes(b"")
    assert weight_problems(loaded) == []


def test_the_scripts_train_the_student_with_the_frozen_teacher(tmp_path: Path) -> None:
    files = generate(load(tmp_path), tmp_path / "out")
    model, native, predict = files["train_model.py"], files["train_native.py"], files["predict.py"]
    for script in (model, native):
        assert "    teacher = LeNet5(num_classes=10, in_channels=1)\n    try:" in script  # in load_teacher()
        assert "network.trainable_params()" in script  # the optimizer: the student's parameters
        assert (
            'TEACHER_CHECKPOINT = Path(__file__).parent / "../teacher.ckpt"  # distill.teacher.checkpoint.path'
            in script
        )
        assert "DISTILL_TEMPERATURE = 2.0  # distill.temperature" in script
        assert "DISTILL_ALPHA = 0.25  # distill.alpha" in script
        assert "class MLP(nn.Cell):" in script and "class LeNet5(nn.Cell):" in script
    assert "WithDistillLoss(network, load_teacher(), loss_fn),\n        optimizer=optimizer," in model
    assert "eval_network=nn.WithEvalCell(network, loss_fn)," in model
    assert "train_step = TrainStep(WithDistillLoss(network, load_teacher(), loss_fn), optimizer)" in native
    assert "eval_net = nn.WithEvalCell(network, loss_fn)" in native
    assert "teacher" not in predict.lower() and "LeNet5" not in predict  # the student alone


def test_the_names_the_distill_code_uses_are_reserved(tmp_path: Path) -> None:
    """What test_names checks of the examples' scripts, for distill's: module-level names, and the locals of
    train() and the cells, which a column or an imported object must not take."""
    from mscodegen.schema.names import COLUMN_LOCALS, RESERVED_NAMES

    files = generate(load(tmp_path), tmp_path / "out")
    for name in ("train_model.py", "train_native.py"):
        tree = ast.parse(files[name])
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        assigned = {
            t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
        }
        assert defined | assigned <= RESERVED_NAMES, sorted((defined | assigned) - RESERVED_NAMES)
        local = {
            n.id if isinstance(n, ast.Name) else n.arg
            for host in ast.walk(tree)
            if isinstance(host, ast.FunctionDef)
            and host.name in ("train", "construct", "add_flags_recursive", "load_teacher")
            for n in ast.walk(host)
            if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)) or isinstance(n, ast.arg)
        }
        assert local - {"image", "label"} <= COLUMN_LOCALS, sorted(local - COLUMN_LOCALS)
