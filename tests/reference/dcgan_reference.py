"""A DCGAN on the bundled digits, written by hand from MindSpore's DCGAN tutorial (not generated).

The independent check of examples/dcgan_digits.yaml's generated scripts (tests/e2e/test_gan.py runs both
for the first steps and compares the losses with ==). From the tutorial: SequentialCell networks of
transposed / strided 4x4 convolutions with BatchNorm, conv weights Normal(0, 0.02), BatchNorm gamma
Normal(1, 0.02); Adam(2e-4, beta1 0.5) per network, each renamed with update_parameters_name; closures
for the two losses, ms.value_and_grad over optimizer.parameters, one @ms.jit train step; d_loss the
mean of the real and the fake loss.

Where the example differs from the tutorial, this follows the example (each for a stated reason):
- the 32x32 digits need one upsampling block less than the tutorial's 64x64 faces (ngf * 4 at 4x4);
- the discriminator ends in a Dense layer on the 4x4 map: the tutorial's last 4x4 "valid" convolution
  to one channel is that product, and oneDNN runs the convolution ~100x slower on CPU;
- one logit and BCEWithLogitsLoss: the tutorial's Sigmoid + BCELoss is the same loss, 1 ulp apart;
- the discriminator's update comes first, then the generator's through the updated discriminator (the
  tutorial updates the generator first), on one latent batch per step;
- the latent vectors come from numpy, keyed by (seed, epoch, batch), not from ops.standard_normal: the
  generated scripts draw them in the data pipeline so that a resumed run sees the same ones.

Run: python dcgan_reference.py --steps 10 --loss-log ref.jsonl
"""

import argparse
import json
import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # the generated scripts' kernels (see their header)

import mindspore as ms
import numpy as np
from mindspore import dataset as ds
from mindspore import nn, ops
from mindspore.common.initializer import Normal
from mindspore.dataset import vision
from sklearn.datasets import load_digits

seed = 1
batch_size = 32
image_size = 32
nc = 1  # channels
nz = 100  # latent vector
ngf = 32  # generator features
ndf = 32  # discriminator features
lr = 0.0002
beta1 = 0.5

weight_init = Normal(mean=0, sigma=0.02)
gamma_init = Normal(mean=1, sigma=0.02)


class Generator(nn.Cell):
    def __init__(self):
        super().__init__()
        self.generator = nn.SequentialCell()
        self.generator.append(nn.Conv2dTranspose(nz, ngf * 4, 4, 1, "valid", weight_init=weight_init))
        self.generator.append(nn.BatchNorm2d(ngf * 4, gamma_init=gamma_init))
        self.generator.append(nn.ReLU())
        self.generator.append(nn.Conv2dTranspose(ngf * 4, ngf * 2, 4, 2, "pad", 1, weight_init=weight_init))
        self.generator.append(nn.BatchNorm2d(ngf * 2, gamma_init=gamma_init))
        self.generator.append(nn.ReLU())
        self.generator.append(nn.Conv2dTranspose(ngf * 2, ngf, 4, 2, "pad", 1, weight_init=weight_init))
        self.generator.append(nn.BatchNorm2d(ngf, gamma_init=gamma_init))
        self.generator.append(nn.ReLU())
        self.generator.append(nn.Conv2dTranspose(ngf, nc, 4, 2, "pad", 1, weight_init=weight_init))
        self.generator.append(nn.Tanh())

    def construct(self, x):
        return self.generator(x)


class Discriminator(nn.Cell):
    def __init__(self):
        super().__init__()
        self.discriminator = nn.SequentialCell()
        self.discriminator.append(nn.Conv2d(nc, ndf, 4, 2, "pad", 1, weight_init=weight_init))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(nn.Conv2d(ndf, ndf * 2, 4, 2, "pad", 1, weight_init=weight_init))
        self.discriminator.append(nn.BatchNorm2d(ndf * 2, gamma_init=gamma_init))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.discriminator.append(nn.Conv2d(ndf * 2, ndf * 4, 4, 2, "pad", 1, weight_init=weight_init))
        self.discriminator.append(nn.BatchNorm2d(ndf * 4, gamma_init=gamma_init))
        self.discriminator.append(nn.LeakyReLU(0.2))
        self.adv_layer = nn.Dense(ndf * 4 * 4 * 4, 1, weight_init=weight_init, has_bias=False)

    def construct(self, x):
        out = self.discriminator(x)
        return self.adv_layer(out.reshape(out.shape[0], -1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--loss-log", required=True)
    args = parser.parse_args()

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(seed)
    generator = Generator()
    discriminator = Discriminator()

    adversarial_loss = nn.BCEWithLogitsLoss()
    optimizer_d = nn.Adam(discriminator.trainable_params(), learning_rate=lr, beta1=beta1)
    optimizer_g = nn.Adam(generator.trainable_params(), learning_rate=lr, beta1=beta1)
    optimizer_g.update_parameters_name("optim_g.")
    optimizer_d.update_parameters_name("optim_d.")

    def discriminator_forward(real_imgs, gen_imgs, valid, fake):
        real_loss = adversarial_loss(discriminator(real_imgs), valid)
        fake_loss = adversarial_loss(discriminator(gen_imgs), fake)
        return (real_loss + fake_loss) / 2

    def generator_forward(z, valid):
        return adversarial_loss(discriminator(generator(z)), valid)

    grad_discriminator_fn = ms.value_and_grad(discriminator_forward, None, optimizer_d.parameters)
    grad_generator_fn = ms.value_and_grad(generator_forward, None, optimizer_g.parameters)

    @ms.jit
    def train_step(imgs, z):
        valid = ops.ones((imgs.shape[0], 1), ms.float32)
        fake = ops.zeros((imgs.shape[0], 1), ms.float32)
        gen_imgs = ops.stop_gradient(generator(z))
        d_loss, d_grads = grad_discriminator_fn(imgs, gen_imgs, valid, fake)
        optimizer_d(d_grads)
        g_loss, g_grads = grad_generator_fn(z, valid)
        optimizer_g(g_grads)
        return d_loss, g_loss

    # sklearn's digits in [0, 1], the first 80% (the example's data.train), to 32x32 in [-1, 1]
    digits = load_digits().images
    train = (digits[: len(digits) - int(len(digits) * 0.2)] / 16.0).astype(np.float32)[..., None]
    labels = np.zeros(len(train), np.int32)
    data = ds.NumpySlicesDataset({"image": train, "label": labels}, shuffle=True)
    data = data.map(
        [vision.Resize((image_size, image_size)), vision.Normalize([0.5], [0.5]), vision.HWC2CHW()], "image"
    )
    data = data.batch(batch_size, drop_remainder=True)

    generator.set_train()
    discriminator.set_train()
    step = 0
    iterator = data.create_tuple_iterator(num_epochs=-1)  # one iterator: each pass is the next epoch
    epoch = 0
    with open(args.loss_log, "w") as log:
        while step < args.steps:
            for batch, (imgs, _) in enumerate(iterator):
                rng = np.random.default_rng((seed, epoch, batch))
                z = ms.Tensor(rng.standard_normal((imgs.shape[0], nz, 1, 1), dtype=np.float32))
                d_loss, g_loss = train_step(imgs, z)
                step += 1
                record = {"step": step, "epoch": epoch + 1, "d_loss": d_loss.item(), "g_loss": g_loss.item()}
                print(json.dumps(record), file=log, flush=True)
                if step == args.steps:
                    break
            epoch += 1


if __name__ == "__main__":
    main()
