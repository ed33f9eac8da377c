"""Render a plan with its variant's entry template (one Jinja environment, built once)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from .plan import Plan, literal


def templates_dir() -> Path:
    """templates/ at the repository top; a wheel ships it inside the package."""
    packaged = Path(__file__).parent / "templates"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "templates"


_COMMENT_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\t"}


def _comment(value: object) -> str:
    """Text safe inside a `#` comment: one line, whatever the config said.

    Backslashes are doubled and every other unprintable character (line breaks, NUL, U+2028,
    ...; tab is kept) is written as its escape, so nothing can end the comment or the file.
    """
    return "".join(_COMMENT_ESCAPES.get(ch, ch if ch.isprintable() else repr(ch)[1:-1]) for ch in str(value))


def _docstring(value: object) -> str:
    """Text safe inside a one-line triple-quoted docstring."""
    return _comment(value).replace('"', '\\"')


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["py"] = literal
    env.filters["comment"] = _comment
    env.filters["docstring"] = _docstring
    return env


def render(plan: Plan) -> str:
    return environment().get_template(f"train_{plan.variant}.py.j2").render(p=plan)
