"""mscodegen/render.py's shipped precompiled templates: current, identical in output to compiling
templates/, and never used once a template differs from what they were compiled from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mscodegen import render
from mscodegen.config import load_config
from mscodegen.launch import render_launch
from mscodegen.plan import VARIANTS, build_shared, variant_plan

from conftest import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.fixture
def fresh_environment():
    render.environment.cache_clear()
    yield
    render.environment.cache_clear()


def test_shipped_compiled_templates_are_current():
    assert render.compiled_templates_current(), (
        "mscodegen/_templates_compiled/ was compiled from other templates (or another Jinja): "
        "run `make regenerate`"
    )


def _render_all(config: Path, tmp_path: Path) -> list[str]:
    loaded = load_config(config)
    shared = build_shared(
        loaded.config, source="x.yaml", config_dir=config.parent, out_dir=tmp_path, name=loaded.name
    )
    texts = [render.render(variant_plan(loaded.config, shared, v), provenance=True) for v in VARIANTS]
    return [*texts, str(render_launch(shared, "train_model.py"))]


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_compiled_templates_render_exactly_what_templates_compile_to(
    config, tmp_path, monkeypatch, fresh_environment
):
    monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
    assert type(render.environment().loader).__name__ == "ModuleLoader"
    compiled = _render_all(config, tmp_path)
    render.environment.cache_clear()
    monkeypatch.setattr(render, "compiled_templates_current", lambda: False)
    assert type(render.environment().loader).__name__ == "FileSystemLoader"
    assert _render_all(config, tmp_path) == compiled


def test_an_edited_template_is_rendered_from_source(tmp_path, monkeypatch, fresh_environment):
    monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
    templates = tmp_path / "templates"
    shutil.copytree(render.templates_dir(), templates)
    monkeypatch.setattr(render, "templates_dir", lambda: templates)
    assert render.compiled_templates_current()  # an identical copy still matches the manifest
    entry = templates / "train_native.py.j2"
    entry.write_text(entry.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    assert not render.compiled_templates_current()
    texts = _render_all(REPO / "examples" / "lenet_digits.yaml", tmp_path)
    assert texts[1].endswith("# edited by hand\n")
    assert not texts[0].endswith("# edited by hand\n")
