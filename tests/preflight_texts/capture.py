"""Re-capture the texts in this folder from today's generated scripts (run after a template change):

    .venv/bin/python tests/preflight_texts/capture.py

Each case writes the config of tests/unit/run/test_preflight.py (CONFIG) with an imported dataset factory that
breaks one assumption, generates both variants, runs each with `--fast-dev-run` and stores its stderr
(or stdout, for the runs that exit 0) as <case>_<variant>.<stream>.txt. README.txt says what each shows.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "unit" / "run")]  # conftest, test_preflight

from test_preflight import (  # noqa: E402
    ACCURACY_CONFIG,
    BROKEN_METRIC,
    CONFIG,
    DATA_RETURNS_CONFIG,
    METRIC_CONFIG,
    MSE_CONFIG,
    NET_RETURNS_CONFIG,
    NETKWARG_CONFIG,
    NOT_A_CELL,
    ONE_HOT,
    SAMPLES_LIST,
    SOFT_LOSS,
    WORKERS_CONFIG,
    factory,
)

from mscodegen.run.parity import generate_both  # noqa: E402

ZEROS = "np.zeros(num, np.int32)"
KWARG_CONFIG = CONFIG.replace(
    "    factory: mydata:make_data\n    batch_size: 16\noptimizer",
    "    factory: mydata:make_data\n    kwargs: {sise: 16}\n    batch_size: 16\noptimizer",
)
CASES = {
    # case: (factory module, config, stream)
    "shape": (factory("(num, 1, 16, 16)", ZEROS), CONFIG, "stderr"),
    "chan": (factory("(num, 3, 32, 32)", ZEROS), CONFIG, "stderr"),
    "labels": (factory("(num, 1, 32, 32)", "rng.integers(0, 100, num).astype(np.int32)"), CONFIG, "stderr"),
    "cols": (
        factory(
            "(num, 1, 32, 32)",
            ZEROS,
            '{"image": images, "label": labels, "weight": np.ones(num, np.float32)}',
        ),
        CONFIG,
        "stderr",
    ),
    "imp": ("import not_installed_pkg\n" + factory("(num, 1, 32, 32)", ZEROS), CONFIG, "stderr"),
    "label_equals_classes": (factory("(num, 1, 32, 32)", "np.full(num, 10, np.int32)"), CONFIG, "stdout"),
    "evalshape": (
        factory("(num, 1, side, side)", ZEROS).replace(
            "def make_data(num=64):", "def make_data(num=64, side=32):"
        ),
        CONFIG.replace(
            "    factory: mydata:make_data\n    batch_size: 16\noptimizer",
            "    factory: mydata:make_data\n    kwargs: {side: 16}\n    batch_size: 16\noptimizer",
        ),
        "stderr",
    ),
    "empty": (factory("(num, 1, 32, 32)", ZEROS).replace("num=64", "num=8"), CONFIG, "stderr"),
    # assigned, not defined: validate does not read its signature, so the typo reaches the script
    "kwarg": (
        factory("(num, 1, 32, 32)", ZEROS).replace("def make_data(", "def _make(")
        + "\n\nmake_data = _make\n",
        KWARG_CONFIG,
        "stderr",
    ),
    # a mindcv model's misspelt keyword argument (mindcv's model signatures are not shipped)
    "netkwarg": (factory("(num, 3, 32, 32)", ZEROS), NETKWARG_CONFIG, "stderr"),
    # an imported metric that raises in update(), called by Model.fit / evaluate()
    "metric": (factory("(num, 1, 32, 32)", ZEROS) + BROKEN_METRIC, METRIC_CONFIG, "stderr"),
    # MindSpore's accuracy on float multi-label targets of an imported loss (no static rule knows its targets)
    "accuracy": (
        factory("(num, 1, 32, 32)", "rng.random((num, 10), dtype=np.float32)") + SOFT_LOSS,
        ACCURACY_CONFIG,
        "stderr",
    ),
    # more workers than CPUs: the scripts cap them (min(N, os.cpu_count())); an edited script does not
    "workers": (factory("(num, 32, 32, 1)", ZEROS), WORKERS_CONFIG, "stderr"),
    # issue 35: what was reported at <root>
    # one-hot float labels into the default loss (sparse: class indices)
    "onehot": (factory("(num, 1, 32, 32)", ONE_HOT), CONFIG, "stderr"),
    # class indices into a regression loss, which takes targets of the network output's shape
    "mse": (factory("(num, 1, 32, 32)", ZEROS), MSE_CONFIG, "stderr"),
    # a network factory that returns something else than a Cell
    "netreturns": (factory("(num, 1, 32, 32)", ZEROS) + NOT_A_CELL, NET_RETURNS_CONFIG, "stderr"),
    # a dataset factory that returns a list of samples, not a dataset
    "datareturns": (factory("(num, 1, 32, 32)", ZEROS) + SAMPLES_LIST, DATA_RETURNS_CONFIG, "stderr"),
}
# what the scripts of a case are edited to before they run
PATCHES = {"workers": ("workers = min(64, os.cpu_count())", "workers = 64")}


def capture(case: str, module: str, config: str, stream: str, root: Path) -> None:
    workdir = root / case
    workdir.mkdir()
    (workdir / "mydata.py").write_text(module)
    (workdir / "cfg.yaml").write_text(config)
    scripts = generate_both(workdir / "cfg.yaml", workdir / "out")
    for variant, script in scripts.items():
        if case in PATCHES:
            old, new = PATCHES[case]
            text = script.read_text()
            assert old in text, (case, old)
            script.write_text(text.replace(old, new))
        done = subprocess.run(
            [sys.executable, str(script), "--fast-dev-run"],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=600,
        )
        text = done.stderr if stream == "stderr" else done.stdout
        (HERE / f"{case}_{variant}.{stream}.txt").write_text(text, encoding="utf-8")
        print(f"{case}_{variant}: exit {done.returncode}, {len(text.splitlines())} lines", flush=True)


def main() -> None:
    wanted = sys.argv[1:] or list(CASES)
    with tempfile.TemporaryDirectory(prefix="preflight-texts-") as tmp:
        for case in wanted:
            capture(case, *CASES[case], Path(tmp))


if __name__ == "__main__":
    main()
