"""parallel.mode data_parallel (issue #6): msrun on CPU, loopback only, every subprocess bounded.

The slow tests share two msrun jobs (conftest's dp_runs), about 30 s each on 2 CPU cores: the native
loop, and Model with the custom TrainStep cell. Model's plain path under msrun is compared with the native
loop by test_parallel_resume (the tiny config, step by step per rank) and by the lenet_dp example's parity.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mscodegen.cli import main
from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.render.launch import LAUNCH_NAME
from mscodegen.run.msrun import child_env, free_port, rank_logs
from mscodegen.run.parity import RunResult, generate_both, run_script, step_differences

from conftest import DP, PROBE_IMPORT, REPO, TINY, merge, write_yaml

NODE_SETTINGS = ("NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "NPROC_PER_NODE", "MSRUN_LOG_DIR")

# ---------------------------------------------------------------------------
# Schema rules and generated text (fast)
# ---------------------------------------------------------------------------


def test_data_parallel_config_is_accepted(tmp_path: Path) -> None:
    loaded = load_config(write_yaml(tmp_path, "dp", DP))
    assert (loaded.config.parallel.mode, loaded.config.parallel.workers) == ("data_parallel", 2)


def test_global_batch_must_divide_over_workers_points_at_the_key(tmp_path: Path) -> None:
    path = tmp_path / "dp.yaml"
    path.write_text(
        "network: {kind: builtin, name: mlp}\n"
        "data:\n"
        "  train:\n"
        "    kind: synthetic\n"
        "    image_shape: [1, 8, 8]\n"
        "    batch_size: 10\n"
        "optimizer: {name: momentum}\n"
        "parallel: {mode: data_parallel, workers: 4}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    [problem] = info.value.problems
    assert (problem.path, problem.line, problem.column) == ("data.train.batch_size", 6, 17)
    assert "10 is the global batch" in problem.message and "parallel.workers (4)" in problem.message


def test_eval_batch_is_not_split(tmp_path: Path) -> None:
    # data.eval is not sharded (every rank evaluates all of it), so its batch need not divide.
    cfg = merge(DP, {"data": {"eval": dict(TINY["data"]["eval"], batch_size=5)}})
    load_config(write_yaml(tmp_path, "dp", cfg))


def test_several_workers_need_data_parallel(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_yaml(tmp_path, "sa", merge(TINY, {"parallel": {"workers": 2}})))
    assert [p.path for p in info.value.problems] == ["parallel.workers"]


def generated(tmp_path: Path, data: dict, variants=("model", "native")) -> dict[str, str]:
    loaded = load_config(write_yaml(tmp_path, "dp", data))
    return generate(loaded, tmp_path / "out", variants)


def test_launch_script_content(tmp_path: Path) -> None:
    files = generated(tmp_path, merge(DP, {"parallel": {"master_port": 9123, "cluster_time_out": 77}}))
    text = files[LAUNCH_NAME]
    assert text.startswith("#!/usr/bin/env bash\n")
    for part in (
        "workers=2  # parallel.workers",
        'master_addr="${MASTER_ADDR:-127.0.0.1}"',
        'master_port="${MASTER_PORT:-9123}"',
        '--log_dir="${MSRUN_LOG_DIR:-msrun_log}" ',
        "--join=True ",
        "--cluster_time_out=77 ",
        '"$script" "$@"',
        'script="train_model.py"',
    ):
        assert part in text, part
    subprocess.run(["bash", "-n"], input=text, text=True, check=True, timeout=30)
    native_only = generated(tmp_path, DP, variants=("native",))
    assert 'script="train_native.py"' in native_only[LAUNCH_NAME]
    assert LAUNCH_NAME not in generated(tmp_path, TINY)


def test_launch_script_passes_script_and_arguments_to_msrun(tmp_path: Path) -> None:
    """A stand-in msrun prints its argv: launch.sh resolves the script next to it and forwards "$@"."""
    out = tmp_path / "out"
    assert main(["new", str(write_yaml(tmp_path, "dp", DP)), "--out", str(out)]) == 0
    fake = tmp_path / "fake_msrun"
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in NODE_SETTINGS}
    port = str(free_port())  # launch.sh checks that nothing listens on it
    env.update(MSRUN=str(fake), MASTER_PORT=port, MSRUN_LOG_DIR="logs")

    def argv(*args: str) -> list[str]:
        cmd = [str(out / LAUNCH_NAME), *args]  # executed directly: write_new made it executable
        proc = subprocess.run(cmd, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    default = argv("--epochs", "1", "--data-dir", "a b")
    assert default[:8] == [  # one machine: NNODES, NODE_RANK, MASTER_ADDR unset
        "--worker_num=2",
        "--local_worker_num=2",
        "--node_rank=0",
        "--master_addr=127.0.0.1",
        f"--master_port={port}",
        "--log_dir=logs",
        "--join=True",
        "--cluster_time_out=120",
    ]
    assert default[8:] == [str(out / "train_model.py"), "--epochs", "1", "--data-dir", "a b"]
    assert argv("train_native.py", "--max-steps", "3")[8:] == [
        str(out / "train_native.py"),
        "--max-steps",
        "3",
    ]


def test_write_new_makes_launch_script_executable(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["new", str(write_yaml(tmp_path, "dp", DP)), "--out", str(out)]) == 0
    mode = stat.S_IMODE((out / LAUNCH_NAME).stat().st_mode)
    assert mode & stat.S_IXUSR and (mode & 0o444) >> 2 == mode & 0o111
    assert not stat.S_IMODE((out / "train_model.py").stat().st_mode) & 0o111


@pytest.mark.parametrize("variant", ["model", "native"])
@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"grad": {"clip": {"kind": "global_norm", "max_norm": 1.0}}},
        {
            "parallel": {"per_rank_logs": False, "gradients_mean": False},
            "callbacks": {"checkpoint": {"every_epochs": 1}},
        },
    ],
    ids=["plain", "custom-cell", "rank0-logs-sum-checkpoint"],
)
def test_generated_scripts_are_ruff_clean_and_wired(tmp_path: Path, variant: str, overrides: dict) -> None:
    # A cosine schedule: with a constant LR and no checkpoint both variants leave `steps_per_epoch`
    # unused (ruff F841) whatever parallel says; see test_constant_lr_steps_per_epoch_unused.
    files = generated(
        tmp_path, merge(DP, {"lr_schedule": {"kind": "cosine"}, **overrides}), variants=(variant,)
    )
    name = f"train_{variant}.py"
    if "checkpoints.py" in files:  # the scripts import it from beside them
        (tmp_path / "checkpoints.py").write_text(files["checkpoints.py"])
    assert_ruff_clean(tmp_path, name, files[name])
    text = files[name]
    assert "create_train_dataset(num_shards=group_size, shard_id=rank)" in text
    assert "num_shards=num_shards," in text and "8 // num_shards" in text
    assert "init()" in text and 'if "MS_WORKER_NUM" not in os.environ' in text
    reducer = "nn.DistributedGradReducer(optimizer.parameters, mean=GRADIENTS_MEAN)" in text
    context = "ms.set_auto_parallel_context(" in text
    custom = "grad" in overrides
    # Model's own TrainOneStepCell adds the reducer from the context; every TrainStep writes it out.
    assert reducer == (variant == "native" or custom)
    assert context == (variant == "model")
    if "callbacks" in overrides:
        assert "GRADIENTS_MEAN = False" in text and "which multiplies the effective LR by WORKERS" in text
        assert "rank == 0" in text
        # every rank loads rank 0's checkpoint: a node that cannot see it is told why
        assert (
            "(rank 0 writes them: on several machines, --output-dir must be shared storage)"
            in (files["checkpoints.py"])
        )


def assert_ruff_clean(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run(
        # the scripts are 100 columns wide (black, mscodegen.render.fmt.LINE_LENGTH), not ruff's default 88
        [str(ruff), "check", "--isolated", "--line-length", "100", name],
        cwd=tmp_path,  # as a user runs it in the scripts' folder: checkpoints.py beside them is first-party
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("data", [TINY, DP], ids=["stand-alone", "data-parallel"])
def test_constant_lr_without_checkpoint_is_ruff_clean(tmp_path: Path, data: dict) -> None:
    files = generated(tmp_path, data)
    for name in ("train_model.py", "train_native.py"):
        assert_ruff_clean(tmp_path, name, files[name])


# ---------------------------------------------------------------------------
# Real runs
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_model_and_native_data_parallel_identical_per_rank(dp_runs: dict[str, RunResult]) -> None:
    """Model with the custom TrainStep cell (grad.clip; its own DistributedGradReducer) == the native loop
    on every rank. Clamping to +-1e6 leaves these gradients unchanged, so the losses must be equal."""
    model, native = dp_runs["model_custom_cell"], dp_runs["native"]
    assert sorted(model.ranks) == sorted(native.ranks) == [0, 1]
    for rank in (0, 1):
        assert len(model.ranks[rank]) == 6  # 48 samples / 2 shards = 24 per rank, batch 8 // 2 = 4
        assert step_differences(model.ranks[rank], native.ranks[rank]) == []
    assert step_differences(model.steps, native.ranks[0]) == []  # rank 0's records stand for the run
    # the two shards are different data: their losses differ
    assert [r["loss"] for r in model.ranks[0]] != [r["loss"] for r in model.ranks[1]]


@pytest.mark.slow
def test_every_rank_is_recorded_and_rank0_writes_the_checkpoints(dp_runs: dict[str, RunResult]) -> None:
    """The observer records each rank (parallel.per_rank_logs, true or false, has no effect)."""
    for key in ("native", "model_custom_cell"):
        workdir = dp_runs[key].output_dir.parent
        names = sorted(p.name for p in rank_logs(workdir / "loss.jsonl").values())
        assert names == ["loss.rank0.jsonl", "loss.rank1.jsonl"]
        assert not (workdir / "loss.jsonl").exists()
    workdir = dp_runs["model_custom_cell"].output_dir.parent
    assert [p.name for p in (workdir / "output" / "checkpoints").glob("*/*.ckpt")] == ["dp-1_6.ckpt"]


@pytest.mark.slow
def test_mean_of_rank_losses_equals_one_process_with_the_global_batch(
    dp_runs: dict[str, RunResult], tmp_path: Path
) -> None:
    single_cfg = merge(DP, {"parallel": None})
    scripts = generate_both(write_yaml(tmp_path, "single", single_cfg), tmp_path / "scripts")
    single = run_script(scripts["model"], tmp_path / "model", variant="model", timeout=120)
    assert single.returncode == 0, single.log_tail
    native = dp_runs["native"]
    assert len(single.steps) == len(native.ranks[0]) == len(native.ranks[1])
    for one, r0, r1 in zip(single.steps, native.ranks[0], native.ranks[1], strict=True):
        assert abs((r0["loss"] + r1["loss"]) / 2 - one["loss"]) <= 1e-6, (one, r0, r1)


# ---------------------------------------------------------------------------
# Shards, and running without msrun
# ---------------------------------------------------------------------------

SHARD_PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
import numpy as np
mod = import_script(sys.argv[1])
out = {}
for shard in (0, 1):
    mod.ms.set_seed(mod.SEED)  # what every rank does first: the same seed (runtime.seed)
    dataset = mod.create_train_dataset(num_shards=2, shard_id=shard)
    # one iterator for both epochs, as the training loops use; it stops at each epoch's end
    iterator = dataset.create_tuple_iterator(num_epochs=2, output_numpy=True)
    out[shard] = [
        [[float(x.sum()), int(y), len(label)] for image, label in iterator for x, y in zip(image, label)]
        for _ in range(2)
    ]
images, labels = mod.make_synthetic(48, (1, 8, 8), 4, 0)
out["all"] = [[float(x.sum()), int(y)] for x, y in zip(images, labels)]
print(json.dumps(out))
"""
)


@pytest.mark.slow
def test_shards_are_disjoint_and_complete_with_the_shared_shuffle_seed(tmp_path: Path) -> None:
    shuffled = merge(DP, {"data": {"train": {"shuffle": True}}})
    files = generated(tmp_path, shuffled, variants=("native",))
    script = tmp_path / "train_native.py"
    script.write_text(files["train_native.py"])
    proc = subprocess.run(
        [sys.executable, "-c", SHARD_PROBE, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    everything = sorted(map(tuple, out["all"]))
    assert len(set(everything)) == 48  # the probe tells samples apart
    for epoch in range(2):
        shard0 = [tuple(r[:2]) for r in out["0"][epoch]]
        shard1 = [tuple(r[:2]) for r in out["1"][epoch]]
        assert {r[2] for r in out["0"][epoch] + out["1"][epoch]} == {4}  # per-worker batch 8 // 2
        assert len(shard0) == len(shard1) == 24
        assert not set(shard0) & set(shard1)
        assert sorted(shard0 + shard1) == everything
    assert out["0"][0] != out["0"][1]  # reshuffled each epoch


@pytest.mark.slow
def test_running_without_msrun_fails_with_the_launcher_message(tmp_path: Path) -> None:
    scripts = generate_both(write_yaml(tmp_path, "dp", DP), tmp_path / "scripts")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MS_", "RANK_"))}
    procs = {  # both variants at once: each mostly waits for `import mindspore`
        variant: subprocess.Popen(
            [sys.executable, str(script), "--max-steps", "1"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for variant, script in scripts.items()
    }
    for variant, proc in procs.items():
        try:
            _, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
        assert proc.returncode != 0
        assert f"trains on 2 workers: start it with `bash launch.sh train_{variant}.py`" in stderr
        assert "init()" not in stderr  # stopped before MindSpore tried to join a cluster


def test_child_env_puts_this_python_first_on_path(tmp_path: Path) -> None:
    cluster = {"NNODES": "2", "NODE_RANK": "1", "MASTER_ADDR": "10.0.0.1", "NPROC_PER_NODE": "1"}
    env = child_env(tmp_path / "logs", port=12345, base={"PATH": "/usr/bin:/bin", **cluster})
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert (env["MASTER_PORT"], env["MSRUN_LOG_DIR"]) == ("12345", str(tmp_path / "logs"))
    assert not set(cluster) & set(env)  # parity and the tests run on this machine only


def test_parity_workers_override_checks_the_rules(tmp_path: Path) -> None:
    from mscodegen.run.parity import with_workers

    loaded = load_config(write_yaml(tmp_path, "tiny", TINY))  # stand-alone, global batch 8
    two = with_workers(loaded, 2)
    assert (two.config.parallel.mode, two.config.parallel.workers) == ("data_parallel", 2)
    assert LAUNCH_NAME in generate(two, tmp_path / "out")
    with pytest.raises(ConfigError) as info:
        with_workers(loaded, 3)
    [problem] = info.value.problems
    assert problem.path == "data.train.batch_size" and "(with --workers 3)" in problem.message


@pytest.mark.parametrize("differences", [[], ["parameter fc.weight: max |model - native| = 0.001"]])
def test_parity_under_msrun_compares_the_final_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], differences: list
) -> None:
    """Rank 0 saves --save-weights under msrun; parity compares the two files as for one process.
    (Stand-ins for the runs and the comparison; the real ones: test_examples_as_shipped on lenet_dp.)"""
    from mscodegen.run import parity, weights

    calls: dict[str, tuple] = {}

    def run_script(_script: Path, workdir: Path, *, variant: str, **kwargs) -> RunResult:
        calls[variant] = (kwargs["distributed"], kwargs["extra_args"])
        Path(kwargs["extra_args"][1]).write_text(variant)
        steps = [{"step": 1, "epoch": 1, "loss": 0.5, "lr": 0.05}]
        return RunResult(variant, 0, 1.0, steps, output_dir=workdir / "output", ranks={0: steps, 1: steps})

    monkeypatch.setattr(parity, "run_script", run_script)
    monkeypatch.setattr(parity, "_has_mindspore", lambda: True)
    compared = []
    monkeypatch.setattr(
        weights, "compare_checkpoints", lambda a, b, **_: compared.append((a, b)) or differences
    )
    code = parity.run_parity(write_yaml(tmp_path, "tiny", TINY), steps=1, workers=2, keep=tmp_path / "kept")
    out, err = capsys.readouterr()
    kept = tmp_path / "kept"
    assert calls == {
        v: (True, ("--save-weights", str(kept / v / "weights.ckpt"))) for v in ("model", "native")
    }
    assert compared == [(kept / "model" / "weights.ckpt", kept / "native" / "weights.ckpt")]
    assert "not compared" not in out + err
    if differences:
        assert code == 1 and f"NOT identical: final weights: {differences[0]}" in err
    else:
        assert code == 0 and "identical: 1 steps, ranks [0, 1], final weights equal" in out


def test_timeout_kills_the_launcher_and_its_detached_workers(tmp_path: Path) -> None:
    """msrun starts workers with setsid: on timeout they must die too, not linger on the CI machine."""
    import time

    from mscodegen.run.msrun import run_launched

    fake = tmp_path / "fake_msrun.sh"
    fake.write_text("setsid sleep 300 &\necho $! > worker.pid\nsleep 300\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_launched(
            ["bash", str(fake)], cwd=tmp_path, env=dict(os.environ), stdout=subprocess.DEVNULL, timeout=2
        )
    stat_file = Path(f"/proc/{int((tmp_path / 'worker.pid').read_text())}/stat")

    def alive() -> bool:  # a zombie (state Z) is dead, only not yet reaped by whoever adopted it
        try:
            return stat_file.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(), "the detached worker survived the timeout"


IMPORTED_SHARD_PROBE = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("script", sys.argv[1])
sys.path.insert(0, os.path.dirname(spec.origin))  # checkpoints.py beside it
sys.modules.pop("checkpoints", None)  # another script's
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
script.ms.set_seed(script.SEED)
out = {}
for shard in (0, 1):
    dataset = script.create_train_dataset(2, shard)
    out[shard] = [row.tolist() for (x, _y) in dataset.create_tuple_iterator(output_numpy=True) for row in x]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_an_imported_factorys_dataset_is_split_into_disjoint_complete_shards(tmp_path: Path) -> None:
    """A factory returns a dataset the script did not build: the script gives its source a
    DistributedSampler (MindSpore datasets have no .shard()); every sample lands on exactly one rank."""
    examples = REPO / "examples"
    (tmp_path / "diabetes_data.py").write_text((examples / "diabetes_data.py").read_text())
    config = tmp_path / "dp.yaml"
    data = yaml.safe_load((examples / "diabetes.yaml").read_text())
    data["parallel"] = {"mode": "data_parallel", "workers": 2}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    script = generate_both(config, tmp_path / "scripts")["native"]
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTED_SHARD_PROBE, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    shard0, shard1 = ({json.dumps(r) for r in out[k]} for k in ("0", "1"))
    assert shard0 and shard1 and not shard0 & shard1
    assert abs(len(out["0"]) - len(out["1"])) <= 16  # each a half, less a dropped partial batch


FACTORY_PARTS = """
import numpy as np
from mindspore import dataset as ds

SAMPLES = [(np.full((1, 8, 8), k, np.float32), np.int32(k % 4)) for k in range(48)]


class Table:  # random access: __getitem__ and __len__
    def __getitem__(self, index):
        return SAMPLES[index]

    def __len__(self):
        return len(SAMPLES)


def table(split="train"):
    return ds.GeneratorDataset(Table(), column_names=["image", "label"], shuffle=False)
"""

FACTORY_PROBE = (
    PROBE_IMPORT
    + """
import importlib.util, json, os, sys
mod = import_script(sys.argv[1])
seen = {}
for rank in (0, 1):  # what create_train_dataset gives each of two workers
    dataset = mod.create_train_dataset(num_shards=2, shard_id=rank)
    seen[rank] = [int(image[0, 0, 0]) for batch, _ in dataset.create_tuple_iterator(output_numpy=True)
                  for image in batch]
print(json.dumps(seen))
"""
)


@pytest.mark.slow
def test_a_random_access_factory_source_is_sharded(tmp_path: Path) -> None:
    """Issue 35: a random-access source is split between the workers: disjoint shards that cover the data.
    A generator function would ignore DistributedSampler (each worker would see all the data): the scripts
    refuse it at start, and validate --run at its key (tests/unit/run/test_shards.py runs that refusal)."""
    (tmp_path / "parts.py").write_text(FACTORY_PARTS)
    config = merge(DP, {"data": {"train": {"kind": "import", "factory": "parts:table", "batch_size": 8}}})
    for key in ("num_samples", "image_shape", "num_classes", "seed"):
        config["data"]["train"].pop(key, None)
    config["network"]["input_shape"] = [1, 8, 8]
    config["data"].pop("eval", None)
    script = tmp_path / "table.py"
    script.write_text(generated(tmp_path, config, variants=("native",))["train_native.py"])
    table = subprocess.run(
        [sys.executable, "-c", FACTORY_PROBE, str(script)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert table.returncode == 0, table.stderr[-3000:]
    seen = json.loads(table.stdout.splitlines()[-1])
    assert len(seen["0"]) == len(seen["1"]) == 24
    assert not set(seen["0"]) & set(seen["1"])
    assert sorted(seen["0"] + seen["1"]) == list(range(48))
