"""Golden tests: generated/ is exactly what examples/ generate, and generation is deterministic."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import black
import pytest

from mscodegen.cli import main
from mscodegen.output.write import LOCK_NAME
from mscodegen.render.fmt import LINE_LENGTH

from conftest import REPO

# Top-level configs only: examples/bases/ holds files that others extend, not runs of their own.
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
REGENERATE = "make regenerate   (or: mscodegen new examples/<name>.yaml --force)"
MODE = black.Mode(line_length=LINE_LENGTH)


def test_examples_found():
    assert len(EXAMPLES) >= 2, "examples/ lost its configs"


def _generated_dirs() -> list[Path]:
    return sorted(p.parent for p in (REPO / "generated").glob(f"*/{LOCK_NAME}"))


def test_every_generated_dir_has_an_example():
    names = {p.stem for p in EXAMPLES}
    orphans = [d.name for d in _generated_dirs() if d.name not in names]
    assert orphans == [], f"generated/ has directories no example produces: {orphans}"


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_generated_is_in_sync(config, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    code = main(["new", str(config.relative_to(REPO)), "--check"])
    err = capsys.readouterr().err
    assert code == 0, f"generated/{config.stem} is out of date:\n{err}\nregenerate with: {REGENERATE}"


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_golden_scripts_parse_are_black_stable_and_ruff_clean(config):
    """Every golden parses, is what black makes of it, imports no mscodegen, and passes ruff."""
    out = REPO / "generated" / config.stem
    scripts = sorted(out.glob("*.py"))
    assert {p.name for p in scripts} >= {"train_model.py", "train_native.py"}
    for script in scripts:
        text = script.read_text()
        ast.parse(text, filename=str(script))
        assert black.format_str(text, mode=MODE) == text, f"{script} is not black-stable"
        assert "mscodegen" not in {
            n.names[0].name.split(".")[0] for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Import)
        }
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    # the project's own rule set (pyproject.toml), as a user running ruff in the repository would
    result = subprocess.run([ruff, "check", "--no-cache", str(out)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_generation_is_deterministic_across_hash_seeds(tmp_path):
    outputs = []
    out = tmp_path / "out"  # the same path every time: it is printed in the scripts' headers
    # one process per seed generates every example (PYTHONHASHSEED is read when Python starts)
    script = (
        "import sys\nfrom mscodegen.cli import main\n"
        "for config, out in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    assert main(['new', config, '--out', out]) == 0, config\n"
    )
    pairs = [arg for config in EXAMPLES for arg in (str(config.relative_to(REPO)), str(out / config.stem))]
    for seed in ("0", "1", "12345"):
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-c", script, *pairs], cwd=REPO, env=env, check=True, capture_output=True
        )
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outputs[0] and outputs[0] == outputs[1] == outputs[2]


def test_scripts_never_import_mscodegen_or_mindspore_in_the_generator():
    """The CLI must not import MindSpore (or mindcv): generation stays fast."""
    code = (
        "import sys; from mscodegen.cli import main; "
        "main(['validate', 'examples/resnet.yaml']); "
        "bad = [m for m in ('mindspore', 'mindcv') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True)
