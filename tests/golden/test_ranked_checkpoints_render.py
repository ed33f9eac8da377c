"""A config with callbacks.checkpoint.keep_max_by renders scripts that are black-stable and pass ruff with
the rules generated/ is held to, with one RankedCheckpoints class, the same in both, and nothing of
ModelCheckpoint."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import black
import yaml

from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.render.fmt import LINE_LENGTH

from conftest import REPO, TINY, merge

RANKED = {
    "eval": {"every_epochs": 1, "metrics": [{"name": "accuracy"}, {"name": "loss"}]},
    "callbacks": {"checkpoint": {"every_epochs": 1, "keep_max": 2, "keep_max_by": {"monitor": "accuracy"}}},
}


def test_ranked_checkpoint_scripts_are_black_stable_and_ruff_clean(tmp_path: Path) -> None:
    config = tmp_path / "ranked.yaml"
    config.write_text(yaml.safe_dump(merge(TINY, RANKED), sort_keys=False))
    out = tmp_path / "out"
    out.mkdir()
    files = generate(load_config(config), out)
    for name, text in files.items():
        (out / name).write_text(text)
        if name.endswith(".py"):
            assert black.format_str(text, mode=black.Mode(line_length=LINE_LENGTH)) == text, name
    # RankedCheckpoints is written once, in checkpoints.py, in place of checkpoint_callback; both scripts
    # import it and neither imports ModelCheckpoint's pieces
    module = ast.parse(files["checkpoints.py"]).body
    defined = {n.name for n in module if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    assert "RankedCheckpoints" in defined and "checkpoint_callback" not in defined
    for name in ("checkpoints.py", "train_model.py", "train_native.py"):
        body = ast.parse(files[name]).body
        imported = {a.name for n in body if isinstance(n, ast.ImportFrom) for a in n.names}
        assert {"CheckpointConfig", "ModelCheckpoint"}.isdisjoint(imported), name
        assert name == "checkpoints.py" or "RankedCheckpoints" in imported, name
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    # pyproject.toml's rules, with its per-file ignores of generated/** (the folder is not under it)
    checked = subprocess.run(
        [ruff, "check", "--no-cache", "--extend-ignore", "B905,ARG,C901", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
