"""`distill`: knowledge distillation, a frozen teacher's soft targets beside the labels."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mscodegen.schema._base import NOT_BOOL, PositiveFloat, Section
from mscodegen.schema.network import Network


class Distill(Section):
    """Train the network (the student) to match a frozen teacher's softened outputs as well as the labels:
    loss = alpha * T^2 * KL(softmax(teacher / T) || softmax(student / T)) + (1 - alpha) * loss(student, label),
    the KL divergence summed over the classes and averaged over the batch, T the temperature."""

    teacher: Network = Field(
        description="The teacher, in the forms of `network:` (builtin, mindcv, import), with its weights in "
        "`checkpoint: {path: ...}` (every parameter loaded). Frozen: evaluation mode, no gradients, in no "
        "optimizer; not in the student's saved weights (--save-weights, best.ckpt), but in the resumable "
        "checkpoints, which hold the whole train network (as `teacher.<name>`)."
    )
    temperature: PositiveFloat = Field(
        4.0, description="T: the logits of both networks are divided by it before the softmax."
    )
    alpha: Annotated[float, NOT_BOOL, Field(ge=0, le=1)] = Field(
        0.5, description="The soft targets' weight; the labels' loss (`loss:`) weighs 1 - alpha."
    )
