"""callbacks.checkpoint.keep: the best k checkpoints by an eval metric, and best.ckpt, identical in both variants."""

from __future__ import annotations

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.run.parity import generate_both, run_script

BEST: dict = {
    "train": {"epochs": 5},
    "eval": {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "loss"}]},
    "callbacks": {
        "checkpoint": {
            "every_epochs": 2,
            "keep_max": 1,
            "prefix": "tiny",
            "keep": {"best": 2, "monitor": "loss"},
        }
    },
}


@pytest.mark.slow
def test_best_k_identical_in_both_variants(write_config, tmp_path) -> None:
    import mindspore as ms

    scripts = generate_both(write_config(BEST), tmp_path / "scripts")
    kept = {}
    for variant, script in scripts.items():
        result = run_script(script, tmp_path / variant, variant=variant)
        assert result.returncode == 0, result.log_tail
        assert len(result.evals) == 5
        (directory,) = (result.output_dir / "checkpoints").iterdir()  # the run's own folder
        files = sorted(p.name for p in directory.glob("*best*.ckpt"))
        # the test's own selection from the logged evaluations: the 2 lowest losses (earlier wins ties)
        ranked = sorted(result.evals, key=lambda e: (e["metrics"]["loss"], e["step"]))[:2]
        expected = sorted(f"tiny-best-{e['epoch']}_{e['step']}.ckpt" for e in ranked) + ["best.ckpt"]
        assert files == sorted(expected), (variant, files, result.evals)
        best = ranked[0]
        a = ms.load_checkpoint(str(directory / "best.ckpt"))
        b = ms.load_checkpoint(str(directory / f"tiny-best-{best['epoch']}_{best['step']}.ckpt"))
        assert sorted(a) == sorted(b) and all((a[k].asnumpy() == b[k].asnumpy()).all() for k in a)
        assert not list(directory.glob(".partial-*"))
        kept[variant] = (files, {name: ms.load_checkpoint(str(directory / name)) for name in files})
    assert kept["model"][0] == kept["native"][0]
    for name in kept["model"][0]:
        a, b = kept["model"][1][name], kept["native"][1][name]
        assert all((a[k].asnumpy() == b[k].asnumpy()).all() for k in a), name


def test_keep_monitor_must_be_a_metric(write_config) -> None:
    bad = {
        **BEST,
        "callbacks": {
            "checkpoint": {**BEST["callbacks"]["checkpoint"], "keep": {"best": 2, "monitor": "top_9"}}
        },
    }
    with pytest.raises(ConfigError, match="top_9"):
        load_config(write_config(bad))


def test_keep_needs_eval(write_config) -> None:
    with pytest.raises(ConfigError, match="data.eval"):
        load_config(write_config({**BEST, "data": {"eval": None}, "eval": None}))
