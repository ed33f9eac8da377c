"""Setups mscodegen does not generate, by the keys people write for them, and the nearest thing it does.

An unknown key (or `kind`) named here gets "not supported: ..." instead of "unknown key": the user knows
the feature exists elsewhere and needs to hear that it is missing here, and what to use instead.
"""

from __future__ import annotations

_RECOMPUTE = (
    "not supported: recompute (gradient checkpointing); nearest: an imported network (network.kind: "
    "import) whose factory calls Cell.recompute() on its blocks, or a smaller data.train.batch_size with "
    "grad.accumulation_steps (docs/not-supported.md)"
)
_LR_FINDER = (
    "not supported: an LR finder (LR range test); nearest: one short run whose LR rises every step "
    "(lr_schedule.kind: polynomial, end_lr above optimizer.lr), then `mscodegen plot` of its --loss-log "
    "(docs/not-supported.md)"
)

UNSUPPORTED: dict[str, str] = {
    **dict.fromkeys(
        (
            "recompute",
            "gradient_checkpointing",
            "grad_checkpointing",
            "gradient_checkpoint",
            "activation_checkpointing",
            "checkpoint_activations",
        ),
        _RECOMPUTE,
    ),
    **dict.fromkeys(
        ("lr_finder", "lr_find", "find_lr", "auto_lr_find", "lr_range_test", "lr_finder_steps"),
        _LR_FINDER,
    ),
}


def unsupported(key: object) -> str | None:
    """The "not supported: ..." message for a key or kind naming a setup mscodegen lacks, else None."""
    if not isinstance(key, str):
        return None
    return UNSUPPORTED.get(key.strip().lower().replace("-", "_"))
