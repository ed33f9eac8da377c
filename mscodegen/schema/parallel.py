"""`parallel`: one process or data parallel under msrun."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from mscodegen.schema._base import Bool, PositiveInt, Section


class Parallel(Section):
    """Data parallel training under msrun: every worker trains a replica of the network on a disjoint
    shard of data.train and the gradients are all-reduced every step.

    Every rank runs the same script with the same runtime.seed: identical initial weights and one global
    shuffle order, of which each rank takes its own shard. The learning rate is never rescaled for you.
    """

    mode: Literal["stand_alone", "data_parallel"] = "stand_alone"
    workers: PositiveInt = Field(
        1,
        description="Number of processes msrun starts (--worker_num); data.train.batch_size is the global "
        "batch, split evenly across them.",
    )
    gradients_mean: Bool = Field(
        True,
        description="Average gradients over workers (same LR as one process with the global batch); "
        "false sums them, which multiplies the effective LR by the number of workers. LR is never rescaled for you.",
    )
    master_port: Annotated[int, Strict(), Field(ge=1024, le=65535)] = Field(
        8118,
        description="msrun --master_port written into launch.sh (override: MASTER_PORT=... bash launch.sh).",
    )
    cluster_time_out: PositiveInt = Field(
        120, description="msrun --cluster_time_out (seconds to wait for every worker to join)."
    )
    per_rank_logs: Bool = Field(
        False,
        description="No effect; kept so that older configs still load. The scripts write no logs of their own: "
        "`mscodegen parity` records and compares every rank's steps from outside them. Checkpoints are "
        "written by rank 0 only (the replicas are identical).",
    )
