"""Plan of a gan config's scripts: two networks, their optimizers and losses, the latent vectors, the samples.

GanShared is a Frame (header, constants, runtime, data, amp, parallel, checkpoint: what the shared
macros read, as one network's Shared has them) with two networks; GanPlan adds the variant. The
templates are train_gan_model.py.j2 and train_gan_native.py.j2, on _gan.py.j2 and the shared macros.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from mscodegen.catalog.literals import Call, Name
from mscodegen.plan.data import DataPlan, build_data
from mscodegen.plan.frame import Frame, frame_fields
from mscodegen.plan.imports import Import
from mscodegen.plan.loop import (
    Constant,
    DeviceNote,
    build_device_notes,
    checkpoint_constants,
    config_constants,
    loss_scale_constants,
    parallel_constants,
    run_constants,
)
from mscodegen.plan.setup import (
    ImportedName,
    Relative,
    optimizer_args,
    optimizer_class,
    sys_paths,
)
from mscodegen.schema import image_shape_of
from mscodegen.schema.gan import DcganDiscriminator, DcganGenerator, GanConfig
from mscodegen.schema.network import MindcvNetwork
from mscodegen.schema.precision import DynamicLossScale, FixedLossScale, GlobalNormClip, NormClip

Role = Literal["generator", "discriminator"]


@dataclass(frozen=True, slots=True)
class Block:
    """A strided (transposed) convolution block of a builtin network: its channels in multiples of
    `features` (0: the latent vector's or the image's), and the side of the map it leaves."""

    inputs: int
    outputs: int
    size: int


@dataclass(frozen=True, slots=True)
class GanNetwork:
    """One of the two networks and its optimizer, as train() builds them."""

    role: Role
    kind: Literal["dcgan", "mindcv", "import"]
    call: Call  # what train() calls: Generator, Discriminator, create_model or the imported factory
    factory: ImportedName | None
    blocks: tuple[Block, ...]  # dcgan: the SequentialCell's convolution blocks
    summary: str  # the builtin class's docstring
    optimizer_class: str  # Adam (from mindspore.nn), or the imported class (Lion)
    optimizer_module: str | None
    optimizer_args: tuple[tuple[str, object], ...]  # after params and learning_rate
    grad_clip: Literal["global_norm", "norm", "value"] | None = None  # gan.<role>.grad_clip's kind
    clip_weights: bool = False  # the critic's weights clamped after each update (D_WEIGHT_CLIP)
    norm: Literal["batch", "layer"] | None = None  # the dcgan discriminator's normalisation

    @property
    def short(self) -> str:
        """g or d: the prefix of its optimizer, grad function, LR ..."""
        return self.role[0]

    @property
    def key(self) -> str:
        return f"gan.{self.role}"

    @property
    def lr(self) -> str:
        return f"{self.short.upper()}_LR"


@dataclass(frozen=True, slots=True)
class GanStep:
    """What one step adds to the two updates: loss scaling per network, d_steps (the all-reduce: parallel)."""

    scaler: Literal["static", "dynamic"] | None  # amp.StaticLossScaler / DynamicLossScaler per network
    skip_overflow: bool  # an update whose gradients are not finite is skipped (and logged)
    d_steps: int

    @property
    def state_note(self) -> str:
        """What a checkpoint holds besides weights and optimizer state (the resume macro's docstring)."""
        return ", the loss scales" if self.scaler == "dynamic" else ""


@dataclass(frozen=True, slots=True)
class GanShared(Frame):
    """Everything both GAN variants print the same way: the frame, and two networks' training."""

    generator: GanNetwork
    discriminator: GanNetwork
    loss: str | None  # gan.loss: the mindspore.nn class; None: wasserstein (the critic's score means)
    gradient_penalty: bool  # WGAN-GP: the critic's loss adds GP_WEIGHT * penalty; batches carry `mix`
    step: GanStep
    samples: bool  # gan.samples: a grid of the generator's samples after every epoch

    @property
    def networks(self) -> tuple[GanNetwork, GanNetwork]:
        """Both, in the order they are built (which the initial weights depend on)."""
        return (self.generator, self.discriminator)

    @property
    def critic_loss(self) -> Literal["labels", "wasserstein", "gradient_penalty"]:
        """Which loss cells: on labels (a loss class), WGAN's, or WGAN's with the gradient penalty."""
        if self.loss is not None:
            return "labels"
        return "gradient_penalty" if self.gradient_penalty else "wasserstein"

    @property
    def dcgan(self) -> bool:
        return "dcgan" in (self.generator.kind, self.discriminator.kind)

    @property
    def saves_scales(self) -> bool:
        """Checkpoints hold the dynamic loss scales (the scalers' state becomes a cell's)."""
        return self.step.scaler == "dynamic" and self.checkpoint is not None

    @property
    def output_dir_help(self) -> str:
        """What --output-dir holds."""
        what = [w for w, on in (("samples", self.samples), ("checkpoints", self.checkpoint)) if on]
        return " and ".join(what)


@dataclass(frozen=True, slots=True)
class GanPlan:
    """What one generated GAN script says; see templates/train_gan_*.py.j2."""

    variant: Literal["model", "native"]
    docstring: str
    imports: tuple[Import, ...]
    shared: GanShared
    device_notes: tuple[DeviceNote, ...]
    sets_parallel_context: bool = False  # the reducers are written out: Model needs no parallel context
    # Measured on this project's 2-core AVX-512 machine (docs/cookbook/gan.md): with MindSpore 2.10's
    # default, oneDNN runs the networks' convolutions on its reference kernel; capped at AVX2 it uses
    # its jit kernels (the header sets ONEDNN_MAX_CPU_ISA; a value the user exported wins).
    caps_onednn: ClassVar[bool] = True

    @property
    def template(self) -> str:
        return f"train_gan_{self.variant}.py.j2"


def build_gan_shared(
    cfg: GanConfig, *, source: str, config_dir: Path, out_dir: Path, name: str, config_sha256: str | None
) -> GanShared:
    rel = Relative(config_dir, out_dir)
    shape = image_shape_of(cfg.data.train)
    channels = shape[0] if shape else None
    data = build_data(cfg, rel)
    generator = _network(cfg, "generator", rel, channels)
    discriminator = _network(cfg, "discriminator", rel, channels)
    ls = cfg.loss_scale
    scaler: Literal["static", "dynamic"] | None = (
        "dynamic"
        if isinstance(ls, DynamicLossScale)
        else "static"
        if isinstance(ls, FixedLossScale)
        else None
    )
    step = GanStep(
        scaler=scaler,
        skip_overflow=scaler == "dynamic" or (isinstance(ls, FixedLossScale) and ls.drop_overflow_update),
        d_steps=cfg.gan.d_steps,
    )
    return GanShared(
        **frame_fields(cfg, data, name=name, source=source),
        constants=_constants(cfg, data, config_sha256),
        generator=generator,
        discriminator=discriminator,
        loss=None if cfg.gan.loss == "wasserstein" else cfg.gan.loss,
        gradient_penalty=cfg.gan.discriminator.gradient_penalty is not None,
        step=step,
        samples=cfg.gan.samples is not None,
        sys_paths=sys_paths([generator.factory, discriminator.factory, *(f.factory for f in data.functions)]),
    )


def gan_variant_plan(cfg: GanConfig, shared: GanShared, variant: Literal["model", "native"]) -> GanPlan:
    what = "mindspore.train.Model" if variant == "model" else "an explicit MindSpore training loop"
    return GanPlan(
        variant=variant,
        docstring=f"{shared.header.name}: a GAN (generator and discriminator) trained with {what}.",
        imports=_imports(shared, variant),
        shared=shared,
        device_notes=build_device_notes(cfg, model_variant=variant == "model"),
    )


def _network(cfg: GanConfig, role: Role, rel: Relative, channels: int | None) -> GanNetwork:
    part = getattr(cfg.gan, role)
    net, opt = part.network, part.optimizer
    short = role[0]
    factory = None
    blocks: tuple[Block, ...] = ()
    summary = ""
    args: tuple[object, ...] = ()
    kwargs: dict[str, object] = {"features": getattr(net, "features", None), "channels": channels}
    if isinstance(net, DcganGenerator):
        kind: Literal["dcgan", "mindcv", "import"] = "dcgan"
        builder, args = "Generator", (Name("LATENT_DIM"),)
        blocks = _generator_blocks(net.image_size)
        summary = f"Latent (N, LATENT_DIM, 1, 1) -> {_sides(blocks)} images in [-1, 1] (Tanh)."
    elif isinstance(net, DcganDiscriminator):
        kind, builder = "dcgan", "Discriminator"
        size = image_shape_of(cfg.data.train)
        assert size is not None  # the gan rules reject an unknown image shape for builtin networks
        blocks = _discriminator_blocks(size[1])
        summary = f"Images {size[1]}x{size[2]} -> {_sides(blocks)} -> one logit per image, (N, 1)."
    elif isinstance(net, MindcvNetwork):
        kind, builder, args = "mindcv", "create_model", (net.name,)
        kwargs = {"num_classes": net.num_classes, "pretrained": False, **net.kwargs}
    else:
        kind = "import"
        factory = rel.imported(net.factory, f"gan.{role}.network.factory")
        builder, kwargs = factory.bound, dict(net.kwargs)
    opt_args = optimizer_args(opt)
    if opt.weight_decay:
        opt_args.append(("weight_decay", Name(f"{short.upper()}_WEIGHT_DECAY")))
    class_name, module = optimizer_class(opt)
    return GanNetwork(
        role=role,
        kind=kind,
        call=Call.of(builder, *args, **kwargs),
        factory=factory,
        blocks=blocks,
        summary=summary,
        optimizer_class=class_name,
        optimizer_module=module,
        optimizer_args=tuple(opt_args),
        grad_clip=part.grad_clip.kind if part.grad_clip else None,
        clip_weights=getattr(part, "clip_weights", None) is not None,
        norm=net.norm if isinstance(net, DcganDiscriminator) else None,
    )


def _sides(blocks: tuple[Block, ...]) -> str:
    return " -> ".join(f"{b.size}x{b.size}" for b in blocks)


def _generator_blocks(image_size: int) -> tuple[Block, ...]:
    """4x4 from the latent vector, doubled by each transposed convolution up to image_size."""
    n = int(math.log2(image_size)) - 2  # transposed convolutions after the first
    middle = [Block(2 ** (n - i), 2 ** (n - i - 1), 4 * 2**i) for i in range(1, n)]
    return (Block(0, 2 ** (n - 1), 4), *middle, Block(1, 0, image_size))


def _discriminator_blocks(image_size: int) -> tuple[Block, ...]:
    """Halved by each strided convolution down to 4x4 (then one logit)."""
    n = int(math.log2(image_size)) - 2
    rest = [Block(2 ** (i - 1), 2**i, image_size // 2 ** (i + 1)) for i in range(1, n)]
    return (Block(0, 1, image_size // 2), *rest)


def _constants(cfg: GanConfig, data: DataPlan, config_sha256: str | None) -> tuple[tuple[Constant, ...], ...]:
    gan = cfg.gan
    output_dir = gan.samples is not None or cfg.callbacks.checkpoint is not None
    run = run_constants(cfg, data, config_sha256, output_dir=output_dir)
    networks = config_constants(cfg, "gan", "latent_dim")
    if gan.d_steps > 1:
        networks += config_constants(cfg, "gan", "d_steps")
    for role in ("generator", "discriminator"):
        opt, clip, short = getattr(gan, role).optimizer, getattr(gan, role).grad_clip, f"{role[0].upper()}_"
        fields = ("lr", "weight_decay") if opt.weight_decay else ("lr",)
        networks += config_constants(cfg, f"gan.{role}.optimizer", *fields, prefix=short)
        if clip is not None:
            field = "max_norm" if isinstance(clip, GlobalNormClip | NormClip) else "clip_value"
            networks += config_constants(cfg, f"gan.{role}.grad_clip", field, prefix=short)
    critic = gan.discriminator
    if critic.clip_weights is not None:
        networks.append(Constant("D_WEIGHT_CLIP", critic.clip_weights, "gan.discriminator.clip_weights"))
    if critic.gradient_penalty is not None:
        networks.append(Constant("GP_WEIGHT", critic.gradient_penalty, "gan.discriminator.gradient_penalty"))
    groups = [run, networks]
    if gan.samples is not None:
        samples = config_constants(cfg, "gan.samples", "count", "columns", "seed", prefix="SAMPLE_")
        groups.append([*samples, Constant("SAMPLES_DIR", gan.samples.directory, "gan.samples.directory")])
    if cfg.callbacks.checkpoint is not None:
        groups.append(checkpoint_constants(cfg))
    groups += [loss_scale_constants(cfg), parallel_constants(cfg)]
    return tuple(tuple(group) for group in groups if group)


def _imports(s: GanShared, variant: str) -> tuple[Import, ...]:
    needs = {
        **dict.fromkeys(("os", "numpy", "ops"), True),  # os: ONEDNN_MAX_CPU_ISA (see the header)
        "sample_grid": s.samples,
        "initializer": s.dcgan,
        "create_model": any(n.kind == "mindcv" for n in s.networks),
        "amp": s.amp.enabled or s.step.scaler is not None,
    }
    optimizers = [(n.optimizer_module, n.optimizer_class) for n in s.networks if n.optimizer_module]
    return s.script_imports(needs, *optimizers, native=variant == "native")
