"""Rules of `distill`: the teacher's weights, its outputs against the student's, the loss they mix with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.schema import Config, image_shape_of
from mscodegen.schema.network import BuiltinNetwork
from mscodegen.schema.rules._registry import Violation, rule
from mscodegen.schema.rules.network import LENET5_MIN_SIZE, classes_of
from mscodegen.schema.training import SAME_SHAPE_TARGET_LOSSES

TEACHER = ("distill", "teacher")


@rule("distill")
def _teacher_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """The teacher is loaded whole from its checkpoint and trains nothing."""
    if cfg.distill is None:
        return
    teacher = cfg.distill.teacher
    if teacher.checkpoint is None:
        yield TEACHER, "the teacher needs its trained weights: checkpoint: {path: teacher.ckpt}"
    else:
        if teacher.checkpoint.skip:
            yield (*TEACHER, "checkpoint", "skip"), "a teacher loads every parameter: leave out skip"
        if not teacher.checkpoint.strict:
            yield (*TEACHER, "checkpoint", "strict"), "a teacher loads every parameter: strict must be true"
    if teacher.freeze is not None:
        yield (*TEACHER, "freeze"), "the teacher is frozen whole: leave out freeze"


@rule("distill", "network")
def _teacher_student_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Teacher and student score the same classes; one builtin class cannot be two networks."""
    if cfg.distill is None:
        return
    teacher, student = cfg.distill.teacher, cfg.network
    theirs, ours = classes_of(teacher, TEACHER), classes_of(student, ("network",))
    if theirs is not None and ours is not None and theirs[0] != ours[0]:
        yield (
            theirs[1],
            f"the teacher scores {theirs[0]} classes but the student (network) {ours[0]}: the soft targets "
            "need the same classes",
        )
    if (
        isinstance(teacher, BuiltinNetwork)
        and isinstance(student, BuiltinNetwork)
        and teacher.name == student.name
    ):
        mine = (student.hidden, student.input_shape, student.dense_init, student.conv_init)
        if (teacher.hidden, teacher.input_shape, teacher.dense_init, teacher.conv_init) != mine:
            yield (
                (*TEACHER, "name"),
                f"teacher and student are both builtin {teacher.name}, whose class the script writes once: "
                f"give the student another network (e.g. a smaller mlp) or the teacher the student's layers",
            )


@rule("distill", "data.train")
def _teacher_input_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """A builtin teacher takes data.train's images, as the student does."""
    teacher = cfg.distill.teacher if cfg.distill is not None else None
    shape = image_shape_of(cfg.data.train)
    if not isinstance(teacher, BuiltinNetwork) or shape is None:
        return
    if teacher.input_shape and tuple(teacher.input_shape) != shape:
        yield (
            (*TEACHER, "input_shape"),
            f"{teacher.input_shape} contradicts data.train, whose images are {list(shape)}: the teacher takes "
            "the student's inputs",
        )
    elif teacher.name == "lenet5" and min(shape[1:]) < LENET5_MIN_SIZE:
        yield (
            (*TEACHER, "name"),
            f"lenet5 needs images of at least {LENET5_MIN_SIZE}x{LENET5_MIN_SIZE} but data.train gives "
            f"{shape[1]}x{shape[2]}, which the teacher takes as the student does",
        )


@rule("distill", "loss", "amp")
def _distill_loss_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """The soft targets are class probabilities: the labels' loss must score classes too."""
    if cfg.distill is None:
        return
    if cfg.loss.name in SAME_SHAPE_TARGET_LOSSES:
        yield (
            ("loss", "name"),
            f"distill mixes the teacher's class probabilities with the labels' loss, but {cfg.loss.name} "
            "compares the output with a target of its shape: use SoftmaxCrossEntropyWithLogits or "
            "CrossEntropyLoss",
        )
    if cfg.amp.level != "O0":
        yield ("amp", "level"), f"distill with amp.level {cfg.amp.level} is not supported: use amp.level O0"
