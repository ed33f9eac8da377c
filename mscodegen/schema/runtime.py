"""`runtime`: execution mode, device and seed."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mscodegen.schema._base import MAX_SEED, PositiveInt, Section, Seed


class Runtime(Section):
    """Where and how MindSpore runs."""

    mode: Literal["graph", "pynative"] = Field(
        "graph", description="GRAPH_MODE compiles each cell (fast); PYNATIVE_MODE runs op by op (debuggable)."
    )
    device_target: Literal["CPU", "GPU", "Ascend"] = Field(
        "CPU", description="Device passed to ms.set_device()."
    )
    seed: Seed = Field(1, description=f"ms.set_seed(): weights, shuffling, synthetic data (0 to {MAX_SEED}).")
    cpu_threads: PositiveInt | None = Field(
        None, description="Threads for CPU kernels; 1 makes Dropout reproducible on CPU."
    )
    max_device_memory: Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?GB$")] | None = Field(
        None, description="Device memory cap such as '30GB' (GPU/Ascend; ignored on CPU, the script says so)."
    )
