"""Config file -> generated files: the pipeline every CLI command shares."""

from __future__ import annotations

import os
from pathlib import Path

from mscodegen import __version__
from mscodegen.config.load import LoadedConfig
from mscodegen.output.lock import LockMeta
from mscodegen.plan import SCRIPT_NAMES, VARIANTS, AnyPlan, AnyShared, Variant, build_plans
from mscodegen.plan.loop import CHECKPOINTS_NAME
from mscodegen.plan.predict import PREDICT_NAME, build_predict
from mscodegen.render import render
from mscodegen.render.checkpoints import render_checkpoints
from mscodegen.render.fmt import black_version, format_all
from mscodegen.render.launch import LAUNCH_NAME, render_launch


def default_out_dir(loaded: LoadedConfig) -> Path:
    return Path("generated") / loaded.name


def plans_of(
    loaded: LoadedConfig, out_dir: Path, variants: tuple[Variant, ...] = VARIANTS
) -> tuple[AnyShared, dict[Variant, AnyPlan]]:
    return build_plans(
        loaded.config,
        variants,
        source=loaded.path.as_posix(),
        config_dir=loaded.path.parent,
        out_dir=out_dir,
        name=loaded.name,
        config_sha256=loaded.sha256,
    )


def generate(loaded: LoadedConfig, out_dir: Path, variants: tuple[Variant, ...] = VARIANTS) -> dict[str, str]:
    """{file name: formatted text} for each requested variant, predict.py, checkpoints.py with
    callbacks.checkpoint, and launch.sh for data parallel."""
    shared, plans = plans_of(loaded, out_dir, variants)
    sources = {SCRIPT_NAMES[v]: render(plan) for v, plan in plans.items()}
    sources[PREDICT_NAME] = render(build_predict(loaded.config, shared, SCRIPT_NAMES[variants[0]]))
    checkpoints = render_checkpoints(shared)
    if checkpoints is not None:  # the scripts import it
        sources[CHECKPOINTS_NAME] = checkpoints
    files = format_all(sources)
    launch = render_launch(shared, SCRIPT_NAMES[variants[0]])
    if launch is not None:
        files[LAUNCH_NAME] = launch
    return files


def lock_meta(loaded: LoadedConfig, out_dir: Path) -> LockMeta:
    return LockMeta(
        config=Path(os.path.relpath(loaded.path.resolve(), out_dir.resolve())).as_posix(),
        config_sha256=loaded.sha256,
        mscodegen_version=__version__,
        black_version=black_version(),
        overrides=loaded.overrides,
    )
