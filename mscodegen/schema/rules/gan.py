"""Rules of a gan config: each network against the data's images, and what two networks cannot do yet.

Every message about a feature of the one-network form says "not supported with two networks (gan)",
at the key that asks for it (mscodegen.config.forms says it for the sections a gan config has no place for).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.schema import image_shape_of
from mscodegen.schema.gan import DCGAN_SIZES, NOT_YET, DcganDiscriminator, DcganGenerator, GanConfig
from mscodegen.schema.network import ImportedNetwork, MindcvNetwork
from mscodegen.schema.rules._registry import Violation, rule
from mscodegen.schema.rules.data import chw_rules, known_train_batches, shape_source
from mscodegen.schema.rules.network import in_channels_rules

ROLES = ("generator", "discriminator")


@rule("gan", "data.train")
def _image_rules(cfg: GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    """The generator makes data.train's images; the discriminator takes them."""
    gen, disc, spec = cfg.gan.generator.network, cfg.gan.discriminator.network, cfg.data.train
    builtin = [
        role
        for role in ROLES
        if isinstance(getattr(cfg.gan, role).network, DcganGenerator | DcganDiscriminator)
    ]
    if builtin:
        yield from chw_rules(cfg, "the builtin networks")
    shape = image_shape_of(spec)
    if shape is None:
        for role in builtin:
            yield (
                ("gan", role, "network"),
                f"the builtin {role} needs data.train's image shape: set data.train.image_shape "
                "(or resize the images in data.train.transforms)",
            )
        return
    channels, height, width = shape
    shape_at, after = shape_source("train", spec)
    if isinstance(gen, DcganGenerator) and (height, width) != (gen.image_size, gen.image_size):
        fits = height == width and height in DCGAN_SIZES
        fix = (
            f"set image_size: {height}"
            if fits
            else f"resize data.train to [{gen.image_size}, {gen.image_size}]"
        )
        yield (
            ("gan", "generator", "network", "image_size"),
            f"dcgan_generator makes {gen.image_size}x{gen.image_size} images but data.train's are "
            f"{height}x{width} {after}: {fix}",
        )
    if isinstance(disc, DcganDiscriminator) and (height != width or height not in DCGAN_SIZES):
        sizes = ", ".join(map(str, DCGAN_SIZES[:-1])) + f" or {DCGAN_SIZES[-1]}"
        yield (
            shape_at,
            f"dcgan_discriminator takes square images of {sizes} pixels a side, but data.train's are "
            f"{height}x{width} {after}",
        )
    if isinstance(disc, MindcvNetwork):  # one logit per image, of data.train's channels
        if disc.num_classes != 1:
            yield (
                ("gan", "discriminator", "network", "num_classes"),
                "the discriminator returns one logit per image: set num_classes: 1",
            )
        yield from in_channels_rules(disc, channels, ("gan", "discriminator", "network"), "kwargs")


@rule("gan", "data", "parallel")
def _data_rules(cfg: GanConfig, config_dir: Path | None) -> Iterator[Violation]:
    data = cfg.data
    if len(data.inputs) != 1:
        yield ("data", "inputs"), "a gan takes one image column (the discriminator's input): name one"
    if len(data.labels) != 1:
        yield (
            ("data", "labels"),
            "a gan replaces the label column with the latent vectors: name one column (the data's labels are "
            "not used)",
        )
    if data.eval is not None:
        yield ("data", "eval"), f"evaluation is {NOT_YET} (the sample grid shows the progress)"
    if data.train.batch_transforms:
        yield ("data", "train", "batch_transforms"), f"batch-level ops (they mix labels) are {NOT_YET}"
    batches, k = known_train_batches(cfg, config_dir), cfg.gan.d_steps
    if batches and k > 1 and batches // k == 0:
        yield (
            ("gan", "d_steps"),
            f"a step reads {k} batches (one per discriminator update) but data.train gives {batches} per "
            "epoch: no step would be trained; lower d_steps or data.train.batch_size",
        )


@rule("gan", "callbacks", "train", "amp")
def _loop_rules(cfg: GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    if cfg.callbacks.early_stopping is not None:
        yield (
            ("callbacks", "early_stopping"),
            f"early stopping (it watches an evaluation metric) is {NOT_YET}",
        )
    ckpt = cfg.callbacks.checkpoint
    if ckpt is not None and ckpt.keep is not None:
        yield ("callbacks", "checkpoint", "keep"), f"keeping the best checkpoints by a metric is {NOT_YET}"
    if ckpt is not None and ckpt.keep_max_by is not None:
        yield ("callbacks", "checkpoint", "keep_max_by"), f"ranking checkpoints by a metric is {NOT_YET}"
    if cfg.train.dataset_sink_mode:
        yield ("train", "dataset_sink_mode"), f"sink mode is {NOT_YET}"
    if cfg.amp.fp32_cells:
        yield (
            ("amp", "fp32_cells"),
            f"keeping cells in float32 is {NOT_YET} (amp.level applies to both networks)",
        )


@rule("gan", "runtime", "loss_scale")
def _role_rules(cfg: GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    """What each network's optimizer and network section may hold with two networks."""
    for role in ROLES:
        part = getattr(cfg.gan, role)
        opt, net, at = part.optimizer, part.network, ("gan", role)
        if opt.groups:
            yield (*at, "optimizer", "groups"), f"parameter groups are {NOT_YET}"
        if opt.layer_decay is not None:
            yield (*at, "optimizer", "layer_decay"), f"layer-wise LR decay is {NOT_YET}"
        if opt.decay_rule != "mindspore_default":
            yield (*at, "optimizer", "decay_filter"), f"decay_filter {opt.decay_filter} is {NOT_YET}"
        if opt.name == "lamb" and cfg.runtime.device_target == "CPU":
            yield (
                (*at, "optimizer", "name"),
                "lamb: nn.Lamb's kernel has no CPU implementation in MindSpore 2.10; use adam or adamw",
            )
        if isinstance(net, ImportedNetwork | MindcvNetwork):
            if net.checkpoint is not None:
                yield (*at, "network", "checkpoint"), f"loading weights before training is {NOT_YET}"
            if net.freeze is not None:
                yield (*at, "network", "freeze"), f"freezing parameters is {NOT_YET}"


@rule("gan", "runtime", "amp")
def _critic_rules(cfg: GanConfig, _config_dir: Path | None) -> Iterator[Violation]:
    """Weight clipping and the gradient penalty bound a Wasserstein critic: one of them, in graph mode;
    a network's gradient norm clipping in float32."""
    critic, at = cfg.gan.discriminator, ("gan", "discriminator")
    for key, what in (("clip_weights", "weight clipping"), ("gradient_penalty", "the gradient penalty")):
        if getattr(critic, key) is not None and cfg.gan.loss != "wasserstein":
            yield (
                (*at, key),
                f"{what} bounds a Wasserstein critic: set gan.loss: wasserstein, or remove {key}",
            )
    for role in ROLES:
        clip = getattr(cfg.gan, role).grad_clip
        if clip is not None and clip.kind != "value" and cfg.amp.level != "O0":
            yield (
                ("gan", role, "grad_clip", "kind"),
                f"{clip.kind} clipping with mixed precision is {NOT_YET} (with amp O2, norm clipping made the "
                "two variants' losses part at the third step); use kind: value, or amp.level: O0",
            )
    if critic.gradient_penalty is None:
        return
    if critic.clip_weights is not None:
        yield (
            (*at, "gradient_penalty"),
            "the gradient penalty replaces weight clipping (WGAN-GP): keep one of clip_weights and "
            "gradient_penalty",
        )
    if cfg.runtime.mode == "pynative":
        yield (
            ("runtime", "mode"),
            "the gradient penalty needs graph mode: MindSpore 2.10's PyNative mode gets its gradient wrong for "
            "a convolutional critic (the last Dense layer's comes out 0); set runtime.mode: graph",
        )
    if cfg.amp.level != "O0":
        yield (
            ("amp", "level"),
            f"the gradient penalty with mixed precision is {NOT_YET} (its input gradients in float16 are "
            "untested): set amp.level: O0",
        )
