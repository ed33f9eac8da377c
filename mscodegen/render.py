"""Render a plan with its variant's entry template (one Jinja environment, built once).

Compiling the templates costs ~0.1 s, most of a cold `mscodegen new` after black. So the package
ships them precompiled (`_templates_compiled/`, written by `python -m mscodegen.render`, which
`make regenerate` runs), with a manifest of what they were compiled from: the sha256 of every
template, the Jinja version and the environment's options. They are used only while the manifest
matches exactly; an edited template (or another Jinja) falls back to compiling from templates/,
through the bytecode cache in the user cache directory.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from functools import cache
from pathlib import Path

import jinja2
import jinja2.bccache

from . import _cache
from ._layout import fit
from ._literals import literal
from .plan import Plan
from .provenance import strip_markers


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


def _wrap_lines(value: object, width: int) -> list[str]:
    """A long comment as lines of at most `width` characters (each still needs the comment filter)."""
    return textwrap.wrap(str(value), width, break_long_words=False, break_on_hyphens=False) or [""]


# Every option that changes compiled template code; also part of the bytecode cache's directory name.
_OPTIONS = {"keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True, "autoescape": False}


class _BytecodeCache(jinja2.BytecodeCache):
    """Compiled templates in the user cache (compiling them costs ~0.2 s a run).

    Jinja checks each entry against its template's source checksum; _cache adds a payload sha256.
    Any problem (corrupt, unreadable, unwritable) means compiling as if there were no cache.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        payload = _cache.read(self.directory / bucket.key)
        if payload is not None:
            try:
                bucket.bytecode_from_string(payload)
            except Exception:  # noqa: BLE001  (any undecodable entry is a miss)
                bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            payload = bucket.bytecode_to_string()
        except Exception:  # noqa: BLE001
            return
        _cache.write(self.directory / bucket.key, payload)


def _bytecode_cache() -> _BytecodeCache | None:
    root = _cache.cache_root()
    if root is None:
        return None
    fingerprint = _cache.key(
        "mscodegen-jinja-v1", jinja2.__version__, sys.version, repr(sorted(_OPTIONS.items()))
    )
    return _BytecodeCache(root / f"jinja-{fingerprint[:16]}")


COMPILED_DIR = Path(__file__).parent / "_templates_compiled"
MANIFEST_NAME = "manifest.json"


def current_manifest() -> dict[str, object]:
    """What compiled templates must have been compiled from to be used now."""
    root = templates_dir()
    return {
        "jinja2": jinja2.__version__,
        "options": sorted(_OPTIONS.items()),
        "templates": {
            path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*.j2"))
        },
    }


def compiled_templates_current() -> bool:
    try:
        stored = json.loads((COMPILED_DIR / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(stored == json.loads(json.dumps(current_manifest())))


@cache
def environment(*, precompiled: bool = True) -> jinja2.Environment:
    use_compiled = precompiled and compiled_templates_current()
    loader: jinja2.BaseLoader = (
        jinja2.ModuleLoader(COMPILED_DIR) if use_compiled else jinja2.FileSystemLoader(templates_dir())
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=None if use_compiled else _bytecode_cache(),
        keep_trailing_newline=_OPTIONS["keep_trailing_newline"],
        trim_blocks=_OPTIONS["trim_blocks"],
        lstrip_blocks=_OPTIONS["lstrip_blocks"],
        autoescape=_OPTIONS["autoescape"],
    )
    env.filters["py"] = literal
    env.filters["comment"] = _comment
    env.filters["docstring"] = _docstring
    env.filters["wrap_lines"] = _wrap_lines
    env.filters["fit"] = fit  # {% filter fit %}: long statements split as black splits them
    return env


def render(plan: Plan, *, provenance: bool = False) -> str:
    """The script's source before black. The templates mark what each YAML key produced with
    provenance comments (provenance.py); they are kept only for `mscodegen explain`."""
    marked = environment().get_template(f"train_{plan.variant}.py.j2").render(p=plan)
    return marked if provenance else strip_markers(marked)[0]


def write_compiled() -> int:
    """Compile every template into COMPILED_DIR (one module each, as jinja2.ModuleLoader names
    them) and write the manifest; remove modules of templates that no longer exist."""
    env = environment(precompiled=False)
    COMPILED_DIR.mkdir(exist_ok=True)
    manifest = current_manifest()
    templates = manifest["templates"]
    assert isinstance(templates, dict)
    wanted = set()
    for name in templates:
        source, _, _ = env.loader.get_source(env, name)  # type: ignore[union-attr]
        code = env.compile(source, name, f"templates/{name}", raw=True, defer_init=True)
        module = jinja2.ModuleLoader.get_module_filename(name)
        wanted.add(module)
        header = f"# Generated by `python -m mscodegen.render` from templates/{name}: do not edit.\n"
        (COMPILED_DIR / module).write_text(header + code, encoding="utf-8")
    for stale in COMPILED_DIR.glob("tmpl_*.py"):
        if stale.name not in wanted:
            stale.unlink()
    (COMPILED_DIR / "__init__.py").write_text(
        '"""Precompiled templates (see mscodegen/render.py); written by `python -m mscodegen.render`."""\n',
        encoding="utf-8",
    )
    (COMPILED_DIR / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return len(wanted)


if __name__ == "__main__":
    print(f"compiled {write_compiled()} templates into {COMPILED_DIR}")
