"""`gan`: two networks trained against each other, each with its own optimizer (GanConfig's section).

A training scheme of several networks is a section named after the scheme whose keys are its roles:
`gan: {generator: ..., discriminator: ...}`. Each role is a network (the `network:` section's kinds,
with the scheme's own builtins) and its optimizer, so another pairing (`distill: {teacher, student}`)
or a third role is one more section or key of the same parts, validated the same way.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from mscodegen.schema._base import RUN_NAME_PATTERN, PathText, PositiveFloat32, PositiveInt, Section, Seed
from mscodegen.schema.data import Data
from mscodegen.schema.network import ImportedNetwork, MindcvNetwork
from mscodegen.schema.optim import Adam, Optimizer
from mscodegen.schema.parallel import Parallel
from mscodegen.schema.precision import Amp, Clip, LossScale, NoLossScale
from mscodegen.schema.runtime import Runtime
from mscodegen.schema.training import Callbacks, Train

# How every message about a one-network feature a gan config cannot use ends.
NOT_YET = "not supported with two networks (gan) yet"
# Sides the builtin DCGAN networks take: from 4x4, each strided (transposed) convolution doubles it.
DCGAN_SIZES = (16, 32, 64, 128)


class DcganGenerator(Section):
    """DCGAN's generator, as MindSpore's DCGAN tutorial builds it: the latent vector (N, latent_dim, 1, 1)
    through transposed convolutions with BatchNorm and ReLU to a 4x4 map, doubled per layer, then an image
    in [-1, 1] (Tanh) with data.train's channels. Weights N(0, 0.02), BatchNorm gamma N(1, 0.02)."""

    kind: Literal["builtin"]
    name: Literal["dcgan_generator"]
    features: PositiveInt = Field(
        64, description="Channels of the last hidden layer (ngf); doubled per layer towards the 4x4 map."
    )
    image_size: Literal[DCGAN_SIZES] = Field(  # type: ignore[valid-type]
        32, description="Side of the square images it makes; data.train's images must have it."
    )


class DcganDiscriminator(Section):
    """DCGAN's discriminator: strided 4x4 convolutions with LeakyReLU(0.2) (BatchNorm after the first)
    down to a 4x4 map, then one logit per image (a Dense layer: the tutorial's last 4x4 convolution, as
    a matrix product). Takes data.train's images: square, 16 to 128 pixels a side, a power of two."""

    kind: Literal["builtin"]
    name: Literal["dcgan_discriminator"]
    features: PositiveInt = Field(
        64, description="Channels of the first layer (ndf); doubled per layer towards the 4x4 map."
    )
    norm: Literal["batch", "layer"] = Field(
        "batch",
        description="After each convolution but the first: batch (BatchNorm2d, DCGAN) or layer (LayerNorm "
        "over each image's channels x height x width: WGAN-GP's critic, whose gradient penalty is per image "
        "and BatchNorm mixes the batch's images).",
    )


GeneratorNetwork = Annotated[DcganGenerator | ImportedNetwork, Field(discriminator="kind")]
DiscriminatorNetwork = Annotated[
    DcganDiscriminator | MindcvNetwork | ImportedNetwork, Field(discriminator="kind")
]


def _dcgan_adam() -> Adam:
    return Adam(name="adam", lr=0.0002, beta1=0.5)


class _Role(Section):
    """What each role has: its network (the role's kinds), its optimizer, its gradient clipping."""

    network: object
    optimizer: Optimizer = Field(
        default_factory=_dcgan_adam, description="Default: Adam(lr 0.0002, beta1 0.5), as DCGAN."
    )
    grad_clip: Clip | None = Field(
        None,
        description="Its gradients clipped before its optimizer step (after unscaling), as grad.clip does "
        "for one network: global_norm, norm or value.",
    )


class GeneratorRole(_Role):
    """The network that makes images from latent vectors, and its optimizer."""

    network: GeneratorNetwork = Field(
        description="builtin dcgan_generator, or your own (kind: import) taking (N, latent_dim, 1, 1)."
    )


class DiscriminatorRole(_Role):
    """The network that tells data.train's images from generated ones, and its optimizer."""

    network: DiscriminatorNetwork = Field(
        description="builtin dcgan_discriminator, a mindcv model with num_classes 1, or your own (kind: "
        "import); it returns one logit per image."
    )
    clip_weights: PositiveFloat32 | None = Field(
        None,
        description="WGAN's weight clipping (loss: wasserstein): after each of its updates, every trainable "
        "parameter of the critic clamped to [-clip_weights, clip_weights] (the paper: 0.01).",
    )
    gradient_penalty: PositiveFloat32 | None = Field(
        None,
        description="WGAN-GP's lambda (loss: wasserstein; the paper: 10): the critic's loss gains "
        "lambda * mean((||grad D(x)||_2 - 1)^2) at x = e * real + (1 - e) * fake, e ~ U[0, 1) per image, "
        "drawn with the latent vectors. Instead of clip_weights; graph mode only.",
    )


class SampleGrid(Section):
    """A fixed batch of latent vectors through the generator after every epoch, saved as a grid PNG:
    <--output-dir>/<directory>/epoch_003.png."""

    count: PositiveInt = Field(64, description="Images in the grid.")
    columns: PositiveInt = Field(8, description="Images per row.")
    seed: Seed = Field(0, description="Seed of the numpy generator that draws the fixed latent batch.")
    directory: Annotated[PathText, Field(min_length=1, pattern=r"^[^/\\]+$")] = Field(
        "samples", description="Under --output-dir."
    )


class Gan(Section):
    """Two networks trained against each other. One step: d_steps discriminator updates (real images
    labelled 1, generated ones 0, the generator left alone), then one generator update (its images
    through the discriminator, labelled 1). With loss: wasserstein the discriminator is WGAN's critic:
    its score instead of labels. The latent vectors come with each batch, drawn from
    (runtime.seed, epoch, batch), so both variants and a resumed run see the same ones."""

    generator: GeneratorRole
    discriminator: DiscriminatorRole
    latent_dim: PositiveInt = Field(100, description="Size of the latent vector (nz).")
    d_steps: PositiveInt = Field(
        1,
        description="Discriminator updates per generator update (WGAN's n_critic, 5 in the paper), each on "
        "a batch of its own: a step then reads d_steps batches of data.train.batch_size, and counts as one "
        "step (--max-steps, logs, checkpoints).",
    )
    loss: Literal["BCEWithLogitsLoss", "MSELoss", "wasserstein"] = Field(
        "BCEWithLogitsLoss",
        description="BCEWithLogitsLoss on the discriminator's logit (DCGAN; the tutorial's Sigmoid + "
        "BCELoss in one op), MSELoss (least-squares GAN), or wasserstein (WGAN: the critic's loss "
        "mean(D(fake)) - mean(D(real)), the generator's -mean(D(fake)); bound the critic with "
        "gan.discriminator.clip_weights or gradient_penalty).",
    )
    samples: SampleGrid | None = Field(
        default_factory=SampleGrid, description="The sample grid written after every epoch; null: none."
    )


class GanConfig(Section):
    """A training setup of two networks (`gan:`) instead of one (`network:`, `optimizer:`, `loss:`)."""

    name: Annotated[str, Field(pattern=RUN_NAME_PATTERN)] | None = Field(
        None, description="Name of the run and of the output directory; default: the config file's stem."
    )
    runtime: Runtime = Field(default_factory=Runtime)
    gan: Gan
    data: Data
    train: Train = Field(default_factory=Train)
    callbacks: Callbacks = Field(default_factory=Callbacks)
    amp: Amp = Field(default_factory=Amp)
    loss_scale: LossScale = Field(
        default_factory=lambda: NoLossScale(kind="none"),
        description="Each network gets a loss scaler of its own with these settings.",
    )
    parallel: Parallel = Field(default_factory=Parallel)
