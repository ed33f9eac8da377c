"""launch.sh: the msrun command line for a data-parallel config (written next to the scripts)."""

from __future__ import annotations

from . import __version__
from .config import LoadedConfig
from .render import environment

LAUNCH_NAME = "launch.sh"


def needs_launcher(loaded: LoadedConfig) -> bool:
    return loaded.config.parallel.mode == "data_parallel"


def render_launch(loaded: LoadedConfig, default_script: str) -> str:
    """The launch script's text; `default_script` runs when no script is named on its command line."""
    par = loaded.config.parallel
    return (
        environment()
        .get_template("launch.sh.j2")
        .render(
            version=__version__,
            source=loaded.path.as_posix().replace("\n", " "),
            workers=par.workers,
            master_port=par.master_port,
            cluster_time_out=par.cluster_time_out,
            default_script=default_script,
        )
    )
