"""Plan of a gan config's scripts: two networks, their optimizers and losses, the latent vectors, the samples.

GanShared carries what both GAN variants print (the fields the shared macros read have the names and
meanings Shared gives them: header, constants, data, checkpoint, parallel, ...); GanPlan adds the
variant. The templates are train_gan_model.py.j2 and train_gan_native.py.j2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Literal

from mscodegen import __version__
from mscodegen.catalog.literals import call, literal
from mscodegen.plan.data import DatasetFn, DatasetUse, build_data, data_dir_expr
from mscodegen.plan.imports import Import, data_needs, imports
from mscodegen.plan.loop import (
    Checkpoint,
    Constant,
    DeviceNote,
    Header,
    build_device_notes,
    checkpoint_constants,
    loss_scale_constants,
    parallel_constants,
    run_constants,
)
from mscodegen.plan.setup import (
    OPTIMIZER_CLASSES,
    OPTIMIZER_MODULES,
    ImportedName,
    Relative,
    Runtime,
    build_runtime,
    optimizer_args,
    sys_paths,
)
from mscodegen.plan.step import Amp, Parallel, build_amp, build_parallel
from mscodegen.schema import image_shape_of
from mscodegen.schema.gan import DcganDiscriminator, DcganGenerator, GanConfig
from mscodegen.schema.network import MindcvNetwork
from mscodegen.schema.precision import DynamicLossScale, FixedLossScale

Role = Literal["generator", "discriminator"]


@dataclass(frozen=True, slots=True)
class Layer:
    """One entry of a builtin network's SequentialCell, and the side of the map it leaves."""

    expr: str
    size: int | None  # None: no map (Tanh, Flatten, the logit)


@dataclass(frozen=True, slots=True)
class GanNetwork:
    """One of the two networks and its optimizer, as train() builds them."""

    role: Role
    short: str  # "g" or "d": the prefix of its optimizer, grad function, LR ...
    kind: Literal["dcgan", "mindcv", "import"]
    build_expr: str
    factory: ImportedName | None
    layers: tuple[Layer, ...]  # dcgan: the SequentialCell's entries
    summary: str  # the builtin class's docstring
    optimizer_class: str  # nn.Adam, or the imported class (Lion)
    optimizer_module: str | None
    optimizer_args: tuple[tuple[str, str], ...]  # after params and learning_rate
    key: str  # gan.generator

    @property
    def lr(self) -> str:
        return f"{self.short.upper()}_LR"


@dataclass(frozen=True, slots=True)
class GanStep:
    """What one step adds to the two updates: loss scaling per network, the all-reduce, d_steps."""

    scaler: Literal["static", "dynamic"] | None  # amp.StaticLossScaler / DynamicLossScaler per network
    skip_overflow: bool  # an update whose gradients are not finite is skipped (and logged)
    d_steps: int
    parallel: bool  # a DistributedGradReducer per optimizer

    @property
    def state_note(self) -> str:
        """What a checkpoint holds besides weights and optimizer state (the resume macro's docstring)."""
        return ", the loss scales" if self.scaler == "dynamic" else ""


@dataclass(frozen=True, slots=True)
class Samples:
    count: int
    columns: int


@dataclass(frozen=True, slots=True)
class GanShared:
    """Everything both GAN variants print the same way."""

    header: Header
    constants: tuple[tuple[Constant, ...], ...]
    runtime: Runtime
    generator: GanNetwork
    discriminator: GanNetwork
    channels: int | None  # of data.train's images (the builtin networks' in/out channels)
    loss_expr: str  # gan.loss
    amp: Amp
    step: GanStep
    samples: Samples | None
    data_helpers: tuple[str, ...]
    sys_paths: tuple[tuple[str, tuple[str, ...]], ...]
    data_dir: str | None
    data_dir_keys: str  # the keys the DATA_DIR check is explained by
    dataset_functions: tuple[DatasetFn, ...]
    datasets: tuple[DatasetUse, ...]
    parallel: Parallel | None
    checkpoint: Checkpoint | None
    resumable: bool
    loss_monitor: bool
    time_monitor: bool

    @property
    def networks(self) -> tuple[GanNetwork, GanNetwork]:
        """Both, in the order they are built (which the initial weights depend on)."""
        return (self.generator, self.discriminator)

    @property
    def dcgan(self) -> bool:
        return "dcgan" in (self.generator.kind, self.discriminator.kind)

    @property
    def get_lr(self) -> str:
        """The harness's reading of the LR an optimizer applies next; an imported optimizer (mindcv's
        Lion) advances its step in its own get_lr, so nn.Optimizer's is called."""
        imported = any(n.optimizer_module for n in self.networks)
        return "nn.Optimizer.get_lr(optimizer)" if imported else "optimizer.get_lr()"

    @property
    def has_output_dir(self) -> bool:
        return self.samples is not None or self.checkpoint is not None

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
    callbacks: tuple[str, ...]  # model variant: the callbacks list train() passes to Model
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
    sharded = cfg.parallel.mode == "data_parallel"
    label = cfg.data.labels[0]
    functions = tuple(_with_latent_noise(f, label, cfg.gan.d_steps, sharded) for f in data.functions)
    generator = _network(cfg, "generator", rel, channels)
    discriminator = _network(cfg, "discriminator", rel, channels)
    checkpoint = _checkpoint(cfg)
    resumable = (
        checkpoint is not None and cfg.callbacks.checkpoint is not None and cfg.callbacks.checkpoint.resumable
    )
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
        parallel=sharded,
    )
    samples = cfg.gan.samples
    return GanShared(
        header=Header(name, source, out_dir.as_posix(), __version__, config_sha256),
        constants=_constants(cfg, data.data_dir, data.data_dir_keys, config_sha256, resumable),
        runtime=build_runtime(cfg),
        generator=generator,
        discriminator=discriminator,
        channels=channels,
        loss_expr=f"nn.{cfg.gan.loss}()",
        amp=build_amp(cfg),
        step=step,
        samples=Samples(samples.count, samples.columns) if samples else None,
        data_helpers=data.helpers,
        sys_paths=sys_paths([generator.factory, discriminator.factory, *(f.factory for f in functions)]),
        data_dir=data.data_dir,
        data_dir_keys=data.data_dir_keys,
        dataset_functions=functions,
        datasets=data.uses,
        parallel=build_parallel(cfg),
        checkpoint=checkpoint,
        resumable=resumable,
        loss_monitor=cfg.callbacks.loss_monitor,
        time_monitor=cfg.callbacks.time_monitor,
    )


def gan_variant_plan(cfg: GanConfig, shared: GanShared, variant: Literal["model", "native"]) -> GanPlan:
    what = "mindspore.train.Model" if variant == "model" else "an explicit MindSpore training loop"
    return GanPlan(
        variant=variant,
        docstring=f"{shared.header.name}: a GAN (generator and discriminator) trained with {what}.",
        imports=_imports(shared, variant),
        shared=shared,
        device_notes=build_device_notes(cfg, model_variant=variant == "model"),
        callbacks=_callbacks(shared) if variant == "model" else (),
    )


def _callbacks(s: GanShared) -> tuple[str, ...]:
    """The model variant's callbacks, in the order Model calls them (samples and checkpoints are added after)."""
    out = ["LossesMonitor(args, start_step)" if s.resumable else "LossesMonitor(args)"]
    if s.time_monitor:
        out.append("TimeMonitor()")
    return tuple(out)


def _checkpoint(cfg: GanConfig) -> Checkpoint | None:
    ckpt = cfg.callbacks.checkpoint
    if ckpt is None:
        return None
    return Checkpoint("steps" if ckpt.every_steps else "epochs")


def _with_latent_noise(fn: DatasetFn, label: str, d_steps: int, sharded: bool) -> DatasetFn:
    """The dataset function with the label column replaced by the latent vectors, and a batch per step."""
    noise = "lambda label, info: add_latent_noise(label, info, shard_id)" if sharded else "add_latent_noise"
    batch_map = f', per_batch_map={noise}, input_columns=[{literal(label)}], output_columns=["noise"]'
    batch = fn.batch_expr
    if d_steps > 1:  # one row per step: a batch for each discriminator update
        batch = batch.replace(" // num_shards", "") + " * D_STEPS" + (" // num_shards" if sharded else "")
    return replace(fn, batch_expr=batch, batch_map=batch_map)


def _network(cfg: GanConfig, role: Role, rel: Relative, channels: int | None) -> GanNetwork:
    part = getattr(cfg.gan, role)
    net, opt = part.network, part.optimizer
    short = role[0]
    factory = None
    layers: tuple[Layer, ...] = ()
    summary = ""
    if isinstance(net, DcganGenerator):
        kind: Literal["dcgan", "mindcv", "import"] = "dcgan"
        layers = _generator_layers(net.image_size)
        build = call("Generator", "LATENT_DIM", features=net.features, channels=channels)
        sizes = " -> ".join(f"{layer.size}x{layer.size}" for layer in layers if layer.size)
        summary = f"Latent (N, LATENT_DIM, 1, 1) -> {sizes} images in [-1, 1] (Tanh)."
    elif isinstance(net, DcganDiscriminator):
        kind = "dcgan"
        size = image_shape_of(cfg.data.train)
        assert size is not None  # the gan rules reject an unknown image shape for builtin networks
        layers = _discriminator_layers(size[1])
        build = call("Discriminator", features=net.features, channels=channels)
        sizes = " -> ".join(f"{layer.size}x{layer.size}" for layer in layers if layer.size)
        summary = f"Images {size[1]}x{size[2]} -> {sizes} -> one logit per image, (N, 1)."
    elif isinstance(net, MindcvNetwork):
        kind = "mindcv"
        build = call(
            "create_model", literal(net.name), num_classes=net.num_classes, pretrained=False, **net.kwargs
        )
    else:
        kind = "import"
        factory = rel.imported(net.factory, f"gan.{role}.network.factory")
        build = call(factory.attr, **net.kwargs)
    args = optimizer_args(opt)
    if opt.weight_decay:
        args.append(("weight_decay", f"{short.upper()}_WEIGHT_DECAY"))
    module = OPTIMIZER_MODULES.get(opt.name)
    name = OPTIMIZER_CLASSES[opt.name]
    return GanNetwork(
        role=role,
        short=short,
        kind=kind,
        build_expr=build,
        factory=factory,
        layers=layers,
        summary=summary,
        optimizer_class=name if module else f"nn.{name}",
        optimizer_module=module,
        optimizer_args=tuple(args),
        key=f"gan.{role}",
    )


def _multiple(k: int) -> str:
    return "features" if k == 1 else f"features * {k}"


def _generator_layers(image_size: int) -> tuple[Layer, ...]:
    """4x4 from the latent vector, doubled by each transposed convolution up to image_size."""
    n = int(math.log2(image_size)) - 2  # transposed convolutions after the first
    out = [Layer(f"*deconv_block(latent_dim, {_multiple(2 ** (n - 1))}, stride=1, padding=0)", 4)]
    for i in range(1, n):
        k = 2 ** (n - i)
        out.append(
            Layer(f"*deconv_block({_multiple(k)}, {_multiple(k // 2)}, stride=2, padding=1)", 4 * 2**i)
        )
    out.append(
        Layer('nn.Conv2dTranspose(features, channels, 4, 2, "pad", 1, weight_init=WEIGHT_INIT)', image_size)
    )
    out.append(Layer("nn.Tanh()", None))
    return tuple(out)


def _discriminator_layers(image_size: int) -> tuple[Layer, ...]:
    """Halved by each strided convolution down to 4x4, then one logit."""
    n = int(math.log2(image_size)) - 2
    out = [Layer("*conv_block(channels, features, batch_norm=False)", image_size // 2)]
    for i in range(1, n):
        k = 2**i
        out.append(
            Layer(
                f"*conv_block({_multiple(k // 2)}, {_multiple(k)}, batch_norm=True)",
                image_size // 2 ** (i + 1),
            )
        )
    last = _multiple(2 ** (n - 1))
    out += [
        Layer("nn.Flatten()", None),
        Layer(f"nn.Dense({last} * 4 * 4, 1, weight_init=WEIGHT_INIT, has_bias=False)", None),
    ]
    return tuple(out)


def _constants(
    cfg: GanConfig, data_dir: str | None, data_keys: str, config_sha256: str | None, resumable: bool
) -> tuple[tuple[Constant, ...], ...]:
    gan = cfg.gan
    run = run_constants(
        cfg,
        data_dir=data_dir_expr(data_dir) if data_dir is not None else None,
        data_keys=data_keys,
        config_sha256=config_sha256,
        resumable=resumable,
        output_dir=gan.samples is not None or cfg.callbacks.checkpoint is not None,
        checkpoint=cfg.callbacks.checkpoint is not None,
    )
    networks = [Constant("LATENT_DIM", literal(gan.latent_dim), "gan.latent_dim")]
    if gan.d_steps > 1:
        networks.append(Constant("D_STEPS", literal(gan.d_steps), "gan.d_steps"))
    for role in ("generator", "discriminator"):
        opt, short = getattr(gan, role).optimizer, role[0].upper()
        networks.append(Constant(f"{short}_LR", literal(opt.lr), f"gan.{role}.optimizer.lr"))
        if opt.weight_decay:
            networks.append(
                Constant(
                    f"{short}_WEIGHT_DECAY", literal(opt.weight_decay), f"gan.{role}.optimizer.weight_decay"
                )
            )
    groups = [run, networks]
    if gan.samples is not None:
        groups.append(
            [
                Constant("SAMPLE_COUNT", literal(gan.samples.count), "gan.samples.count"),
                Constant("SAMPLE_COLUMNS", literal(gan.samples.columns), "gan.samples.columns"),
                Constant("SAMPLE_SEED", literal(gan.samples.seed), "gan.samples.seed"),
                Constant("SAMPLES_DIR", literal(gan.samples.directory), "gan.samples.directory"),
            ]
        )
    if cfg.callbacks.checkpoint is not None:
        groups.append(checkpoint_constants(cfg))
    groups += [loss_scale_constants(cfg), parallel_constants(cfg)]
    return tuple(tuple(group) for group in groups if group)


def _imports(s: GanShared, variant: str) -> tuple[Import, ...]:
    model = variant == "model"
    needs = data_needs(s.dataset_functions, s.data_helpers, s.resumable)
    needs |= {
        **dict.fromkeys(("script", "os", "numpy", "ops"), True),  # os: ONEDNN_MAX_CPU_ISA (see the header)
        "vision": needs["vision"] or s.samples is not None,  # the sample grids
        "parallel": s.parallel is not None,
        "time": s.time_monitor and not model,
        "initializer": s.dcgan,
        "create_model": any(n.kind == "mindcv" for n in s.networks),
        "amp": s.amp.enabled or s.step.scaler is not None,
        "model": model,
        "time_monitor": model and s.time_monitor,
        "checkpoint": s.checkpoint is not None,
        "run_context": s.checkpoint is not None and not model,
    }
    return imports(
        needs, *((n.optimizer_module, n.optimizer_class) for n in s.networks if n.optimizer_module)
    )
