"""Compose a config from its `extends:` bases and `--set KEY=VALUE` overrides.

Mappings merge key by key; lists and scalars replace. Every mark of the result carries the
file (or ``--set ...``) that wrote the value, so errors point where the value was written.
Relative `data.*.path` values written in a base are rewritten relative to the top config, so
they resolve against the file that wrote them; `package.module:name` imports are looked up next
to the top config (and on sys.path).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from mscodegen.config.errors import ConfigError, Problem, format_path
from mscodegen.config.reader import LoadedYaml, Mark, YamlPath, load_yaml_file

EXTENDS = "extends"


@dataclasses.dataclass
class Composed:
    loaded: LoadedYaml
    files: list[Path]  # every file read, bases first
    sha256: str


def compose(path: Path, overrides: Sequence[str] = ()) -> Composed:
    """The merged tree of `path`, its bases and `overrides`; raise ConfigError (located)."""
    files: list[Path] = []
    merged = _load(path, (), files)
    problems: list[Problem] = []
    for text in overrides:
        problems += _apply_set(merged, text)
    if problems:
        raise ConfigError(problems, str(path))
    _rebase_data_paths(merged, path.parent)
    digest = hashlib.sha256(path.read_bytes())
    if len(files) > 1 or overrides:  # a plain config keeps its file's hash (old locks stay valid)
        digest = hashlib.sha256()
        for file in files:
            digest.update(file.as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
        for text in overrides:
            digest.update(b"--set\0" + text.encode() + b"\0")
    return Composed(merged, files, digest.hexdigest())


def _load(path: Path, chain: tuple[Path, ...], files: list[Path]) -> LoadedYaml:
    source = str(path)
    loaded = load_yaml_file(path, strict=False)  # duplicate keys come back as problems
    loaded.problems = [dataclasses.replace(p, source=p.source or source) for p in loaded.problems]
    loaded.marks = {k: dataclasses.replace(m, source=source) for k, m in loaded.marks.items()}
    loaded.key_marks = {k: dataclasses.replace(m, source=source) for k, m in loaded.key_marks.items()}
    chain = (*chain, path.resolve())
    bases = loaded.data.pop(EXTENDS, None) if isinstance(loaded.data, dict) else None
    merged = LoadedYaml({}, {(): loaded.marks[()]}, {}, source, list(loaded.problems))
    if bases is not None:
        entries = [bases] if isinstance(bases, str) else bases
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise _error(loaded, (EXTENDS,), "expected a file name or a list of file names")
        problems: list[Problem] = []
        for i, entry in enumerate(entries):
            at = (EXTENDS,) if isinstance(bases, str) else (EXTENDS, i)
            base = path.parent / entry
            if base.resolve() in chain:
                names = " -> ".join(str(p) for p in (*chain, base.resolve()))
                problems.append(_problem(loaded, at, f"extends cycle: {names}"))
            elif not base.is_file():
                problems.append(_problem(loaded, at, f"base file not found: {base}"))
            else:
                base_loaded = _load(base, chain, files)
                merged.problems += base_loaded.problems
                _merge(merged, base_loaded, ())
        if problems:
            raise ConfigError(problems, source)
    _drop(loaded, (EXTENDS,))
    _merge(merged, loaded, ())
    files.append(path)
    return merged


def _merge(dst: LoadedYaml, src: LoadedYaml, path: YamlPath) -> None:
    """Merge `src`'s value at `path` over `dst`'s (both trees addressed from the root)."""
    old, new = _get(dst.data, path), _get(src.data, path)
    if isinstance(old, dict) and isinstance(new, dict):
        dst.marks[path] = src.marks[path]
        for key in new:
            if key not in old:
                old[key] = None
            dst.key_marks[(*path, key)] = src.key_marks[(*path, key)]
            _merge(dst, src, (*path, key))
        return
    _drop(dst, path)
    _set(dst.data, path, new)
    for table, other in ((dst.marks, src.marks), (dst.key_marks, src.key_marks)):
        table.update(
            {k: m for k, m in other.items() if k[: len(path)] == path and (table is dst.marks or k != path)}
        )
    if path in src.key_marks:
        dst.key_marks[path] = src.key_marks[path]


def _apply_set(merged: LoadedYaml, text: str) -> list[Problem]:
    """Apply one `--set KEY=VALUE` (dotted KEY, integers index lists); [] or its problem."""
    source = f"--set {text}"
    key, sep, raw = text.partition("=")
    if not sep or not key:
        return [Problem("", None, None, "expected KEY=VALUE (e.g. optimizer.lr=0.01)", source)]
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        return [Problem(key, None, None, f"cannot read value: {getattr(exc, 'problem', exc)}", source)]
    if isinstance(value, (dict, list)) or (
        value is not None and not isinstance(value, (str, int, float, bool))
    ):
        value = raw  # not a scalar: keep the text as written
    path: YamlPath = ()
    node: Any = merged.data
    parts = key.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.lstrip("-").isdigit() or not -len(node) <= int(part) < len(node):
                return [
                    Problem(
                        format_path(path),
                        None,
                        None,
                        f"no list item {part!r} (the list has {len(node)})",
                        source,
                    )
                ]
            step: str | int = int(part) % len(node)
        elif isinstance(node, dict):
            step = part
            if not last and not isinstance(node.get(part), (dict, list)):
                node[part] = {}
                merged.marks[(*path, part)] = Mark(0, 0, source)
        else:
            return [Problem(format_path(path), None, None, "is not a mapping or a list", source)]
        mark = Mark(0, 0, source)
        path = (*path, step)
        if last:
            _drop(merged, path)
            node[step] = value
            merged.marks[path] = mark
            if isinstance(step, str):
                merged.key_marks[path] = mark
        else:
            if isinstance(step, str):
                merged.key_marks.setdefault(path, mark)
            node = node[step]
    return []


def _rebase_data_paths(merged: LoadedYaml, top_dir: Path) -> None:
    data = merged.data.get("data") if isinstance(merged.data, dict) else None
    for split in ("train", "eval"):
        section = data.get(split) if isinstance(data, dict) else None
        value = section.get("path") if isinstance(section, dict) else None
        mark = merged.marks.get(("data", split, "path"))
        if (
            not isinstance(value, str)
            or mark is None
            or mark.source in (None, "default")
            or Path(value).is_absolute()
        ):
            continue
        if mark.source.startswith("--set "):
            continue
        written_in = Path(mark.source).parent
        if written_in.resolve() != top_dir.resolve() and isinstance(section, dict):
            section["path"] = Path(os.path.relpath(written_in / value, top_dir)).as_posix()


def _get(data: Any, path: YamlPath) -> Any:
    for element in path:
        data = data[element]
    return data


def _set(data: Any, path: YamlPath, value: Any) -> None:
    if path:
        _get(data, path[:-1])[path[-1]] = value


def _drop(loaded: LoadedYaml, path: YamlPath) -> None:
    """Forget the marks at and under `path`."""
    for table in (loaded.marks, loaded.key_marks):
        for k in [k for k in table if k[: len(path)] == path and (path or k)]:
            if k or path:
                del table[k]


def _problem(loaded: LoadedYaml, at: YamlPath, message: str) -> Problem:
    mark = loaded.marks.get(at) or loaded.key_marks.get(at) or Mark(0, 0, loaded.source)
    return Problem(format_path(at), mark.line, mark.column, message, mark.source)


def _error(loaded: LoadedYaml, at: YamlPath, message: str) -> ConfigError:
    return ConfigError([_problem(loaded, at, message)], loaded.source)
