"""The version matrix's driver (mscodegen/tools/compat), piece by piece: no environment is built, nothing trains.

The matrix itself (`make compat`, about 25 minutes) runs before a release; its result is docs/compat.md.
"""

from __future__ import annotations

import json
import re
import stat
import struct
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from mscodegen.tools.compat import _envs, _page
from mscodegen.tools.compat.__main__ import _parser
from mscodegen.tools.compat._apis import used_apis
from mscodegen.tools.compat._compare import (
    Cell,
    LogDiff,
    WeightsDiff,
    classify,
    diff_logs,
    f32_ulps,
    loss_logs,
)
from mscodegen.tools.compat._envs import REFERENCE, VERSIONS, ensure_env, requirements, run_extra
from mscodegen.tools.compat._runs import EXAMPLES, first_failure

from conftest import REPO


def next_f32(x: float) -> float:
    """The float32 just above x (x > 0)."""
    bits: int = struct.unpack("<i", struct.pack("<f", x))[0]
    value: float = struct.unpack("<f", struct.pack("<i", bits + 1))[0]
    return value


# ---------------------------------------------------------------------------- versions and requirements


def test_every_version_is_in_the_run_extras_range_and_the_reference_is_the_dev_pin():
    run = run_extra(REPO / "pyproject.toml")
    (spec,) = [Requirement(r).specifier for r in run if Requirement(r).name == "mindspore"]
    assert str(spec) != "==2.10.0", "[run] states the supported range, not one version"
    assert [v for v in VERSIONS if v not in spec] == []
    assert list(VERSIONS) == sorted(VERSIONS, key=_envs.version_key) and VERSIONS[-1] == REFERENCE
    dev = _pyproject()["project"]["optional-dependencies"]["dev"]
    assert f"mindspore=={REFERENCE}" in dev, "the golden files are made on the reference version"


def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_requirements_pin_one_version_and_keep_the_rest_of_the_run_extra():
    run = ["mindspore>=2.7,<2.11", "numpy<2", "mindcv==0.3.0", "scikit-learn>=1.3"]
    assert requirements("2.8.0", run) == ["mindspore==2.8.0", "numpy<2", "mindcv==0.3.0", "scikit-learn>=1.3"]
    assert requirements("2.7.1", ["MindSpore[extra] >= 2.7", "numpy<2"]) == ["mindspore==2.7.1", "numpy<2"]


def test_the_default_directory_is_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.delenv(_envs.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _envs.default_dir() == tmp_path / "mscodegen-compat"
    monkeypatch.setenv(_envs.ENV_VAR, str(tmp_path / "elsewhere"))
    assert _envs.default_dir() == tmp_path / "elsewhere"


def _fake_env(envs: Path, version: str, reports: str) -> Path:
    """envs/ms-<version>/bin/python answering the metadata question with `reports`."""
    python = envs / f"ms-{version}" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho {reports}\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


def test_an_environment_holding_its_version_is_reused_and_uv_is_required_when_asked_for(
    tmp_path, monkeypatch
):
    _fake_env(tmp_path, "2.8.0", "2.8.0")
    env = ensure_env("2.8.0", tmp_path, [], installer="uv", rebuild=False, log=tmp_path / "log")
    assert (env.how, env.python) == ("reused", tmp_path / "ms-2.8.0" / "bin" / "python")
    _fake_env(tmp_path, "2.9.0", "2.8.0")  # another version inside: not reused
    monkeypatch.setattr(_envs, "find_uv", lambda: None)
    env = ensure_env("2.9.0", tmp_path, [], installer="uv", rebuild=False, log=tmp_path / "log")
    assert env.how == "failed" and "pip install uv" in env.error
    assert (tmp_path / "ms-2.9.0").exists(), "nothing is deleted before a build can start"


# ---------------------------------------------------------------------------- comparing with the reference


def test_f32_ulps():
    assert f32_ulps(2.3, 2.3) == 0
    assert f32_ulps(2.3296477794647217, next_f32(2.3296477794647217)) == 1
    assert f32_ulps(1.0, next_f32(next_f32(1.0))) == 2
    assert f32_ulps(-0.0, 0.0) == 0 and f32_ulps(-1e-45, 1e-45) == 2


def _log(*losses: float, start: int = 1) -> list[dict]:
    return [{"step": start + i, "epoch": 1, "loss": x, "lr": 0.05} for i, x in enumerate(losses)]


def test_identical_logs():
    logs = {"model/loss.jsonl": _log(2.5, 2.25), "native/loss.jsonl": _log(2.5, 2.25)}
    diff = diff_logs(logs, logs)
    assert diff.identical and diff.steps == 4 and diff.first == ""


def test_a_one_ulp_difference_is_measured_and_located():
    a = 2.3296477794647217
    ours = {"model/loss.jsonl": _log(2.5, next_f32(a), 2.0)}
    ref = {"model/loss.jsonl": _log(2.5, a, 2.0)}
    diff = diff_logs(ours, ref)
    assert not diff.identical
    assert (diff.steps, diff.differing, diff.first, diff.max_ulps) == (3, 1, "step 2 (model/loss.jsonl)", 1)
    assert diff.first_step == 2
    assert diff.max_abs == pytest.approx(2.384e-7, rel=1e-3) and diff.problems == ()


def test_the_first_difference_is_the_earliest_step_of_any_log():
    a = 1.5
    ours = {
        "model/resumed/loss.jsonl": _log(next_f32(a), start=11),
        "model/whole/loss.jsonl": _log(a, next_f32(a)),
    }
    ref = {"model/resumed/loss.jsonl": _log(a, start=11), "model/whole/loss.jsonl": _log(a, a)}
    assert diff_logs(ours, ref).first == "step 2 (model/whole/loss.jsonl)"


def test_logs_that_do_not_line_up_are_problems_not_ulps():
    diff = diff_logs(
        {"model/loss.jsonl": _log(1.0, 2.0)}, {"model/loss.jsonl": _log(1.0), "x/loss.jsonl": []}
    )
    assert diff.problems == ("model/loss.jsonl: steps 2 != 1 (2.10.0)", "x/loss.jsonl only in 2.10.0")
    flags = diff_logs(
        {"a.jsonl": [{"step": 1, "overflow": True}]}, {"a.jsonl": [{"step": 1, "overflow": False}]}
    ).problems
    assert flags == ("a.jsonl step 1: overflow True != False (2.10.0)",)


def test_loss_logs_reads_every_kept_log_by_relative_path(tmp_path):
    for name in ("model/whole/loss.jsonl", "native/loss.rank1.jsonl", "model/eval.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(json.dumps({"step": 1, "loss": 1.5}) + "\n\n")
    assert sorted(loss_logs(tmp_path)) == ["model/whole/loss.jsonl", "native/loss.rank1.jsonl"]


def _run(version: str = "2.8.0", returncode: int | None = 0, failure: str = "") -> dict:
    return {
        "version": version,
        "example": "resume",
        "returncode": returncode,
        "seconds": 12.5,
        "failure": failure,
    }


SAME = LogDiff(120, 0, "", 0, 0.0)
APART = LogDiff(120, 17, "step 8 (model/whole/loss.jsonl)", 2, 4.8e-7, (), 8)
WEIGHTS_EQUAL = WeightsDiff(61706, 0, 0, 0.0)
WEIGHTS_APART = WeightsDiff(61706, 3743, 12, 2.9e-6)


def test_cells():
    assert classify(_run(REFERENCE), None, None).text == "identical"
    assert classify(_run(), SAME, WEIGHTS_EQUAL).text == "identical"
    assert classify(_run(), SAME, None).text == "identical"  # data parallel: no weights kept
    text = classify(_run(), APART, WEIGHTS_APART).text
    assert text == "identical variants; vs 2.10.0: losses ≤ 2 ulp (17/120 steps), weights ≤ 12 ulp"
    assert classify(_run(), APART, None).text.endswith("losses ≤ 2 ulp (17/120 steps)")
    assert (
        classify(_run(), SAME, WEIGHTS_APART).text
        == "identical variants; vs 2.10.0: losses ==, weights ≤ 12 ulp"
    )
    broken = WeightsDiff(0, 0, 0, 0.0, ("parameter w only in the reference",))
    assert classify(_run(), SAME, broken).text.endswith(
        "not comparable with 2.10.0: parameter w only in the reference"
    )
    failed = classify(_run(returncode=1, failure="model: ValueError: a|b `x`"), None, None)
    assert failed.failed and failed.text == "fails: `model: ValueError: a\\|b 'x'`"
    assert classify(_run(returncode=None, failure="no result after 1800 s"), None, None).failed


def test_weights_distance_counts_values_and_ulps_at_the_tensors_scale():
    import numpy as np

    from mscodegen.tools.compat._weights import distance

    w = np.array([1.0, 2.0, -3.0, 1e-9], dtype=np.float32)
    moved = w.copy()
    moved[2] = np.nextafter(np.nextafter(moved[2], np.float32(0)), np.float32(0))  # 2 ulp of 3.0
    moved[3] = np.float32(2e-9)  # millions of ulps of 1e-9, a fraction of one at the tensor's scale (3.0)
    half = np.array([0.5], dtype=np.float16)
    found = distance({"w": w, "h": half, "only": w}, {"w": moved, "h": np.nextafter(half, np.float16(1))})
    assert (found["values"], found["differ"], found["max_ulps"]) == (5, 3, 2)
    assert found["problems"] == ["parameter only only in this version"]
    assert distance({"w": w}, {"w": w}) == {
        "values": 4,
        "differ": 0,
        "max_ulps": 0,
        "max_abs": 0.0,
        "problems": [],
    }


# ---------------------------------------------------------------------------- the failure's first line


def test_first_failure_model_and_native_differ(tmp_path):
    (tmp_path / "parity.txt").write_text(
        "running...\nNOT identical: step 3: loss 1.0 (model) != 1.5 (native)\n"
    )
    assert first_failure(tmp_path) == "model != native: step 3: loss 1.0 (model) != 1.5 (native)"


def test_first_failure_is_the_scripts_exception(tmp_path):
    (tmp_path / "parity.txt").write_text("error: the native variant (stopped at step 10) failed:\n...\n")
    (tmp_path / "native" / "stopped").mkdir(parents=True)
    (tmp_path / "native" / "stopped" / "stdout.txt").write_text(
        "[WARNING] ME(1:2,python):2026-01-01 [ops.cc:1] noise\nTraceback (most recent call last):\n"
        '  File "train_native.py", line 3\nTypeError: set_init_step() takes 1 positional argument\n'
    )
    assert (
        first_failure(tmp_path)
        == "native (stopped at step 10): TypeError: set_init_step() takes 1 positional argument"
    )


def test_first_failure_of_a_worker_under_msrun(tmp_path):
    (tmp_path / "parity.txt").write_text(
        "error: the model variant failed; last lines of its output:\nmsrun exit 1\n"
    )
    (tmp_path / "model" / "msrun_log").mkdir(parents=True)
    (tmp_path / "model" / "msrun_log" / "worker_1.log").write_text(
        "mindspore.RuntimeError: The pointer[comm] is null.\n"
    )
    assert first_failure(tmp_path) == "model: mindspore.RuntimeError: The pointer[comm] is null."


def test_first_failure_of_parity_itself(tmp_path):
    (tmp_path / "parity.txt").write_text("error: MindSpore is not importable in /x/bin/python: install it\n")
    assert first_failure(tmp_path) == "MindSpore is not importable in /x/bin/python: install it"


# ---------------------------------------------------------------------------- the page


def _results() -> dict:
    versions = ["2.7.0", "2.10.0"]
    return {
        "started": "2026-12-04 19:00:00 +0000",
        "machine": {"cores": 2, "python": "3.11.9", "onednn_max_cpu_isa": "AVX2"},
        "source": "abc1234",
        "versions": versions,
        "examples": ["quickstart", "resume"],
        "envs": {v: {"version": v, "how": "reused", "seconds": 0.4, "error": ""} for v in versions},
        "runs": [],
        "load": [11.0, 13.0, 12.0],
        "wall_s": 1525.0,
    }


def _cells() -> list[Cell]:
    return [
        Cell("2.10.0", "quickstart", "identical", seconds=20.0),
        Cell("2.10.0", "resume", "identical", seconds=60.0),
        Cell("2.7.0", "quickstart", "fails: `x`", True, seconds=5.0),
        Cell("2.7.0", "resume", "identical variants; 2 ulp ...", False, APART, WEIGHTS_APART, 61.0),
    ]


def test_table_rows_are_versions_in_order_and_columns_examples():
    lines = _page.table(_results(), _cells()).splitlines()
    assert lines[0] == "| MindSpore | quickstart | resume |"
    assert lines[2] == "| 2.7.0 | fails: `x` | identical variants; 2 ulp ... |"
    assert lines[3] == "| 2.10.0 | identical | identical |"


def test_a_version_without_an_environment_says_why():
    results = _results()
    results["envs"]["2.7.0"] = {"how": "failed", "seconds": 3.0, "error": "No solution found | x"}
    assert "| 2.7.0 | no environment: `No solution found \\| x` |" in _page.table(results, _cells()[:2])


def test_timings_and_summary():
    lines = _page.timings(_results(), _cells()).splitlines()
    assert lines[2] == "| 2.7.0 | reused (0 s) | 5 s | 61 s | 1 min 06 s |"
    text = _page.summary(_results(), _cells(), {"2.7.0": {}, "2.10.0": {}})
    assert "wall time 25 min 25 s on 2 cores, load 11.0-13.0" in text and "every name and keyword" in text


def test_versions_apart_alike_share_a_bullet_and_the_change_is_located():
    cells = _cells() + [
        Cell("2.8.0", "resume", "identical variants; 2 ulp ...", False, APART, WEIGHTS_APART, 61.0),
        Cell("2.9.0", "resume", "identical", False, LogDiff(120, 0, "", 0, 0.0), WeightsDiff(1, 0, 0, 0.0)),
    ]
    bullets = _page.differences(cells)
    assert len(bullets) == 1 and bullets[0].startswith("- resume on 2.7.0, 2.8.0: 17 of 120")
    text = _page.why(cells)
    assert "(the computation changed between 2.8.0 and 2.9.0, not the data)" in text
    assert "2.9.0 gives 2.10.0's numbers exactly" in text


def test_the_page_names_the_run_the_differences_and_why():
    text = _page.page(_results(), _cells(), 76, {"2.7.0": {"mindspore.x": "missing (AttributeError)"}})
    assert "Last run: 2026-12-04, mscodegen" in text and "abc1234" in text
    assert "**Wall time 25 min 25 s**" in text and "load 11.0-13.0" in text
    assert (
        "- resume on 2.7.0: 17 of 120 logged steps differ, the first at step 8 (model/whole/loss.jsonl), by at most "
        "2 ulp (|difference| up to 4.8e-07); final weights: 3,743 of 61,706 values differ, by at most 12 ulp at their "
        "tensor's scale"
    ) in text
    assert (
        "Why: the data and the initial weights are the same" in text
        and "first difference is at step 8" in text
    )
    assert (
        "The final weights of 2.7.0 differ from 2.10.0's wherever they are compared (by up to 12 ulp" in text
    )
    assert "- 2.7.0: `mindspore.x` missing (AttributeError)" in text
    assert "1 of 4 runs failed" in text
    assert "not in CI" in text


# ---------------------------------------------------------------------------- the API check's reading


def test_used_apis_follows_import_aliases_and_collects_keywords(tmp_path):
    script = tmp_path / "train_model.py"
    script.write_text(
        "import mindspore as ms\nfrom mindspore import dataset as ds, nn\nfrom mindspore.train import Model\n"
        "import numpy as np\n"
        "def f():\n    from mindspore.dataset import vision\n"
        "    ms.set_context(mode=ms.GRAPH_MODE)\n    ds.config.set_fast_recovery(False)\n"
        "    net = nn.Dense(2, 2, weight_init='normal')\n    vision.Resize(size=(8, 8))\n"
        "    Model(net, optimizer=None).fit(1, None, valid_dataset=None)\n    np.zeros(3, dtype=np.float32)\n"
    )
    uses = used_apis([script])
    assert uses["mindspore.set_context"] == ["mode"] and "mindspore.GRAPH_MODE" in uses
    assert uses["mindspore.dataset.config.set_fast_recovery"] == []
    assert uses["mindspore.nn.Dense"] == ["weight_init"]
    assert uses["mindspore.dataset.vision.Resize"] == ["size"]
    assert uses["mindspore.train.Model"] == ["optimizer"]  # .fit on the object: not seen
    assert not [name for name in uses if not name.startswith("mindspore")]


# ---------------------------------------------------------------------------- wiring: CLI, Makefile, docs


def test_cli_knows_the_examples():
    names = [e.name for e in EXAMPLES]
    assert names == ["quickstart", "amp_accum", "two_input", "resume", "data_parallel"]
    assert all((REPO / e.config).is_file() for e in EXAMPLES)
    args = _parser().parse_args(["--versions", "2.7.0", "--examples", "resume"])
    assert (args.versions, args.examples, args.installer) == (["2.7.0"], ["resume"], "auto")
    with pytest.raises(SystemExit):
        _parser().parse_args(["--examples", "mnist"])


def test_make_compat_runs_the_driver_and_writes_the_page():
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\ncompat:", 1)[1].split("\n\n", 1)[0]
    assert "-m mscodegen.tools.compat" in recipe and "--page docs/compat.md" in recipe


def test_the_docs_page_covers_every_version_and_example_and_is_in_the_nav():
    text = (REPO / "docs" / "compat.md").read_text()
    matrix = text.split("\n| MindSpore | ", 1)[1].split("\n\n", 1)[0]  # the first table
    rows = re.findall(r"^\| (\d+\.\d+\.\d+) \|", matrix, re.MULTILINE)
    assert rows == list(VERSIONS), "docs/compat.md is stale: run `make compat`"
    header = next(line for line in text.splitlines() if line.startswith("| MindSpore | "))
    assert header == "| MindSpore | " + " | ".join(e.name for e in EXAMPLES) + " |"
    assert "compat.md" in (REPO / "mkdocs.yml").read_text()
