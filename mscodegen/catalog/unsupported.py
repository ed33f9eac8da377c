"""Setups mscodegen does not generate, by the keys people write for them, and the nearest thing it does.

An unknown key (or `kind`) named here gets "not supported: ..." instead of "unknown key": the user knows
the feature exists elsewhere and needs to hear that it is missing here, and what to use instead.
"""

from __future__ import annotations

_RECOMPUTE = (
    "not supported: recompute (gradient checkpointing); to save memory, lower data.train.batch_size "
    "and keep the effective batch with grad.accumulation_steps, or use amp.level: O2"
)
_LR_FINDER = (
    "not supported: an LR finder (LR range test); the nearest is a warmup (lr_schedule.kind: "
    "warmup_cosine or one_cycle), or short runs at a few rates (--set optimizer.lr=...) whose "
    "--loss-log files `mscodegen plot` draws together"
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
