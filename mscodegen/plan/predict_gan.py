"""Plan of a GAN's predict.py: a seeded grid of samples from the trained generator, and its export.

predict.py imports the generator's class and LATENT_DIM from the training script (never a copy) and
builds the generator as train() does, parameter names included, so a --save-weights file (both
networks) and a training checkpoint (the train step's) both load into it. The discriminator is
not needed. Nothing here imports MindSpore.
"""

from __future__ import annotations

from dataclasses import dataclass

from mscodegen.catalog.literals import Call, Name
from mscodegen.plan.frame import Frame
from mscodegen.plan.gan import GanShared
from mscodegen.plan.imports import Import, imports
from mscodegen.plan.loop import Header
from mscodegen.plan.setup import ImportedName
from mscodegen.schema.gan import GanConfig, SampleGrid


@dataclass(frozen=True, slots=True)
class GanPredictPlan:
    """One GAN predict.py: the generator's samples (a PNG grid) and its export."""

    header: Header
    imports: tuple[Import, ...]
    train_module: str  # train_model: where the generator comes from
    from_train: tuple[Import, ...]  # what predict.py imports from it, and from checkpoints.py
    generator: Call  # how train() builds the generator
    generator_factory: ImportedName | None  # gan.generator.network.factory: imported as train() does
    amp_level: str | None  # amp.auto_mixed_precision's level, as training converted it; None: float32
    # the defaults of --samples, --columns, --seed: gan.samples' constants, or its defaults without one
    count: Name | int
    columns: Name | int
    seed: Name | int
    latest: bool  # training checkpoints carry CONFIG_SHA256: --checkpoint latest, the config check
    template: str = "predict_gan.py.j2"

    @property
    def training_grid(self) -> bool:
        """The defaults draw the latent batch of training's own grids (gan.samples)."""
        return isinstance(self.seed, Name)


def build_gan_predict(cfg: GanConfig, shared: object, train_script: str) -> GanPredictPlan:
    """predict.py for the GAN config whose training script is `train_script` (train_model.py)."""
    assert isinstance(shared, GanShared)
    generator, amp = shared.generator, shared.amp
    from_train = {generator.call.func, "LATENT_DIM"} if generator.factory is None else {"LATENT_DIM"}
    if shared.resumable:
        from_train.add("OUTPUT_DIR")
    grid: dict[str, Name | int] = SampleGrid().model_dump(include={"count", "columns", "seed"})
    if cfg.gan.samples is not None:  # training's own grid: its constants
        grid = {field: Name(f"SAMPLE_{field.upper()}") for field in grid}
        from_train |= {f"SAMPLE_{field.upper()}" for field in grid}
    module = train_script.removesuffix(".py")
    return GanPredictPlan(
        header=shared.header,
        # vision: the grid's PNG; amp: the generator converted as train() converts it
        imports=imports({"predict": True, "vision": True, "amp": amp.enabled}),
        train_module=module,
        from_train=tuple(Import(module, name) for name in sorted(from_train)) + from_checkpoints(shared),
        generator=generator.call,
        generator_factory=generator.factory,
        amp_level=amp.native_level if amp.enabled else None,
        count=grid["count"],
        columns=grid["columns"],
        seed=grid["seed"],
        latest=shared.resumable,
    )


def from_checkpoints(shared: Frame) -> tuple[Import, ...]:
    """What predict.py imports from checkpoints.py for --checkpoint latest: where, and this config's hash."""
    if not shared.resumable:
        return ()
    return tuple(Import("checkpoints", name) for name in ("CHECKPOINT_DIR", "CONFIG_SHA256", "INFO"))
