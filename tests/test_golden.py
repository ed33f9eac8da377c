"""Golden tests: generated/ is exactly what examples/ generate, and generation is deterministic."""

from __future__ import annotations

import ast
import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import black
import pytest

from mscodegen.cli import main
from mscodegen.config import load_config
from mscodegen.fmt import MODE
from mscodegen.generate import default_out_dir
from mscodegen.plan import VARIANTS, build_shared, variant_plan
from mscodegen.render import render
from mscodegen.write import LOCK_NAME

from conftest import REPO

# Top-level configs only: examples/bases/ holds files that others extend, not runs of their own.
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
REGENERATE = "make regenerate   (or: mscodegen new examples/<name>.yaml --force)"
# Every config whose scripts are generated in the repository's workflows: the examples, the bases
# they extend and the benchmark's.
ALL_CONFIGS = [
    *EXAMPLES,
    *sorted((REPO / "examples" / "bases").glob("*.yaml")),
    *sorted((REPO / "bench" / "configs").glob("*.yaml")),
]
# Lines black may change in a script's raw render (issue 14: all the examples print none today).
BLACK_CHANGES_AT_MOST = 2


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
    result = subprocess.run(
        [ruff, "check", "--isolated", "--no-cache", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_generation_is_deterministic_across_hash_seeds(tmp_path):
    outputs = []
    out = tmp_path / "out"  # the same path every time: it is printed in the scripts' headers
    for seed in ("0", "1", "12345"):
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        for config in EXAMPLES:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mscodegen",
                    "new",
                    str(config.relative_to(REPO)),
                    "--out",
                    str(out / config.stem),
                ],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
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


@pytest.mark.parametrize("config", ALL_CONFIGS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_templates_print_what_black_prints(config):
    """issue 14: on a cold cache black is most of `mscodegen new`, and it takes twice as long on text it
    has to reformat. The templates print black's layout (fmt.py then only checks it), so black changes
    at most BLACK_CHANGES_AT_MOST lines of the text it gets: the render without provenance markers."""
    loaded = load_config(config)
    shared = build_shared(
        loaded.config,
        source=loaded.path.as_posix(),
        config_dir=loaded.path.parent,
        out_dir=default_out_dir(loaded),
        name=loaded.name,
        config_sha256=loaded.sha256,
    )
    for variant in VARIANTS:
        raw = render(variant_plan(loaded.config, shared, variant))
        formatted = black.format_str(raw, mode=MODE)
        diff = difflib.unified_diff(
            raw.splitlines(), formatted.splitlines(), "raw", "black", lineterm="", n=1
        )
        shown = list(diff)
        changed = [line for line in shown[2:] if line[:1] in "+-"]
        assert len(changed) <= BLACK_CHANGES_AT_MOST, (
            f"black changes {len(changed)} lines of {config.name}'s {variant} render; print them as black "
            "does in templates/ (static code as it is, config-dependent statements with {% filter fit %}):\n"
            + "\n".join(shown[:80])
        )
