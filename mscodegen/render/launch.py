"""launch.sh: the msrun command line for a data-parallel config (written next to the scripts)."""

from __future__ import annotations

from mscodegen.plan import AnyShared
from mscodegen.render import environment

LAUNCH_NAME = "launch.sh"


def render_launch(shared: AnyShared, default_script: str) -> str | None:
    """The launch script's text, or None for a stand-alone config.

    `default_script` runs when no script is named on its command line.
    """
    if shared.parallel is None:
        return None
    return environment().get_template("launch.sh.j2").render(s=shared, default_script=default_script)
