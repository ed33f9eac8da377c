"""How close the floor comes to this CPU's limit, and what a step costs as the work grows.

- `peak_gflops()`: a practical float32 peak of this machine: a large numpy matmul on all cores
  (the BLAS numpy ships), median of a few runs. Not MindSpore's peak: the bar any CPU kernel
  could reach here.
- `python -m bench.limit flops SCRIPT BATCH`: forward FLOPs of the script's network for one batch,
  counted from the shapes each nn.Conv2d / nn.Dense sees in one PyNative forward pass (forward
  hooks); forward + backward is taken as 3x forward, the usual estimate (the backward pass computes
  the input and the weight gradients, each about one forward). The network is the one the script
  builds, taken from its train cell from outside (bench/worker.py `capture`), never trained.
- `python -m bench.limit convs`: a bare nn.Conv2d of LeNet's and ResNet's sizes timed in GRAPH
  mode, to show whether MindSpore's CPU convolution or the generated code sets a step's time.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def peak_gflops(n: int = 2048, repeats: int = 5) -> dict:
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    b = np.random.default_rng(1).random((n, n), dtype=np.float32)
    a @ b  # warm-up: thread pool start, page faults
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"matmul_n": n, "gflops": 2 * n**3 / seconds / 1e9, "seconds": times}


def network_flops(script: Path, batch: int) -> dict:
    """Forward FLOPs (multiply-adds x 2) of the generated script's network for one batch."""
    import mindspore as ms
    from mindspore import nn

    from bench.worker import capture, net_with_loss

    cell, batches = capture(script, 1)
    network = net_with_loss(cell)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    counted: list[tuple[str, int]] = []

    def conv_hook(cell: nn.Conv2d, inputs: tuple, output: ms.Tensor) -> None:
        n, c_out, h, w = output.shape
        k_h, k_w = cell.kernel_size
        c_in = inputs[0].shape[1] // cell.group
        counted.append(("conv", 2 * n * c_out * h * w * c_in * k_h * k_w))

    def dense_hook(cell: nn.Dense, _inputs: tuple, output: ms.Tensor) -> None:
        counted.append(("dense", 2 * int(np.prod(output.shape[:-1])) * cell.in_channels * cell.out_channels))

    for _, cell in network.cells_and_names():
        if isinstance(cell, nn.Conv2d):
            cell.register_forward_hook(conv_hook)
        elif isinstance(cell, nn.Dense):
            cell.register_forward_hook(dense_hook)
    image, label = batches[0][:2]
    shape = (batch, *image.shape[1:])
    labels = np.zeros((batch, *label.shape[1:]), label.asnumpy().dtype)
    network(ms.Tensor(np.zeros(shape, np.float32)), ms.Tensor(labels))
    forward = sum(f for _, f in counted)
    return {
        "batch": batch,
        "input_shape": list(shape),
        "forward_flops": forward,
        "train_flops": 3 * forward,
        "layers": len(counted),
        "conv_share": sum(f for k, f in counted if k == "conv") / forward if forward else 0.0,
    }


def conv_times() -> list[dict]:
    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    rows = []
    for c_in, c_out, size, kernel in [(1, 6, 32, 5), (6, 16, 14, 5), (64, 64, 8, 3)]:
        conv = nn.Conv2d(c_in, c_out, kernel, pad_mode="valid")
        x = ms.Tensor(np.random.default_rng(0).random((32, c_in, size, size), dtype=np.float32))
        for _ in range(3):
            conv(x).asnumpy()
        times = []
        for _ in range(10):
            start = time.perf_counter()
            conv(x).asnumpy()
            times.append(time.perf_counter() - start)
        out = size - kernel + 1
        flops = 2 * 32 * c_out * out * out * c_in * kernel * kernel
        seconds = statistics.median(times)
        rows.append(
            {
                "conv": f"{c_in}->{c_out} k{kernel} {size}x{size} batch 32",
                "ms": 1000 * seconds,
                "gflops": flops / seconds / 1e9,
            }
        )
    return rows


def main() -> None:
    what = sys.argv[1]
    if what == "flops":
        print(json.dumps(network_flops(Path(sys.argv[2]), int(sys.argv[3]))))
    elif what == "convs":
        print(json.dumps(conv_times()))
    elif what == "peak":
        print(json.dumps(peak_gflops()))
    else:
        raise SystemExit(f"unknown: {what}")


if __name__ == "__main__":
    main()
