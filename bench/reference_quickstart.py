"""MindSpore's 1.x beginner quick start (LeNet-5 on MNIST), written by hand for `make bench`.

The reference the generated mnist_quickstart scripts (generated/mnist_quickstart/) are timed and
compared against, loss for loss. Written from the tutorial's documented facts (the 1.x LeNet5 quick
start as /work/shared/docs/mindspore-equivalence.md records it), in the tutorial's own shape: a
`create_dataset` with one `map` per op, the `LeNet5` cell, and `Model(net, loss, opt,
metrics={"Accuracy": Accuracy()})` trained with `model.train(..., dataset_sink_mode=False)` and a
`LossMonitor`, then `model.eval` on the test files.

- Data: label `TypeCast(int32)`; image `Resize((32, 32), Inter.LINEAR)`, `Rescale(1/255, 0)`,
  `Rescale(1/0.3081, -0.1307/0.3081)`, `HWC2CHW`; then `shuffle(buffer_size=10000)`,
  `batch(32, drop_remainder=True)`. The maps run on one worker, as the tutorial's
  `create_dataset(..., num_parallel_workers=1)` does.
- Network: two valid 5x5 convolutions (6, 16 channels) with ReLU and 2x2 max-pooling, then Dense
  400-120-84-10 with `Normal(0.02)` weights.
- Loss `SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")`, `Momentum(lr 0.01, 0.9)`,
  GRAPH mode.

Three changes from the tutorial, none of which changes what it computes: MindSpore 2.x spellings
(`mindspore.dataset.vision` for the removed `c_transforms`, `ms.set_device` for `device_target=`);
the bundled data folder (examples/data/mnist) holds the train and test files side by side, so the
datasets select them with `usage="train"` / `"test"` where the tutorial read two folders; and a
seed (`ms.set_seed(1)`, as the generated scripts' runtime.seed), so that two runs can be compared
step by step. Checkpoints (the tutorial's `ModelCheckpoint`) go to `--ckpt-dir`.
"""

import argparse
from pathlib import Path

import mindspore as ms
from mindspore import dataset as ds
from mindspore import nn
from mindspore.common.initializer import Normal
from mindspore.dataset import transforms, vision
from mindspore.dataset.vision import Inter
from mindspore.train import Accuracy, CheckpointConfig, LossMonitor, Model, ModelCheckpoint

DATA = Path(__file__).resolve().parent.parent / "examples" / "data" / "mnist"


def create_dataset(data_path, usage, batch_size=32, repeat_size=1, num_parallel_workers=1):
    mnist_ds = ds.MnistDataset(str(data_path), usage=usage)

    resize_op = vision.Resize((32, 32), interpolation=Inter.LINEAR)
    rescale_op = vision.Rescale(1.0 / 255.0, 0.0)
    rescale_nml_op = vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081)
    hwc2chw_op = vision.HWC2CHW()
    type_cast_op = transforms.TypeCast(ms.int32)

    workers = num_parallel_workers
    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label", num_parallel_workers=workers)
    mnist_ds = mnist_ds.map(operations=resize_op, input_columns="image", num_parallel_workers=workers)
    mnist_ds = mnist_ds.map(operations=rescale_op, input_columns="image", num_parallel_workers=workers)
    mnist_ds = mnist_ds.map(operations=rescale_nml_op, input_columns="image", num_parallel_workers=workers)
    mnist_ds = mnist_ds.map(operations=hwc2chw_op, input_columns="image", num_parallel_workers=workers)

    mnist_ds = mnist_ds.shuffle(buffer_size=10000)
    mnist_ds = mnist_ds.batch(batch_size, drop_remainder=True)
    return mnist_ds.repeat(repeat_size)


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def train_net(model, epoch_size, data_path, ckpoint_cb):
    ds_train = create_dataset(data_path, "train")
    model.train(epoch_size, ds_train, callbacks=[ckpoint_cb, LossMonitor(125)], dataset_sink_mode=False)


def test_net(model, data_path):
    ds_eval = create_dataset(data_path, "test")
    acc = model.eval(ds_eval, dataset_sink_mode=False)
    print(f"============== Accuracy:{acc} ==============")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CPU", choices=["CPU", "GPU", "Ascend"])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--ckpt-dir", type=Path, default=Path("checkpoints"))
    args = parser.parse_args()

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device(args.device)
    ms.set_seed(1)

    net = LeNet5()
    net_loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    net_opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    config_ck = CheckpointConfig(save_checkpoint_steps=1875, keep_checkpoint_max=10)
    ckpoint = ModelCheckpoint(prefix="checkpoint_lenet", directory=str(args.ckpt_dir), config=config_ck)
    model = Model(net, net_loss, net_opt, metrics={"Accuracy": Accuracy()})
    train_net(model, args.epochs, args.data_dir, ckpoint)
    test_net(model, args.data_dir)


if __name__ == "__main__":
    main()
