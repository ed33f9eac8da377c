"""Two networks (gan:): the config form, its located errors, and the scripts it generates (no MindSpore).

The runs are in test_gan_parity.py (slow): both variants ==, resume, the hand-written reference.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest
import yaml

from mscodegen.catalog.literals import Name
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.plan import build_plans
from mscodegen.plan.gan import GanShared
from mscodegen.run.parity import step_differences
from mscodegen.run.plot import parity_curves, series
from mscodegen.schema.gan import GanConfig

from conftest import REPO, merge

EXAMPLE = REPO / "examples" / "dcgan_digits.yaml"
# 180 digits (test_fraction 0.9) at 16x16, batch 16, small networks: what the slow tests run.
SMALL: dict = {
    "runtime": {"mode": "graph", "seed": 3},
    "gan": {
        "latent_dim": 16,
        "generator": {
            "network": {"kind": "builtin", "name": "dcgan_generator", "features": 8, "image_size": 16}
        },
        "discriminator": {"network": {"kind": "builtin", "name": "dcgan_discriminator", "features": 8}},
        "samples": {"count": 8, "columns": 4},
    },
    "data": {
        "train": {
            "kind": "digits",
            "test_fraction": 0.9,
            "batch_size": 16,
            "transforms": {"resize": [16, 16], "normalize": {"mean": [0.5], "std": [0.5]}},
        }
    },
    "train": {"epochs": 2, "log_every_steps": 4},
}


def write(tmp_path: Path, overrides: dict | None = None, base: dict = SMALL, name: str = "gan") -> Path:
    """The config `base` with `overrides` merged in (conftest.merge: a None deletes a key; NULL writes null)."""
    path = tmp_path / f"{name}.yaml"
    text = yaml.safe_dump(merge(base, overrides or {}), sort_keys=False)
    path.write_text(text.replace(NULL, "null"))
    return path


NULL = "__null__"


def problems(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.message) for p in info.value.problems]


def scripts(tmp_path: Path, overrides: dict | None = None) -> dict[str, str]:
    loaded = load_config(write(tmp_path, overrides))
    return generate(loaded, tmp_path / "out")


# --- the config form ---------------------------------------------------------------------------------


def test_the_example_loads_as_a_gan_config() -> None:
    cfg = load_config(EXAMPLE).config
    assert isinstance(cfg, GanConfig)
    assert cfg.gan.generator.optimizer.lr == cfg.gan.discriminator.optimizer.lr == 0.0002
    assert cfg.gan.discriminator.optimizer.beta1 == 0.5


def test_optimizers_default_to_dcgans_adam(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path)).config
    assert isinstance(cfg, GanConfig)
    for role in (cfg.gan.generator, cfg.gan.discriminator):
        assert (role.optimizer.name, role.optimizer.lr, role.optimizer.beta1) == ("adam", 0.0002, 0.5)


def test_generator_image_size_against_the_data(tmp_path: Path) -> None:
    found = problems(write(tmp_path, {"gan": {"generator": {"network": {"image_size": 32}}}}))
    assert found == [
        (
            "gan.generator.network.image_size",
            "dcgan_generator makes 32x32 images but data.train's are 16x16 after transforms.resize: "
            "set image_size: 16",
        )
    ]


def test_discriminator_input_against_the_data(tmp_path: Path) -> None:
    cfg = {"data": {"train": {"transforms": {"resize": [12, 12]}}}}
    found = dict(problems(write(tmp_path, cfg)))
    assert "square images of 16, 32, 64 or 128 pixels a side" in found["data.train.transforms.resize"]
    assert "resize data.train to [16, 16]" in found["gan.generator.network.image_size"]


def test_mindcv_discriminator_needs_one_logit_and_the_datas_channels(tmp_path: Path) -> None:
    disc = {"network": {"kind": "mindcv", "name": "resnet18", "features": None}}  # None: drop SMALL's
    found = problems(write(tmp_path, {"gan": {"discriminator": disc}}))
    assert (
        "gan.discriminator.network.num_classes",
        "the discriminator returns one logit per image: set num_classes: 1",
    ) in found
    assert any(path == "gan.discriminator.network" and "3-channel" in message for path, message in found)


NOT_WITH_TWO = {
    "ema": ({"ema": {}}, "ema"),
    "accumulation": ({"grad": {"accumulation_steps": 2}}, "grad.accumulation_steps"),
    "clip": ({"grad": {"clip": {"kind": "norm"}}}, "grad.clip"),
    "schedule": ({"lr_schedule": {"kind": "cosine"}}, "lr_schedule"),
    "eval": ({"eval": {"metrics": [{"name": "loss"}]}}, "eval"),
    "data.eval": ({"data": {"eval": {**SMALL["data"]["train"], "split": "test"}}}, "data.eval"),
    "early_stopping": ({"callbacks": {"early_stopping": {}}}, "callbacks.early_stopping"),
    "keep_best": (
        {"callbacks": {"checkpoint": {"every_epochs": 1, "keep": {"best": 1}}}},
        "callbacks.checkpoint.keep",
    ),
    "sink": ({"train": {"dataset_sink_mode": True}}, "train.dataset_sink_mode"),
    "fp32_cells": ({"amp": {"level": "O2", "fp32_cells": ["Tanh"]}}, "amp.fp32_cells"),
    "batch_transforms": (
        {"data": {"train": {"batch_transforms": [{"MixUpBatch": {}}]}}},
        "data.train.batch_transforms",
    ),
    "groups": (
        {"gan": {"generator": {"optimizer": {"name": "adam", "groups": [{"params": ["x*"], "lr": 0.1}]}}}},
        "gan.generator.optimizer.groups",
    ),
    "layer_decay": (
        {"gan": {"discriminator": {"optimizer": {"name": "adam", "layer_decay": {"rate": 0.5}}}}},
        "gan.discriminator.optimizer.layer_decay",
    ),
    "freeze": (
        {"gan": {"discriminator": {"network": {"kind": "mindcv", "name": "resnet18", "num_classes": 1, "features": None,
                                               "kwargs": {"in_channels": 1}, "freeze": {"patterns": ["x"]}}}}},
        "gan.discriminator.network.freeze",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", NOT_WITH_TWO, ids=list(NOT_WITH_TWO))
def test_what_two_networks_cannot_do_yet_is_located(tmp_path: Path, case: str) -> None:
    overrides, key = NOT_WITH_TWO[case]
    found = problems(write(tmp_path, copy.deepcopy(overrides)))
    assert [path for path, _ in found] == [key], found
    assert "not supported with two networks (gan) yet" in found[0][1]


def test_one_network_keys_beside_gan_point_at_the_gan_keys(tmp_path: Path) -> None:
    found = problems(write(tmp_path, {"network": {"kind": "builtin", "name": "mlp"}, "loss": {}}))
    assert found == [
        ("network", "not with gan: the networks are gan.generator.network and gan.discriminator.network"),
        ("loss", "not with gan: the adversarial loss is gan.loss"),
    ]


def test_a_half_written_gan_config_is_pointed_at_the_gan_form(tmp_path: Path) -> None:
    """Tried as new users would: the errors name the gan: form, not `network: missing key 'kind'`."""
    cfg = {
        "network": {
            "generator": {"kind": "builtin", "name": "dcgan_generator"},
            "discriminator": {"kind": "builtin", "name": "dcgan_discriminator"},
        },
        "data": SMALL["data"],
        "optimizer": [{"name": "adam"}, {"name": "adam"}],
    }
    found = problems(write(tmp_path, base=cfg))
    assert [path for path, _ in found] == ["network", "optimizer"]
    assert "go in a gan: section" in found[0][1] and "gan.<role>.optimizer" in found[1][1]
    assert not any("missing key" in message or "expected a mapping" in message for _, message in found)


def test_user_objects_named_like_the_gan_scripts_names(tmp_path: Path) -> None:
    """Generator is the GAN scripts' own class: a generator named so is imported under another name."""
    (tmp_path / "nets.py").write_text("class Generator:\n    pass\n")
    gen = {
        "network": {
            "kind": "import",
            "factory": "nets:Generator",
            "name": None,
            "features": None,
            "image_size": None,
        }
    }
    texts = generate(load_config(write(tmp_path, {"gan": {"generator": gen}})), tmp_path / "out")
    for script in ("train_model.py", "train_native.py", "predict.py"):
        assert "from nets import Generator as UserGenerator\n" in texts[script], script
        assert "generator = UserGenerator()" in texts[script], script
    one = {
        "network": {"kind": "import", "factory": "nets:Generator"},
        "data": {"train": {"kind": "synthetic", "image_shape": [1, 8, 8]}},
        "optimizer": {"name": "momentum"},
    }
    load_config(write(tmp_path, base=one, name="one"))


# --- WGAN: the loss family, the critic's bounds -------------------------------------------------------

WASSERSTEIN: dict = {"gan": {"loss": "wasserstein", "discriminator": {"network": {"norm": "layer"}}}}


@pytest.mark.parametrize("key", ["clip_weights", "gradient_penalty"])
def test_the_critics_bounds_need_the_wasserstein_loss(tmp_path: Path, key: str) -> None:
    found = problems(write(tmp_path, {"gan": {"loss": "MSELoss", "discriminator": {key: 0.5}}}))
    what = {"clip_weights": "weight clipping", "gradient_penalty": "the gradient penalty"}[key]
    assert found == [
        (
            f"gan.discriminator.{key}",
            f"{what} bounds a Wasserstein critic: set gan.loss: wasserstein, or remove {key}",
        )
    ]


def test_the_gradient_penalty_replaces_weight_clipping(tmp_path: Path) -> None:
    both = {"gan": {"discriminator": {"clip_weights": 0.01, "gradient_penalty": 10}}}
    found = problems(write(tmp_path, merge(WASSERSTEIN, both)))
    assert [path for path, _ in found] == ["gan.discriminator.gradient_penalty"]
    assert "keep one of clip_weights and gradient_penalty" in found[0][1]


def test_the_gradient_penalty_needs_graph_mode_and_float32(tmp_path: Path) -> None:
    gp = merge(WASSERSTEIN, {"gan": {"discriminator": {"gradient_penalty": 10}}})
    found = problems(write(tmp_path, merge(gp, {"runtime": {"mode": "pynative"}, "amp": {"level": "O2"}})))
    assert [path for path, _ in found] == ["runtime.mode", "amp.level"]
    assert "set runtime.mode: graph" in found[0][1] and "set amp.level: O0" in found[1][1]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"gan": {"d_steps": 0}}, "gan.d_steps"),
        ({"gan": {"d_steps": 2.5}}, "gan.d_steps"),
        ({"gan": {"discriminator": {"clip_weights": 0}}}, "gan.discriminator.clip_weights"),
        ({"gan": {"discriminator": {"gradient_penalty": -10}}}, "gan.discriminator.gradient_penalty"),
        ({"gan": {"generator": {"clip_weights": 0.01}}}, "gan.generator"),  # unknown key: the critic's only
        ({"gan": {"loss": "wgan"}}, "gan.loss"),
        ({"grad": {"clip": {"kind": "norm"}}}, "grad.clip"),
        (
            {"gan": {"generator": {"grad_clip": {"kind": "norm"}}}, "amp": {"level": "O2"}},
            "gan.generator.grad_clip.kind",
        ),
    ],
)
def test_bad_wgan_values_are_located(tmp_path: Path, overrides: dict, key: str) -> None:
    found = problems(write(tmp_path, merge(WASSERSTEIN, overrides)))
    assert [path for path, _ in found] == [key], found
    if key == "grad.clip":  # one clip for two networks: pointed at each network's own
        assert "gan.generator.grad_clip and gan.discriminator.grad_clip" in found[0][1]


# --- the generated scripts ------------------------------------------------------------------------------


def _function(text: str, name: str) -> str:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            segment = ast.get_source_segment(text, node)
            assert segment is not None
            return segment
    raise AssertionError(f"no {name}")


def test_native_alternation_is_written_out_and_model_gets_the_train_cell() -> None:
    native = (REPO / "generated" / "dcgan_digits" / "train_native.py").read_text()
    model = (REPO / "generated" / "dcgan_digits" / "train_model.py").read_text()
    train = _function(native, "train")
    assert train.count("ms.value_and_grad(") == 2
    fake, d_update, g_update = (
        train.index("fake = generator(noise)"),
        train.index("d_optimizer(d_grads)"),
        train.index("g_loss, g_grads = g_grad_fn(noise)"),
    )
    assert fake < d_update < g_update  # the discriminator first, then the generator through it
    assert "class GANTrainStep" not in native
    assert "model = Model(train_step)" in model
    assert "ops.stop_gradient(self.generator(noise))" in _function(model, "GANTrainStep")
    for text in (native, model):  # the oneDNN setting precedes MindSpore's import
        assert text.index('os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")') < text.index(
            "import mindspore"
        )


VARIATIONS = {
    "d_steps": {"gan": {"d_steps": 2}},
    "amp_static": {"amp": {"level": "O2"}, "loss_scale": {"kind": "fixed", "value": 256}},
    "amp_dynamic_checkpoint": {
        "amp": {"level": "O2"},
        "loss_scale": {"kind": "dynamic", "init": 1024, "window": 2},
        "callbacks": {"checkpoint": {"every_steps": 3}},
    },
    "data_parallel": {"parallel": {"mode": "data_parallel", "workers": 2}, "gan": {"d_steps": 2}},
    "size_64": {
        "gan": {"generator": {"network": {"image_size": 64}}},
        "data": {"train": {"transforms": {"resize": [64, 64]}}},
    },
    "lsgan_no_samples": {"gan": {"loss": "MSELoss", "samples": NULL}, "callbacks": {"time_monitor": False}},
    "mindcv_discriminator": {
        "gan": {
            "discriminator": {
                "network": {
                    "kind": "mindcv",
                    "name": "resnet18",
                    "num_classes": 1,
                    "kwargs": {"in_channels": 1},
                    "features": None,
                },
                "optimizer": {"name": "momentum", "lr": 0.01, "weight_decay": 0.0001},
            }
        }
    },
}


@pytest.mark.parametrize("case", VARIATIONS, ids=list(VARIATIONS))
def test_variations_generate_parseable_scripts(tmp_path: Path, case: str) -> None:
    files = scripts(tmp_path, copy.deepcopy(VARIATIONS[case]))
    for name in ("train_model.py", "train_native.py"):
        ast.parse(files[name], filename=name)
    native, model = files["train_native.py"], files["train_model.py"]
    if case == "d_steps":
        assert "for i in range(D_STEPS):" in native and "D_STEPS = 2" in native
        assert "dataset.batch(\n        16 * D_STEPS," in native or "16 * D_STEPS" in native
    if case.startswith("amp"):
        assert native.count("amp.auto_mixed_precision(") == 2
        assert "d_scaler.scale_value.name" in native and "self.g_scaler.scale_value.name" in model
    if case == "amp_dynamic_checkpoint":
        assert "d_scaler.adjust(d_finite)" in native and "d_overflow_free_steps" in native
    if case == "data_parallel":
        assert "launch.sh" in files and "d_reducer = nn.DistributedGradReducer(" in native
        assert "add_latent_noise(label, info, shard_id)" in native
    if case == "size_64":
        assert "# 64x64" in native and "features * 8" in native
    if case == "lsgan_no_samples":
        assert "nn.MSELoss()" in native and "save_samples" not in native and "SAMPLE" not in model
    if case == "mindcv_discriminator":
        assert 'create_model("resnet18", num_classes=1, pretrained=False, in_channels=1)' in native
        assert "weight_decay=D_WEIGHT_DECAY" in native and "class Discriminator(" not in native


WGAN_VARIATIONS = {
    "wgan_clip": {
        "gan": {
            "loss": "wasserstein",
            "d_steps": 2,
            "generator": {"grad_clip": {"kind": "global_norm", "max_norm": 5}},
            "discriminator": {"clip_weights": 0.01},
        }
    },
    "wgan_gp_parallel": {
        "gan": {
            "loss": "wasserstein",
            "discriminator": {"gradient_penalty": 10, "network": {"norm": "layer"}},
        },
        "parallel": {"mode": "data_parallel", "workers": 2},
    },
    "grad_clip_dynamic_scale": {
        "gan": {
            "generator": {"grad_clip": {"kind": "value", "clip_value": 2}},
            "discriminator": {"grad_clip": {"kind": "value", "clip_value": 0.5}},
        },
        "amp": {"level": "O2"},
        "loss_scale": {"kind": "dynamic"},
    },
}


def _wgan_scripts(tmp_path: Path, case: str) -> tuple[str, str]:
    files = scripts(tmp_path, copy.deepcopy(WGAN_VARIATIONS[case]))
    for name in ("train_model.py", "train_native.py", "predict.py"):  # predict.py: the generator's grid
        ast.parse(files[name], filename=name)
    assert (
        "from train_model import LATENT_DIM, SAMPLE_COLUMNS, SAMPLE_COUNT, SAMPLE_SEED, Generator"
        in files["predict.py"]
    )
    return files["train_native.py"], files["train_model.py"]


def test_wgan_clips_the_critic_after_each_update(tmp_path: Path) -> None:
    native, model = _wgan_scripts(tmp_path, "wgan_clip")
    for text in (native, model):  # after each critic update, inside the D_STEPS loop; no loss class
        clamp = text.index("ops.assign(weight, ops.clamp(weight, -D_WEIGHT_CLIP, D_WEIGHT_CLIP))")
        assert text.index("for i in range(D_STEPS):") < clamp < text.index("g_grad_fn(noise[:size])")
        assert "loss_fn =" not in text and "DiscriminatorLoss(discriminator)" in text
        assert "return ops.mean(fake_scores) - ops.mean(real_scores)" in text
        assert "return -ops.mean(self.discriminator(self.generator(z)))" in text
        assert "g_grads = ops.clip_by_global_norm(g_grads, G_MAX_NORM)" in text


def test_wgan_gp_scripts_draw_the_mix_with_the_noise(tmp_path: Path) -> None:
    native, model = _wgan_scripts(tmp_path, "wgan_gp_parallel")
    for text in (native, model):
        assert "lambda image, label, info: add_latent_noise(image, label, info, shard_id)" in text
        assert 'output_columns=["image", "noise", "mix"]' in text
        assert "self.image_grad = ms.grad(ScoreSum(discriminator))" in text
        critic = _function(text, "conv_block") + _function(text, "Discriminator")
        assert "nn.LayerNorm((out_channels, size, size)" in critic and "BatchNorm2d" not in critic
    assert "for step_in_epoch, (image, noise, mix) in enumerate(batches, 1):" in native
    assert "def construct(self, image, noise, mix):" in model


def test_grad_clip_per_network_after_the_overflow_check(tmp_path: Path) -> None:
    native, model = _wgan_scripts(tmp_path, "grad_clip_dynamic_scale")
    g_clip = "g_grads = tuple(ops.clamp(grad, -G_CLIP_VALUE, G_CLIP_VALUE) for grad in g_grads)"
    d_clip = "d_grads = tuple(ops.clamp(grad, -D_CLIP_VALUE, D_CLIP_VALUE) for grad in d_grads)"
    for text in (native, model):
        assert (
            text.index("d_finite = amp.all_finite(d_grads)") < text.index(d_clip) < text.index("if d_finite:")
        )
        assert (
            text.index("g_finite = amp.all_finite(g_grads)") < text.index(g_clip) < text.index("if g_finite:")
        )
    assert "G_CLIP_VALUE = 2.0  # gan.generator.grad_clip.clip_value" in native


def test_the_plan_says_facts_the_templates_print(tmp_path: Path) -> None:
    """A network is a builder and its arguments, a builtin one its blocks' widths: no code text."""
    loaded = load_config(write(tmp_path, copy.deepcopy(VARIATIONS["mindcv_discriminator"])))
    shared, _ = build_plans(
        loaded.config, source="gan.yaml", config_dir=tmp_path, out_dir=tmp_path / "out", name=loaded.name
    )
    assert isinstance(shared, GanShared)
    g, d = shared.networks
    assert (g.call.func, g.call.args) == ("Generator", (Name("LATENT_DIM"),))
    assert dict(g.call.kwargs) == {"features": 8, "channels": 1}
    assert [(b.inputs, b.outputs, b.size) for b in g.blocks] == [(0, 2, 4), (2, 1, 8), (1, 0, 16)]
    assert (d.call.func, d.call.args, d.blocks) == ("create_model", ("resnet18",), ())
    assert d.optimizer_class == "Momentum" and d.optimizer_module is None
    assert dict(d.call.kwargs) == {"num_classes": 1, "pretrained": False, "in_channels": 1}
    assert shared.loss == "BCEWithLogitsLoss"


# --- parity and plot read both losses ----------------------------------------------------------------


GAN_LOG = [
    {"step": 1, "epoch": 1, "d_loss": 0.7, "g_loss": 0.9, "d_lr": 0.0002, "g_lr": 0.0002},
    {"step": 2, "epoch": 1, "d_loss": 0.5, "g_loss": 1.1, "d_lr": 0.0002, "g_lr": 0.0002},
]


def test_parity_compares_both_losses() -> None:
    other = [dict(GAN_LOG[0]), dict(GAN_LOG[1], g_loss=1.25)]
    assert step_differences(GAN_LOG, GAN_LOG) == []
    assert step_differences(GAN_LOG, other) == ["step 2: g_loss 1.1 (model) != 1.25 (native)"]


def test_plot_draws_both_losses() -> None:
    got = series(GAN_LOG)
    assert got["d_loss"] == ([1.0, 2.0], [0.7, 0.5]) and got["g_loss"] == ([1.0, 2.0], [0.9, 1.1])
    assert set(got) == {"d_loss", "g_loss", "d_lr", "g_lr"}
    diff = parity_curves(GAN_LOG, GAN_LOG)["model - native"]
    assert diff == {"d_loss diff": ([1.0, 2.0], [0.0, 0.0]), "g_loss diff": ([1.0, 2.0], [0.0, 0.0])}
