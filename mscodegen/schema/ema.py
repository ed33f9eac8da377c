"""`ema`: an exponential moving average of the network's weights, as mindcv's TrainStep keeps it."""

from __future__ import annotations

from pydantic import Field

from mscodegen.schema._base import Fraction, PositiveInt, Section


class Ema(Section):
    """After each optimizer step: d = decay * (1 - exp(-updates / warmup_steps)), ema = d * ema + (1 - d) * w."""

    decay: Fraction = Field(0.9999, description="The average's decay once warmed up (mindcv's ema_decay).")
    warmup_steps: PositiveInt = Field(
        2000,
        description="Temperature of mindcv's warm-up: the decay is scaled by 1 - exp(-updates / warmup_steps).",
    )
