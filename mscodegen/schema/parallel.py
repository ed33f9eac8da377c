"""`parallel`: one process or data parallel under msrun."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Section


class Parallel(Section):
    """Data parallel training: every worker sees a disjoint shard and gradients are all-reduced."""

    mode: Literal["stand_alone", "data_parallel"] = "stand_alone"
    workers: Annotated[int, Field(ge=1)] = Field(
        1,
        description="Number of processes msrun starts (--worker_num); data.train.batch_size is split across them.",
    )
    gradients_mean: bool = Field(
        True,
        description="Average gradients over workers (same LR as one process with the global batch); "
        "false sums them, which multiplies the effective LR by the number of workers. LR is never rescaled for you.",
    )
    master_port: Annotated[int, Field(ge=1024, le=65535)] = 8118
    per_rank_logs: bool = Field(False, description="Every rank writes its own loss log; default rank 0 only.")
