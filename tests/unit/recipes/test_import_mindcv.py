"""`mscodegen import-mindcv`: mindcv recipes (written here in mindcv's config.py format) -> mscodegen configs.

Expected values are written out by hand from mindcv 0.3.0's train.py / config.py semantics; the
converted file is read back with yaml and must pass `load_config` (schema, rules, data folders).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from PIL import Image

from mscodegen.cli import main
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both

from conftest import UNTIL_OPTIMIZER, run_both

# weight_decay_filter norm_and_bias, exactly: no decay for names containing beta, gamma or bias (mindcv's
# init_group_params), every other parameter decayed
NORM_AND_BIAS = {
    "decay_filter": "every_parameter",
    "groups": [{"params": ["*beta*", "*gamma*", "*bias*"], "weight_decay": 0.0}],
}

RESNET18_RECIPE = """\
# system
mode: 0
distribute: True
num_parallel_workers: 8
val_while_train: True

# dataset
dataset: "imagenet"
data_dir: "{data_dir}"
shuffle: True
dataset_download: False
batch_size: 32
drop_remainder: True

# augmentation
image_resize: 224
scale: [0.08, 1.0]
ratio: [0.75, 1.333]
hflip: 0.5
auto_augment: "randaug-m9-mstd0.5-inc1"
color_jitter: 0.4
re_prob: 0.25
mixup: 0.0
crop_pct: 0.875

# model
model: "resnet18"
num_classes: 1000
pretrained: False
ckpt_path: ""
keep_checkpoint_max: 30
ckpt_save_dir: "./ckpt"
epoch_size: 120
dataset_sink_mode: True
amp_level: "O2"

# loss
loss: "CE"
label_smoothing: 0.1

# lr scheduler
scheduler: "cosine_decay"
min_lr: 0.0
lr: 0.1
warmup_epochs: 5
decay_epochs: 115

# optimizer
opt: "momentum"
momentum: 0.9
weight_decay: 0.0001
weight_decay_filter: "norm_and_bias"
loss_scale: 1024
use_nesterov: False
"""

VIT_RECIPE = """\
mode: 0
distribute: True
num_parallel_workers: 8
val_while_train: True
val_interval: 2

dataset: "imagenet"
data_dir: "{data_dir}"
batch_size: 64
drop_remainder: True

image_resize: 224
hflip: 0.0
interpolation: "bilinear"
mixup: 0.8
cutmix: 1.0
color_jitter: 0.0

model: "vit_b_32_224"
drop_path_rate: 0.1
num_classes: 1000
keep_checkpoint_max: 10
epoch_size: 300
amp_level: "O2"
ema: True
ema_decay: 0.9998

loss: "CE"
label_smoothing: 0.1

scheduler: "warmup_cosine_decay"
lr: 0.0005
min_lr: 1e-6
warmup_epochs: 20
warmup_factor: 0.01
decay_epochs: 280

opt: "adamw"
weight_decay: 0.05
weight_decay_filter: "auto"

loss_scale_type: "dynamic"
loss_scale: 65536.0
drop_overflow_update: True
"""

MNIST_RECIPE = """\
mode: 1
distribute: False
seed: 7
log_interval: 5
dataset: "mnist"
data_dir: "{data_dir}"
val_while_train: True
val_split: "test"
batch_size: 16
num_parallel_workers: 2
image_resize: 32
model: "resnet18"
in_channels: 1
epoch_size: 8
dataset_sink_mode: False
opt: "sgd"
lr: 0.05
weight_decay: 0.0005
weight_decay_filter: "norm_and_bias"
scheduler: "step_decay"
warmup_epochs: 0
decay_epochs: 3
decay_rate: 0.5
"""


# IMAGENET_DEFAULT_MEAN / IMAGENET_DEFAULT_STD (mindcv/data/constants.py): 0-255 values, as mindcv's Normalize takes them
IMAGENET_NORMALIZE = {"mean": [123.675, 116.28, 103.53], "std": [58.395, 57.12, 57.375]}


def write_image_folder(root: Path, classes=("cat", "dog", "fox"), per_class: int = 2) -> None:
    rng = np.random.default_rng(0)
    for cls in classes:
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 256, size=(12, 10, 3), dtype=np.uint8)).save(
                root / cls / f"{i}.png"
            )


def write_mnist(root: Path, count: int = 32) -> None:  # two batches of the recipes' 16
    root.mkdir(parents=True)
    for prefix in ("train", "t10k"):
        header = struct.pack(">IIII", 2051, count, 28, 28)
        (root / f"{prefix}-images-idx3-ubyte").write_bytes(header + bytes(count * 28 * 28))
        (root / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, count) + bytes(count))


def imagenet_like(tmp_path: Path) -> Path:
    # 540 images: enough for one full batch of the recipes' 64 per device on 8 devices, which
    # validate now checks (an epoch of no batch trains nothing).
    data = tmp_path / "imagenet"
    write_image_folder(data / "train", per_class=180)
    write_image_folder(data / "val", per_class=90)
    return data


def run(recipe: Path, out: Path, capsys, *extra: str) -> tuple[int, list[str], str]:
    code = main(["import-mindcv", str(recipe), "-o", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.err.splitlines(), captured.out


def findings(err: list[str], kind: str) -> dict[str, str]:
    """{key: 'value (reason)'} of the stderr lines 'kind: key = value ...'."""
    out = {}
    for line in err:
        if line.startswith(f"{kind}: "):
            key, _, rest = line.removeprefix(f"{kind}: ").partition(" = ")
            out[key] = rest
    return out


def test_resnet18_recipe_on_8_devices(tmp_path: Path, capsys) -> None:
    data = imagenet_like(tmp_path)
    recipe = tmp_path / "resnet_18_ascend.yaml"
    recipe.write_text(RESNET18_RECIPE.format(data_dir=data))
    out = tmp_path / "resnet18.yaml"

    code, err, stdout = run(recipe, out, capsys, "--devices", "8")

    assert code == 0  # everything converted exactly
    assert stdout == f"wrote {out}\n"
    config = yaml.safe_load(out.read_text())
    assert config["runtime"] == {"mode": "graph", "device_target": "CPU", "seed": 42}
    assert config["network"] == {"kind": "mindcv", "name": "resnet18", "num_classes": 1000}
    # mindcv transforms_imagenet_train on an undecoded ImageFolderDataset: RandomCropDecodeResize, hflip, mindcv's own rand_augment_transform, Normalize on 0-255 pixels,
    # HWC2CHW, RandomErasing; color_jitter unused with auto_augment
    assert config["data"]["train"] == {
        "kind": "image_folder",
        "path": f"{data}/train",
        "decode": False,  # mindcv's ImageFolderDataset reads the files' bytes: the crop decodes
        "batch_size": 256,  # 32 per device x 8
        "shuffle": True,
        "drop_remainder": True,
        "num_workers": 1,  # mindcv.auto_augment and RandomErasing run in Python: one worker
        "transforms": {
            "image": [
                {
                    "RandomCropDecodeResize": {
                        "size": 224,
                        "scale": [0.08, 1.0],
                        "ratio": [0.75, 1.333],
                        "interpolation": "BILINEAR",
                    }
                },
                {"RandomHorizontalFlip": {"prob": 0.5}},
                {
                    "mindcv.auto_augment": {
                        "policy": "randaug-m9-mstd0.5-inc1",
                        "translate_const": 100,  # int(224 * 0.45)
                        # img_mean = tuple(min(255, round(x)) for x in mean), mindcv's default mean
                        "img_mean": [124, 116, 104],
                        "interpolation": "BILINEAR",
                    }
                },
                {"Normalize": IMAGENET_NORMALIZE},
                {"HWC2CHW": {}},
                {
                    "RandomErasing": {
                        "prob": 0.25,
                        "scale": [0.02, 0.33],
                        "ratio": [0.3, 3.3],
                        "value": 0,
                        "max_attempts": 10,
                    }
                },
            ],
            "label": [{"TypeCast": {"data_type": "int32"}}],
        },
    }
    # transforms_imagenet_eval: Decode, Resize(floor(224 / 0.875) = 256), CenterCrop(224)
    assert config["data"]["eval"]["decode"] is False
    assert config["data"]["eval"]["transforms"] == {
        "image": [
            {"Decode": {}},
            {"Resize": {"size": 256, "interpolation": "BILINEAR"}},
            {"CenterCrop": {"size": 224}},
            {"Normalize": IMAGENET_NORMALIZE},
            {"HWC2CHW": {}},
        ],
        "label": [{"TypeCast": {"data_type": "int32"}}],
    }
    assert config["data"]["eval"]["num_workers"] == 8
    assert config["data"]["eval"]["path"] == f"{data}/val"
    assert config["data"]["eval"]["batch_size"] == 32
    assert config["data"]["eval"]["drop_remainder"] is False
    assert config["loss"] == {
        "name": "CrossEntropyLoss",
        "kwargs": {"label_smoothing": 0.1, "reduction": "mean"},
    }
    assert config["optimizer"] == {
        "name": "momentum",
        "lr": 0.1,
        "momentum": 0.9,
        "nesterov": False,
        "weight_decay": 0.0001,
        **NORM_AND_BIAS,
    }
    assert config["lr_schedule"] == {
        "kind": "warmup_cosine",
        "warmup_epochs": 5,
        "warmup_start_lr": 0.0,
        "min_lr": 0.0,
    }
    assert config["train"] == {
        "epochs": 120,
        "dataset_sink_mode": True,
        "log_every_steps": 100,
        "output_dir": "ckpt",
    }
    assert config["eval"] == {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "top_k", "k": 5}]}
    assert config["callbacks"] == {"checkpoint": {"every_epochs": 1, "keep_max": 30, "prefix": "resnet18"}}
    assert config["amp"] == {"level": "O2"}
    assert config["loss_scale"] == {"kind": "fixed", "value": 1024.0, "drop_overflow_update": False}
    assert config["parallel"] == {"mode": "data_parallel", "workers": 8}
    assert "grad" not in config

    assert findings(err, "not converted") == findings(err, "approximated") == {}
    assert (
        "note: data.train.num_workers is 1, not num_parallel_workers 8: mindcv.auto_augment, RandomErasing "
        "run(s) in Python" in err[-1]
    )
    assert "not converted: mixup" not in "\n".join(err)  # 0.0: no mixup, as in mscodegen
    assert "color_jitter" not in "\n".join(err)  # mindcv ignores it when auto_augment is set

    text = out.read_text()
    assert text.startswith(f"# Converted from the mindcv recipe {recipe.as_posix()} by:\n")
    assert f"#   mscodegen import-mindcv {recipe.as_posix()} -o {out.as_posix()} --devices 8\n" in text
    assert "global batch over --devices 8 (256)" in text
    assert "auto_augment = " not in text  # converted exactly: no note
    assert "        - RandomHorizontalFlip: {prob: 0.5}  # hflip\n" in text
    assert "# Ignored (mindcv does not use them with the values above):\n" in text
    assert "#   color_jitter = 0.4 (mindcv ignores it when auto_augment is set)\n" in text
    assert "  epochs: 120  # epoch_size\n" in text
    assert "    batch_size: 256  # batch_size 32 per device x 8 devices\n" in text
    assert "parallel:  # distribute: true, on --devices 8" in text
    lines = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert [line.split(":")[0] for line in lines] == [
        "runtime",
        "network",
        "data",
        "loss",
        "optimizer",
        "lr_schedule",
        "train",
        "eval",
        "callbacks",
        "amp",
        "loss_scale",
        "parallel",
    ]
    assert load_config(out).config.data.train.batch_size == 256


def test_vit_recipe_adamw_ema_dynamic_loss_scale(tmp_path: Path, capsys) -> None:
    data = imagenet_like(tmp_path)
    recipe = tmp_path / "vit_b32_224.yaml"
    recipe.write_text(VIT_RECIPE.format(data_dir=data))
    out = tmp_path / "vit.yaml"

    code, err, _ = run(recipe, out, capsys, "--devices", "8")

    assert code == 0  # every argument converts exactly
    config = yaml.safe_load(out.read_text())
    assert config["network"] == {
        "kind": "mindcv",
        "name": "vit_b_32_224",
        "num_classes": 1000,
        "kwargs": {"drop_path_rate": 0.1},
    }
    assert config["data"]["train"]["batch_size"] == 512  # 64 x 8
    assert config["optimizer"] == {
        "name": "adamw",
        "lr": 0.0005,
        "beta1": 0.9,
        "beta2": 0.999,
        "eps": 1e-8,  # mindcv's AdamW default; config.py's eps is not passed to it
        "bias_correction": True,  # mindcv's AdamW, which nn.AdamWeightDecay is not
        "weight_decay": 0.05,
        "decay_filter": "mindspore_default",  # weight_decay_filter auto: MindSpore's own filter
    }
    assert config["lr_schedule"] == {
        "kind": "warmup_cosine",
        "warmup_epochs": 20,
        "warmup_start_lr": pytest.approx(0.000005),  # lr x warmup_factor = 0.0005 x 0.01
        "min_lr": 1e-6,  # written `1e-6`, which PyYAML reads as a string
    }
    assert config["eval"]["every_epochs"] == 2
    assert config["amp"] == {"level": "O2"}
    assert config["loss_scale"] == {"kind": "dynamic", "init": 65536.0, "factor": 2, "window": 2000}
    assert config["train"]["epochs"] == 300

    # create_loader: Mixup(mixup_alpha=mixup, cutmix_alpha=cutmix, cutmix_minmax=None, prob=cutmix_prob,
    # switch_prob=0.5, label_smoothing=0.0, num_classes=num_classes); the loss smooths
    assert config["data"]["train"]["batch_transforms"] == [
        {
            "mindcv.Mixup": {
                "mixup_alpha": 0.8,
                "cutmix_alpha": 1.0,
                "prob": 1.0,  # cutmix_prob, mindcv's default
                "switch_prob": 0.5,
                "label_smoothing": 0.0,
                "num_classes": 1000,
            }
        }
    ]
    assert config["loss"]["kwargs"]["label_smoothing"] == 0.1
    assert config["data"]["train"]["num_workers"] == 1  # mindcv.Mixup runs in Python
    # hflip 0.0 and color_jitter 0.0: no flip, no RandomColorAdjust
    assert [next(iter(e)) for e in config["data"]["train"]["transforms"]["image"]] == [
        "RandomCropDecodeResize",
        "Normalize",
        "HWC2CHW",
    ]
    # the dynamic loss scale skips overflowing steps; the ema skips them too, as mindcv's TrainStep does
    assert config["ema"] == {"decay": 0.9998, "warmup_steps": 2000}
    assert config["train"]["dataset_sink_mode"] is True  # the recipe's; the train cell updates the averages
    assert findings(err, "not converted") == {}
    assert findings(err, "approximated") == {}  # opt adamw converts exactly (mindcv's AdamW)
    # hflip 0.0 and color_jitter 0.0 are what mscodegen does anyway: not listed
    assert not any(key in line for line in err for key in ("hflip", "color_jitter", "interpolation"))
    load_config(out)


def test_recipe_that_maps_completely_exits_0(tmp_path: Path, capsys) -> None:
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "lenet_mnist.yaml"
    recipe.write_text(MNIST_RECIPE.format(data_dir=tmp_path / "mnist"))
    out = tmp_path / "mnist_run.yaml"

    code, err, _ = run(recipe, out, capsys)

    assert (code, err) == (0, [])
    config = yaml.safe_load(out.read_text())
    assert config["runtime"] == {"mode": "pynative", "device_target": "CPU", "seed": 7}
    assert config["network"] == {
        "kind": "mindcv",
        "name": "resnet18",
        "num_classes": 10,
        "kwargs": {"in_channels": 1},
    }
    mnist = {"resize": [32, 32], "normalize": {"mean": [0.1307], "std": [0.3081]}}
    assert config["data"]["train"] == {
        "kind": "mnist",
        "path": f"{tmp_path}/mnist",
        "usage": "train",
        "batch_size": 16,
        "shuffle": True,
        "drop_remainder": True,
        "num_workers": 2,
        "transforms": mnist,
    }
    assert config["data"]["eval"]["usage"] == "test"
    assert config["data"]["eval"]["transforms"] == mnist
    assert config["eval"]["metrics"] == [{"name": "accuracy"}, {"name": "top_k", "k": 5}]
    assert config["optimizer"] == {
        "name": "sgd",
        "lr": 0.05,
        "momentum": 0.9,  # config.py's default momentum goes to nn.SGD too
        "nesterov": False,
        "weight_decay": 0.0005,
        **NORM_AND_BIAS,
    }
    # step_decay every 3 epochs over 8: lr x 0.5 from epoch 3 and from epoch 6 (0-based)
    assert config["lr_schedule"] == {"kind": "piecewise", "milestones": [3, 6], "gamma": 0.5}
    assert config["train"] == {
        "epochs": 8,
        "dataset_sink_mode": False,
        "log_every_steps": 5,
        "output_dir": "ckpt",
    }
    assert config["loss_scale"] == {"kind": "none"}
    assert "parallel" not in config
    assert "converted for one device (--devices 1)" in out.read_text()
    load_config(out)


def test_omitted_arguments_take_mindcv_defaults(tmp_path: Path, capsys) -> None:
    data = imagenet_like(tmp_path)
    recipe = tmp_path / "minimal.yaml"
    recipe.write_text(f'model: "resnet18"\ndata_dir: "{data}"\n')
    out = tmp_path / "minimal_run.yaml"

    code, err, _ = run(recipe, out, capsys)

    assert code == 0, err
    config = yaml.safe_load(out.read_text())
    # config.py: opt adam, lr 0.001, weight_decay 1e-6, scheduler cosine_decay, warmup 3, epochs 90,
    # batch 128; num_classes None -> the class folders of data_dir/train (3 here)
    assert config["optimizer"]["name"] == "adam"
    assert config["optimizer"]["lr"] == 0.001
    assert config["optimizer"]["weight_decay"] == 1e-6
    assert config["lr_schedule"] == {
        "kind": "warmup_cosine",
        "warmup_epochs": 3,
        "warmup_start_lr": 0.0,
        "min_lr": 1e-6,
        "decay_epochs": 100,  # a cosine of 100 epochs, cut after the 87 that follow the warm-up
    }
    assert config["train"]["epochs"] == 90
    assert config["data"]["train"]["batch_size"] == 128
    assert config["network"]["num_classes"] == 3
    assert "eval" not in config and "eval" not in config["data"]
    assert findings(err, "not converted") == {}
    # config.py's hflip 0.5 and color_jitter 0.4 -> transforms_imagenet_train's flip and RandomColorAdjust(0.4, 0.4, 0.4)
    assert config["data"]["train"]["transforms"]["image"][1:3] == [
        {"RandomHorizontalFlip": {"prob": 0.5}},
        {"RandomColorAdjust": {"brightness": 0.4, "contrast": 0.4, "saturation": 0.4}},
    ]
    assert findings(err, "approximated") == {}
    # weight_decay_filter disable (mindcv's default): one group, every parameter decayed -- exact
    assert config["optimizer"]["decay_filter"] == "every_parameter"
    assert "runtime:\n  mode: graph  # mode 0 (mindcv default)\n" in out.read_text()
    load_config(out)


def test_unknown_and_legacy_keys(tmp_path: Path, capsys) -> None:
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        MNIST_RECIPE.format(data_dir=tmp_path / "mnist").replace('weight_decay_filter: "norm_and_bias"', "")
        + "filter_bias_and_bn: True\nmy_own_flag: 3\n"
    )
    code, err, _ = run(recipe, tmp_path / "out.yaml", capsys)
    assert code == 1
    assert err == ["not converted: my_own_flag = 3 (not an argument of mindcv 0.3.0's config.py)"]
    optimizer = yaml.safe_load((tmp_path / "out.yaml").read_text())["optimizer"]
    assert {key: optimizer[key] for key in NORM_AND_BIAS} == NORM_AND_BIAS


def test_relative_data_dir_is_rewritten_relative_to_the_output(tmp_path: Path, capsys, monkeypatch) -> None:
    imagenet_like(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("recipe.yaml").write_text(RESNET18_RECIPE.format(data_dir="./imagenet"))
    Path("configs").mkdir()
    code, _, _ = run(Path("recipe.yaml"), Path("configs/r18.yaml"), capsys, "--devices", "8")
    assert code == 0
    config = yaml.safe_load(Path("configs/r18.yaml").read_text())
    assert config["data"]["train"]["path"] == "../imagenet/train"
    assert config["data"]["eval"]["path"] == "../imagenet/val"
    load_config(Path("configs/r18.yaml"))


def test_distribute_and_devices_disagree(tmp_path: Path, capsys) -> None:
    data = imagenet_like(tmp_path)
    recipe = tmp_path / "r.yaml"
    recipe.write_text(RESNET18_RECIPE.format(data_dir=data))
    run(recipe, tmp_path / "one.yaml", capsys)  # distribute: True, --devices 1
    one = yaml.safe_load((tmp_path / "one.yaml").read_text())
    assert one["data"]["train"]["batch_size"] == 32
    assert one["parallel"] == {"mode": "stand_alone"}

    recipe.write_text(RESNET18_RECIPE.format(data_dir=data).replace("distribute: True", "distribute: False"))
    _, err, _ = run(recipe, tmp_path / "single.yaml", capsys, "--devices", "4")
    single = yaml.safe_load((tmp_path / "single.yaml").read_text())
    assert single["data"]["train"]["batch_size"] == 32
    assert "parallel" not in single
    assert "note: --devices 4 ignored: distribute is false, mindcv trains on one device" in err


@pytest.mark.parametrize("stair", [False, True])
def test_multi_step_milestones_after_a_warm_up(tmp_path: Path, capsys, stair: bool) -> None:
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        MNIST_RECIPE.format(data_dir=tmp_path / "mnist")
        .replace(
            'scheduler: "step_decay"', 'scheduler: "multi_step_decay"\nmulti_step_decay_milestones: [4, 2, 9]'
        )
        .replace("warmup_epochs: 0", "warmup_epochs: 1\nwarmup_factor: 0.1")
        + ("lr_epoch_stair: True\n" if stair else "")
    )
    code, err, _ = run(recipe, tmp_path / "out.yaml", capsys)
    # milestones count from the end of the warm-up (1 epoch): 2 -> 3, 4 -> 5; 9 is past epoch_size;
    # the warm-up rises from lr 0.05 x warmup_factor 0.1
    schedule = yaml.safe_load((tmp_path / "out.yaml").read_text())["lr_schedule"]
    assert schedule == {
        "kind": "piecewise",
        "milestones": [3, 5],
        "gamma": 0.5,
        "warmup_epochs": 1,
        "warmup_start_lr": 0.05 * 0.1,
    }
    # with lr_epoch_stair, mindcv's warm-up (linear_lr) rises once per epoch, mscodegen's every step
    assert code == (1 if stair else 0)
    assert set(findings(err, "not converted")) == ({"lr_epoch_stair"} if stair else set())
    load_config(tmp_path / "out.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot read"),
        ("lr: [0.1\n", "recipe.yaml: line 2, column 1: not valid YAML: expected ',' or ']', but got the end"),
        ("- lr: 0.1\n", "a mindcv recipe is a mapping"),
        ("lr: fast\n", "lr: expected a number, got 'fast'"),
        ("distribute: maybe\n", "distribute: expected true or false"),
    ],
)
def test_unreadable_recipe_exits_2_and_writes_nothing(tmp_path: Path, capsys, text, message) -> None:
    recipe = tmp_path / "recipe.yaml"
    if text is not None:
        recipe.write_text(text)
    code, err, _ = run(recipe, tmp_path / "out.yaml", capsys)
    assert code == 2
    assert message in "\n".join(err)
    assert not (tmp_path / "out.yaml").exists()


def test_help_has_examples(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["import-mindcv", "--help"])
    assert "mscodegen import-mindcv configs/resnet/resnet_18_ascend.yaml -o resnet18.yaml --devices 8" in (
        capsys.readouterr().out
    )


def test_converter_imports_neither_mindspore_nor_mindcv() -> None:
    code = "import sys, mscodegen.recipes.mindcv; print(any(m.split('.')[0] in ('mindspore', 'mindcv') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_unwritable_output_exits_2(tmp_path: Path, capsys) -> None:
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(MNIST_RECIPE.format(data_dir=tmp_path / "mnist"))
    code, err, _ = run(recipe, tmp_path / "missing" / "out.yaml", capsys)
    assert code == 2
    assert err[0].startswith(f"error: cannot write {tmp_path / 'missing' / 'out.yaml'}")


@pytest.mark.slow
def test_converted_recipe_trains_in_both_variants(tmp_path: Path, capsys) -> None:
    """The converted values (mindcv kwargs, CrossEntropyLoss kwargs, adamw as mindcv's AdamW, cosine) run in MindSpore."""
    rng = np.random.default_rng(3)
    root = tmp_path / "mnist"
    root.mkdir()
    for prefix in ("train", "t10k"):
        images = rng.integers(0, 256, size=(8, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=8, dtype=np.uint8)
        (root / f"{prefix}-images-idx3-ubyte").write_bytes(
            struct.pack(">IIII", 2051, 8, 28, 28) + images.tobytes()
        )
        (root / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, 8) + labels.tobytes())
    recipe = tmp_path / "small.yaml"
    recipe.write_text(
        f'mode: 1\ndataset: "mnist"\ndata_dir: "{root}"\nbatch_size: 4\nnum_parallel_workers: 1\n'
        'image_resize: 32\nmodel: "resnet18"\nin_channels: 1\nepoch_size: 2\n'
        'dataset_sink_mode: False\nopt: "adamw"\nweight_decay: 0.05\nweight_decay_filter: "norm_and_bias"\n'
        'scheduler: "cosine_decay"\nwarmup_epochs: 0\ndecay_epochs: 2\nlabel_smoothing: 0.1\nshuffle: False\n'
    )
    out = tmp_path / "small_run.yaml"
    code, err, _ = run(recipe, out, capsys)
    assert code == 0 and not findings(err, "approximated")  # opt adamw: mindcv's AdamW, exactly
    model, native = run_both(out, tmp_path / "runs", steps=2)
    assert len(model.steps) == len(native.steps) == 2


@pytest.mark.parametrize(
    ("extra", "expected", "fragment"),
    [
        (
            'opt: "adan"',
            {"not converted": {"opt"}},
            {
                "optimizer": {
                    "name": "momentum",
                    "lr": 0.05,
                    "weight_decay": 0.0005,
                    **NORM_AND_BIAS,
                }
            },
        ),
        (
            'scheduler: "cyclic"',
            {"not converted": {"scheduler"}},
            {"lr_schedule": {"kind": "constant"}},
        ),
        (
            'scheduler: "exponential_decay"\nlr_epoch_stair: True',
            {},
            {"lr_schedule": {"kind": "exponential", "gamma": 0.5, "epoch_stair": True}},
        ),
        (
            'scheduler: "polynomial_decay"\ndecay_rate: 2.0\nwarmup_epochs: 2\nwarmup_factor: 0.5',
            {},
            {
                "lr_schedule": {
                    "kind": "polynomial",
                    "power": 2.0,
                    "end_lr": 0.0,
                    "warmup_epochs": 2,
                    "warmup_start_lr": 0.025,
                }
            },
        ),
        (
            'scheduler: "one_cycle"\nlr: 0.1\nmin_lr: 0.0001',
            {},
            {
                "lr_schedule": {
                    "kind": "one_cycle",
                    "pct_start": 0.3,
                    "anneal": "cos",
                    "div_factor": 25.0,
                    "final_div_factor": 0.1 / 25.0 / 0.0001,
                }
            },
        ),
        ('loss: "BCE"', {"not converted": {"loss"}}, {"loss": None}),
        (
            "clip_grad: True\nclip_value: 5.0\ngradient_accumulation_steps: 2",
            {"approximated": {"gradient_accumulation_steps"}},
            {"grad": {"clip": {"kind": "global_norm", "max_norm": 5.0}, "accumulation_steps": 2}},
        ),
        (
            'pretrained: True\nckpt_path: "resnet18-10_100.ckpt"',
            {"not converted": {"pretrained", "ckpt_path"}},
            {},
        ),
        ("lr_epoch_stair: True", {}, {}),  # step_decay changes the LR per epoch anyway
        (
            'scheduler: "cosine_decay"\ndecay_epochs: 8\nlr_epoch_stair: True',
            {},
            {"lr_schedule": {"kind": "cosine", "min_lr": 1e-6, "epoch_stair": True}},
        ),
        # auto: Model without a loss_scale_manager; at amp_level O0 (the recipe's default) MindSpore scales nothing
        ('loss_scale_type: "auto"\nloss_scale: 128.0', {}, {"loss_scale": {"kind": "none"}}),
        ("layer_decay: 0.75", {"not converted": {"layer_decay"}}, {}),
        (
            'opt: "lion"\nlr: 0.0002\nweight_decay: 0.1',
            {},
            {
                "optimizer": {
                    "name": "lion",
                    "lr": 0.0002,
                    "beta1": 0.9,
                    "beta2": 0.99,
                    "weight_decay": 0.1,
                    **NORM_AND_BIAS,  # the recipe's weight_decay_filter
                }
            },
        ),
        (
            "loss_scale: 128.0\ndrop_overflow_update: True",
            {},
            {"loss_scale": {"kind": "fixed", "value": 128.0, "drop_overflow_update": True}},
        ),
    ],
)
def test_each_unconvertible_choice_is_reported_and_the_config_still_validates(
    tmp_path: Path, capsys, extra: str, expected: dict, fragment: dict
) -> None:
    # `extra` is appended to the MNIST recipe: a repeated key takes the later value (yaml.safe_load, as mindcv)
    write_mnist(tmp_path / "mnist")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(MNIST_RECIPE.format(data_dir=tmp_path / "mnist") + extra + "\n")
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)
    assert code == (1 if expected else 0)
    for kind in ("not converted", "approximated"):
        assert set(findings(err, kind)) == expected.get(kind, set())
    config = yaml.safe_load(out.read_text())
    for key, value in fragment.items():
        assert config.get(key) == value
    load_config(out)


def test_cifar10_training_augmentation_is_converted(tmp_path: Path, capsys) -> None:
    (tmp_path / "cifar").mkdir()
    (tmp_path / "cifar" / "data_batch_1.bin").write_bytes(bytes(3073 * 32))  # 32 records: two batches
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        MNIST_RECIPE.format(data_dir=tmp_path / "cifar")
        .replace('dataset: "mnist"', 'dataset: "cifar10"')
        .replace("in_channels: 1", "in_channels: 3")
        + "hflip: 0.5\n"  # not used by mindcv's cifar10 transforms: ignored, not reported
    )
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)
    assert (code, err) == (0, [])
    config = yaml.safe_load(out.read_text())
    # mindcv transforms_cifar: RandomCrop((32, 32), (4, 4, 4, 4)) and RandomHorizontalFlip(0.5) for training,
    # then Resize(image_resize), Rescale(1/255, 0), Normalize(its fixed mean/std), HWC2CHW
    tail = [
        {"Resize": {"size": [32, 32]}},
        {"Rescale": {"rescale": 1 / 255, "shift": 0.0}},
        {"Normalize": {"mean": [0.4914, 0.4822, 0.4465], "std": [0.2023, 0.1994, 0.2010]}},
        {"HWC2CHW": {}},
    ]
    labels = [{"TypeCast": {"data_type": "int32"}}]  # create_loader's target_transform
    assert config["data"]["train"]["transforms"] == {
        "image": [
            {"RandomCrop": {"size": [32, 32], "padding": [4, 4, 4, 4]}},
            {"RandomHorizontalFlip": {"prob": 0.5}},
            *tail,
        ],
        "label": labels,
    }
    assert config["data"]["eval"]["transforms"] == {"image": tail, "label": labels}
    assert config["network"]["num_classes"] == 10
    assert "#   hflip = 0.5 (mindcv's cifar10 transforms do not use it)\n" in out.read_text()
    load_config(out)


AUGMENT_RECIPE = """\
dataset: "imagenet"
data_dir: "{data_dir}"
val_while_train: True
num_classes: 3
batch_size: 4
num_parallel_workers: 2
model: "resnet18"
epoch_size: 2
warmup_epochs: 0
decay_epochs: 2
image_resize: 32
scale: [0.5, 1.0]
ratio: [0.8, 1.25]
interpolation: "bicubic"
hflip: 0.3
vflip: 0.2
color_jitter: [0.1, 0.2, 0.3, 0.05]
mean: [127.5, 127.5, 127.5]
std: [64.0, 64.0, 64.0]
re_prob: 0.5
re_scale: [0.05, 0.2]
re_ratio: [0.5, 2.0]
re_value: 0
re_max_attempts: 5
crop_pct: 0.9
mixup: 0.2
cutmix: 1.0
cutmix_prob: 0.5
"""

# mindcv transforms_imagenet_train with AUGMENT_RECIPE's arguments, op for op:
# RandomCropDecodeResize(image_resize, scale, ratio, Inter.BICUBIC) on the files' bytes (decode: false),
# RandomHorizontalFlip(prob=hflip), RandomVerticalFlip(prob=vflip), RandomColorAdjust(*color_jitter),
# Normalize(mean, std), HWC2CHW(), RandomErasing(re_prob, re_scale, re_ratio, re_value, re_max_attempts)
AUGMENT_TRAIN = [
    {
        "RandomCropDecodeResize": {
            "size": 32,
            "scale": [0.5, 1.0],
            "ratio": [0.8, 1.25],
            "interpolation": "BICUBIC",
        }
    },
    {"RandomHorizontalFlip": {"prob": 0.3}},
    {"RandomVerticalFlip": {"prob": 0.2}},
    {"RandomColorAdjust": {"brightness": 0.1, "contrast": 0.2, "saturation": 0.3, "hue": 0.05}},
    {"Normalize": {"mean": [127.5, 127.5, 127.5], "std": [64.0, 64.0, 64.0]}},
    {"HWC2CHW": {}},
    {
        "RandomErasing": {
            "prob": 0.5,
            "scale": [0.05, 0.2],
            "ratio": [0.5, 2.0],
            "value": 0,
            "max_attempts": 5,
        }
    },
]
# transforms_imagenet_eval: Decode(), Resize(floor(32 / 0.9) = 35, Inter.BICUBIC),
# CenterCrop(32), Normalize(mean, std), HWC2CHW()
AUGMENT_EVAL = [
    {"Decode": {}},
    {"Resize": {"size": 35, "interpolation": "BICUBIC"}},
    {"CenterCrop": {"size": 32}},
    {"Normalize": {"mean": [127.5, 127.5, 127.5], "std": [64.0, 64.0, 64.0]}},
    {"HWC2CHW": {}},
]


def augment_recipe(tmp_path: Path, extra: str = "") -> Path:
    data = tmp_path / "folders"
    write_image_folder(data / "train", per_class=4)
    write_image_folder(data / "val", per_class=2)
    recipe = tmp_path / "augment.yaml"
    recipe.write_text(AUGMENT_RECIPE.format(data_dir=data) + extra)
    return recipe


def test_imagenet_augmentation_is_converted_op_for_op(tmp_path: Path, capsys) -> None:
    recipe = augment_recipe(tmp_path)
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)

    config = yaml.safe_load(out.read_text())
    train, evaluate = config["data"]["train"], config["data"]["eval"]
    assert train["transforms"] == {"image": AUGMENT_TRAIN, "label": [{"TypeCast": {"data_type": "int32"}}]}
    assert evaluate["transforms"] == {"image": AUGMENT_EVAL, "label": [{"TypeCast": {"data_type": "int32"}}]}
    # create_loader (loader.py): mixup + cutmix > 0 and batch_size > 1 -> Mixup(mixup_alpha=mixup,
    # cutmix_alpha=cutmix, cutmix_minmax=None, prob=cutmix_prob, switch_prob=0.5, label_smoothing=0.0,
    # num_classes=num_classes)
    assert train["batch_transforms"] == [
        {
            "mindcv.Mixup": {
                "mixup_alpha": 0.2,
                "cutmix_alpha": 1.0,
                "prob": 0.5,
                "switch_prob": 0.5,
                "label_smoothing": 0.0,
                "num_classes": 3,
            }
        }
    ]
    assert (train["num_workers"], evaluate["num_workers"]) == (1, 2)  # RandomErasing, Mixup: Python ops
    assert err == [
        "note: data.train.num_workers is 1, not num_parallel_workers 2: RandomErasing, mindcv.Mixup run(s) "
        "in Python, which mscodegen runs reproducibly with one worker only"
    ]
    assert code == 0  # everything converted exactly
    text = out.read_text()
    assert "        - RandomVerticalFlip: {prob: 0.2}  # vflip\n" in text
    assert "        - CenterCrop: {size: 32}  # image_resize\n" in text
    assert (
        "    num_workers: 1  # num_parallel_workers 2: 1 for RandomErasing, mindcv.Mixup (Python ops)\n"
        in text
    )
    load_config(out)


def mindcv_augment(policy: str) -> dict[str, Any]:
    # transforms_imagenet_train's hparams for image_resize 32 and mean 127.5:
    # translate_const int(32 * 0.45), img_mean tuple(min(255, round(x)) for x in mean), the interpolation
    return {
        "mindcv.auto_augment": {
            "policy": policy,
            "translate_const": 14,
            "img_mean": [128, 128, 128],
            "interpolation": "BICUBIC",
        }
    }


@pytest.mark.parametrize(
    "auto_augment",
    [
        "randaug-m9-mstd0.5-inc1",
        "randaug-m12-n3-w0-mmax12",
        "autoaug-mstd0.5",
        "autoaugr",
        "3a",
        "trivialaugwide-m20",
    ],
)
def test_auto_augment_policies_are_mindcvs_own(tmp_path: Path, capsys, auto_augment) -> None:
    recipe = augment_recipe(tmp_path, f'auto_augment: "{auto_augment}"\n')
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)
    assert code == 0
    assert findings(err, "approximated") == findings(err, "not converted") == {}
    image = yaml.safe_load(out.read_text())["data"]["train"]["transforms"]["image"]
    # the flips, then the policy in color_jitter's place (transforms_imagenet_train ignores color_jitter)
    assert image[:3] == AUGMENT_TRAIN[:3]
    assert image[3:] == [mindcv_augment(auto_augment)] + AUGMENT_TRAIN[4:]
    # with mixup: RandAugment and TrivialAugmentWide draw from numpy's generator as Mixup does, autoaug does not
    shared = "draw from numpy's global generator: mindcv's train.py runs them in two threads"
    assert any(shared in line for line in err) is auto_augment.startswith(("randaug", "trivialaugwide"))
    assert (
        "#   color_jitter = [0.1, 0.2, 0.3, 0.05] (mindcv ignores it when auto_augment is set)"
        in out.read_text()
    )
    load_config(out)


@pytest.mark.parametrize(
    ("auto_augment", "reason"),
    [
        ("augmix-m5-w4-d2", "mscodegen does not call mindcv's AugMix"),
        ("randaug-x5", "randaug takes no section 'x'"),
        ("randaug-w1", "one set of op weights, w0"),
        ("autoaug-m9", "autoaug takes no section 'm'"),
        ("cutout", "'cutout' names no mindcv policy"),
    ],
)
def test_auto_augment_that_mindcv_cannot_build_is_not_converted(
    tmp_path: Path, capsys, auto_augment, reason
) -> None:
    recipe = augment_recipe(tmp_path, f'auto_augment: "{auto_augment}"\n')
    out = tmp_path / "out.yaml"
    code, err, _ = run(recipe, out, capsys)
    assert code == 1
    image = yaml.safe_load(out.read_text())["data"]["train"]["transforms"]["image"]
    assert image[3:] == AUGMENT_TRAIN[4:]
    found = findings(err, "not converted")
    assert set(found) == {"auto_augment"}
    assert reason in found["auto_augment"]
    assert findings(err, "approximated") == {}
    load_config(out)


def test_auto_augment_fill_of_unequal_channels(tmp_path: Path, capsys) -> None:
    recipe = augment_recipe(tmp_path, 'auto_augment: "randaug-m9"\nmean: [123.675, 116.28, 103.53]\n')
    out = tmp_path / "out.yaml"
    run(recipe, out, capsys)
    image = yaml.safe_load(out.read_text())["data"]["train"]["transforms"]["image"]
    # transforms_imagenet_train: img_mean = tuple(min(255, round(x)) for x in mean)
    assert image[3]["mindcv.auto_augment"]["img_mean"] == [124, 116, 104]
    load_config(out)


def test_mixup_that_mscodegen_cannot_run_is_reported(tmp_path: Path, capsys) -> None:
    recipe = augment_recipe(tmp_path, "batch_size: 3\n")
    out = tmp_path / "out.yaml"
    _, err, _ = run(recipe, out, capsys)
    not_converted = findings(err, "not converted")
    assert set(not_converted) == {"mixup", "cutmix", "cutmix_prob"}
    assert "needs an even batch (it asserts so), and batch_size is 3" in not_converted["mixup"]
    assert "batch_transforms" not in yaml.safe_load(out.read_text())["data"]["train"]


def _ops(entries: list[dict]) -> list:
    """The converted entries as the generated script builds them (mscodegen's own rendering)."""
    import mindspore as ms
    from mindspore.dataset import transforms, vision

    from mscodegen.catalog import pipeline
    from mscodegen.catalog.literals import literal

    return [
        eval(literal(pipeline.render(e)), {"vision": vision, "transforms": transforms, "ms": ms})
        for e in entries
    ]


def _apply(column: list[np.ndarray], ops: list, seed: int) -> list[np.ndarray]:
    import mindspore.dataset as ds

    ds.config.set_seed(seed)  # seeds the C++ ops, and Python's random for RandomErasing
    dataset = ds.NumpySlicesDataset({"image": column}, shuffle=False, num_parallel_workers=1)
    dataset = dataset.map(ops, input_columns="image", num_parallel_workers=1)
    return [row["image"] for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True)]


@pytest.mark.slow
def test_converted_pipelines_compute_what_mindcv_create_transforms_does(tmp_path: Path, capsys) -> None:
    """The independent check: mindcv's own create_transforms against the converted pipelines, both on the
    encoded images (mindcv's loader and the converted decode: false sources read the files' bytes)."""
    import io

    from mindcv.data import create_transforms

    recipe = augment_recipe(tmp_path)
    out = tmp_path / "out.yaml"
    run(recipe, out, capsys)
    config = yaml.safe_load(out.read_text())
    args = yaml.safe_load(recipe.read_text())
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, size=(40 + 7 * i, 50 - 3 * i, 3), dtype=np.uint8) for i in range(4)]
    encoded = []
    for image in images:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        encoded.append(np.frombuffer(buffer.getvalue(), dtype=np.uint8))
    common = {key: args[key] for key in ("image_resize", "interpolation", "mean", "std")}

    mindcv_eval = create_transforms("imagenet", is_training=False, crop_pct=args["crop_pct"], **common)
    expected = _apply(encoded, mindcv_eval, seed=0)
    assert config["data"]["eval"]["decode"] is config["data"]["train"]["decode"] is False
    got = _apply(encoded, _ops(config["data"]["eval"]["transforms"]["image"]), seed=0)
    assert all(e.shape == (3, 32, 32) and e.dtype == np.float32 for e in expected)
    assert all(np.array_equal(e, g) for e, g in zip(expected, got, strict=True))

    train_keys = ("scale", "ratio", "hflip", "vflip", "color_jitter", "re_prob", "re_scale", "re_ratio")
    train_args = {key: args[key] for key in (*train_keys, "re_value", "re_max_attempts")}
    train_args["scale"], train_args["ratio"] = tuple(args["scale"]), tuple(args["ratio"])
    mindcv_train = create_transforms("imagenet", is_training=True, **common, **train_args)
    for seed in (0, 1, 2):
        expected = _apply(encoded, mindcv_train, seed=seed)
        got = _apply(encoded, _ops(config["data"]["train"]["transforms"]["image"]), seed=seed)
        assert [(e.shape, e.dtype) for e in expected] == [(g.shape, g.dtype) for g in got]
        assert all(np.array_equal(e, g) for e, g in zip(expected, got, strict=True))


def test_ema_is_converted_with_mindcvs_warm_up_and_sink_mode(tmp_path: Path, capsys) -> None:
    data = imagenet_like(tmp_path)
    recipe = tmp_path / "ema.yaml"
    recipe.write_text(
        f"dataset: imagenet\ndata_dir: {data}\nmodel: resnet18\nnum_classes: 10\nema: True\nema_decay: 0.999\n"
    )
    out = tmp_path / "ema_out.yaml"
    _, err, _ = run(recipe, out, capsys)
    config = yaml.safe_load(out.read_text())
    # mindcv/utils/train_step.py TrainStep.ema_update: ema_decay * (1 - exp(-updates / 2000))
    assert config["ema"] == {"decay": 0.999, "warmup_steps": 2000}
    # config.py's dataset_sink_mode defaults to True: kept, the train cell updates the averages
    assert config["train"]["dataset_sink_mode"] is True
    assert not [line for line in err if "ema" in line or "sink" in line]
    load_config(out)


MINDCV_DECAYED = """
import json, sys
from mindcv.models import create_model
from mindcv.optim.optim_factory import init_group_params

model = create_model(sys.argv[1], num_classes=1000, drop_path_rate=0.1)
groups = init_group_params(model.trainable_params(), 0.05, "norm_and_bias", model.no_weight_decay())
print(json.dumps([p.name for p in groups[0]["params"]]))
"""
DECAY_PROBE = (
    UNTIL_OPTIMIZER
    + """
decayed = [p.name for p, flag in zip(optimizer.parameters, optimizer.decay_flags) if flag]
print(json.dumps(decayed))
"""
)


@pytest.mark.slow
def test_vit_norm_and_bias_decays_exactly_what_mindcv_decays(tmp_path: Path, capsys) -> None:
    """Issue 22: mindcv also exempts the model's no_weight_decay() (pos_embed, cls_token), and every name
    containing beta, gamma or bias. The converted config's script decays the same 50 of 152 parameters."""
    recipe = tmp_path / "vit.yaml"
    recipe.write_text(
        VIT_RECIPE.format(data_dir=imagenet_like(tmp_path)).replace('"auto"', '"norm_and_bias"')
    )
    code, err, _ = run(recipe, tmp_path / "cfg.yaml", capsys)
    assert not [line for line in err if "weight_decay" in line], err  # converted, not approximated
    script = generate_both(tmp_path / "cfg.yaml", tmp_path / "out")["native"]
    (tmp_path / "probe.py").write_text(DECAY_PROBE)
    (tmp_path / "mindcv_decayed.py").write_text(MINDCV_DECAYED)
    outputs = []
    for args in (["probe.py", str(script)], ["mindcv_decayed.py", "vit_b_32_224"]):
        done = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ours, theirs = outputs
    assert sorted(ours) == sorted(theirs)
    assert len(theirs) == 50 and "pos_embed" not in theirs and "cls_token" not in theirs
