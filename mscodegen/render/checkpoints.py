"""checkpoints.py: what both training scripts share of their checkpoints (written next to them)."""

from __future__ import annotations

from mscodegen.plan import AnyShared
from mscodegen.render import environment
from mscodegen.render.provenance import strip_markers


def render_checkpoints(shared: AnyShared, *, provenance: bool = False) -> str | None:
    """The module's source before black, or None for a config without callbacks.checkpoint (the
    provenance markers kept for `mscodegen explain` only)."""
    if shared.checkpoint is None:
        return None
    marked = environment().get_template("checkpoints.py.j2").render(s=shared)
    return marked if provenance else strip_markers(marked)[0]
