"""Network and metric for autoencoder.yaml: the network rebuilds its input image."""

import math

import numpy as np
from mindspore import nn, ops


class DenseAutoencoder(nn.Cell):
    """Encode an image into `code` numbers, decode them back to the image's shape: construct(image)."""

    def __init__(self, image_shape=(1, 8, 8), code=16):
        super().__init__()
        self.image_shape = tuple(image_shape)
        self.flatten = nn.Flatten()
        self.encoder = nn.Dense(math.prod(self.image_shape), code)
        self.relu = nn.ReLU()
        self.decoder = nn.Dense(code, math.prod(self.image_shape))

    def construct(self, image):
        code = self.relu(self.encoder(self.flatten(image)))
        return ops.reshape(self.decoder(code), (-1, *self.image_shape))


class PixelMSE(nn.Metric):
    """The squared error per pixel, averaged over every pixel of every image evaluated: what MSELoss
    computes on one batch, over the whole split (nn.MSE sums each image's pixels instead)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._squared_error, self._pixels = 0.0, 0

    def update(self, *inputs):
        output, image = (self._convert_data(x) for x in inputs)
        self._squared_error += float(np.square(output.astype(np.float64) - image).sum())
        self._pixels += image.size

    def eval(self):
        return self._squared_error / self._pixels
