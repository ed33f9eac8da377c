"""Render a plan with its variant's entry template (one Jinja environment, built once)."""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path

import jinja2

from mscodegen.catalog.literals import literal
from mscodegen.plan import AnyPlan
from mscodegen.plan.predict import PredictPlan
from mscodegen.plan.predict_gan import GanPredictPlan
from mscodegen.render.imports import import_groups, local_imports
from mscodegen.render.provenance import strip_markers
from mscodegen.schema.training import MAX_EPOCHS

_COMMENT_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\t"}


def _comment(value: object) -> str:
    """Text safe inside a `#` comment: one line, whatever the config said.

    Backslashes are doubled and every other unprintable character (line breaks, NUL, U+2028,
    ...; tab is kept) is written as its escape, so nothing can end the comment or the file.
    """
    return "".join(_COMMENT_ESCAPES.get(ch, ch if ch.isprintable() else repr(ch)[1:-1]) for ch in str(value))


def _docstring(value: object) -> str:
    """Text safe inside a triple-quoted docstring."""
    return _comment(value).replace('"', '\\"')


def _wrap_lines(value: object, width: int) -> list[str]:
    """A long comment as lines of at most `width` characters (each still needs the comment filter)."""
    return textwrap.wrap(str(value), width, break_long_words=False, break_on_hyphens=False) or [""]


def _docwrap(value: object, width: int, indent: int) -> str:
    """A docstring's text wrapped at `width`: one line, or lines and the closing quotes on their own."""
    lines = [_docstring(line) for line in _wrap_lines(value, width)]
    if len(lines) == 1:
        return lines[0]
    pad = "\n" + " " * indent
    return pad.join(lines) + pad


@cache
def environment() -> jinja2.Environment:
    templates = Path(__file__).parents[1] / "templates"  # a wheel ships them inside the package
    if not templates.is_dir():  # a checkout: templates/ at the repository top
        templates = Path(__file__).parents[2] / "templates"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.globals["max_epochs"] = MAX_EPOCHS  # --epochs is bounded as train.epochs is
    env.filters["py"] = literal
    env.filters["comment"] = _comment
    env.filters["docstring"] = _docstring
    env.filters["wrap_lines"] = _wrap_lines
    env.filters["docwrap"] = _docwrap
    env.filters["import_groups"] = import_groups
    env.filters["local_imports"] = local_imports
    return env


def render(plan: AnyPlan | PredictPlan | GanPredictPlan, *, provenance: bool = False) -> str:
    """The script's source before black. The templates mark what each YAML key produced with
    provenance comments (provenance.py); they are kept only for `mscodegen explain`."""
    marked = environment().get_template(plan.template).render(p=plan)
    return marked if provenance else strip_markers(marked)[0]
