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

from mscodegen.config.errors import ConfigError, Problem, format_path, printable
from mscodegen.config.reader import (
    Budget,
    LoadedYaml,
    Mark,
    YamlPath,
    decode,
    file_problem,
    is_utf8,
    load_value,
    load_yaml,
    read_config_bytes,
)
from mscodegen.schema._base import path_text_problem

EXTENDS = "extends"
YAML_SUFFIXES = (".yaml", ".yml")  # a base must be one: `extends: /etc/shadow` is refused unread
MAX_EXTENDS_DEPTH = 16  # bases of bases; the examples use 1
MAX_FILES = 32  # files read for one config (a base extended twice counts twice)
MAX_SHOWN = 80  # characters of a --set or an extends entry quoted in a message


@dataclasses.dataclass
class Composed:
    loaded: LoadedYaml
    files: list[Path]  # every file read, bases first
    sha256: str


def compose(path: Path, overrides: Sequence[str] = ()) -> Composed:
    """The merged tree of `path`, its bases and `overrides`; raise ConfigError (located)."""
    read: list[tuple[Path, bytes]] = []
    merged = _load(path, (), read, Budget())
    problems: list[Problem] = []
    for text in overrides:
        problems += _apply_set(merged, text)
    if problems:
        raise ConfigError(problems, str(path))
    _rebase_data_paths(merged, path.parent)
    digest = hashlib.sha256(read[-1][1])  # the bytes parsed, not a second read
    if len(read) > 1 or overrides:  # a plain config keeps its file's hash (old locks stay valid)
        digest = hashlib.sha256()
        # As the OS gave them: a file name or an argument with bytes that are not UTF-8 (surrogate-escaped
        # by Python) hashes to those bytes instead of raising UnicodeEncodeError
        for file, raw in read:
            digest.update(os.fsencode(file.as_posix()) + b"\0" + raw + b"\0")
        for text in overrides:
            digest.update(b"--set\0" + text.encode("utf-8", "surrogateescape") + b"\0")
    return Composed(merged, [file for file, _ in read], digest.hexdigest())


def set_source(text: str) -> str:
    """How an error names the `--set KEY=VALUE` that wrote a value: on one line, at most MAX_SHOWN long."""
    return f"--set {printable(text, MAX_SHOWN)}"


def _base_problem(base: Path, entry: str, chain: tuple[Path, ...], read: int) -> str | None:
    """Why the `extends` entry naming `base` cannot be read (checked before reading it), or None."""
    shown = printable(entry, MAX_SHOWN)
    problem = path_text_problem(entry)
    if problem is not None:
        return problem
    if Path(entry).suffix.lower() not in YAML_SUFFIXES:
        return f"a base must be a YAML file (.yaml or .yml), not {shown!r}"
    try:
        resolved = base.resolve()
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError for a symlink loop
        return f"base {shown}: a symlink loop (a link that leads back to itself)"
    if resolved in chain:
        names = " -> ".join(str(p) for p in (*chain, resolved))
        return f"extends cycle: {names}"
    if len(chain) >= MAX_EXTENDS_DEPTH:
        return f"bases extend bases more than {MAX_EXTENDS_DEPTH} levels deep; flatten the chain"
    if read >= MAX_FILES:
        return f"more than {MAX_FILES} files in the extends tree; a config needs a few"
    problem = file_problem(base)
    if problem == "file not found":
        return f"base file not found: {base}"
    return f"base {base}: {problem}" if problem else None


def _load(path: Path, chain: tuple[Path, ...], read: list[tuple[Path, bytes]], budget: Budget) -> LoadedYaml:
    source = str(path)
    raw = read_config_bytes(path, budget)
    # duplicate keys come back as problems
    loaded = load_yaml(decode(raw, source), source, strict=False, budget=budget)
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
            problem = _base_problem(base, entry, chain, len(read))
            if problem is not None:
                problems.append(_problem(loaded, at, problem))
                continue
            try:
                base_loaded = _load(base, chain, read, budget)
            except ConfigError as exc:  # a limit of the whole tree: say where the base was named
                if any(p.line for p in exc.problems) or exc.source != str(base):
                    raise
                problems += [_problem(loaded, at, f"base {base}: {p.message}") for p in exc.problems]
                continue
            merged.problems += base_loaded.problems
            _merge(merged, base_loaded, ())
        if problems:
            raise ConfigError(problems, source)
    _drop(loaded, (EXTENDS,))
    _merge(merged, loaded, ())
    read.append((path, raw))
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
    """Apply one `--set KEY=VALUE` (dotted KEY, integers index lists, VALUE read as YAML); [] or its problem.

    A mapping or list VALUE (`optimizer={name: adam}`) replaces the key's value as a whole.
    """
    source = set_source(text)
    key, sep, raw = text.partition("=")

    def problem(at: YamlPath | str, message: str) -> list[Problem]:
        where = at if isinstance(at, str) else format_path(at)
        return [Problem(where, None, None, message, source)]

    if not sep or not key:
        return problem("", "expected KEY=VALUE (e.g. optimizer.lr=0.01)")
    if not is_utf8(key):
        return problem(
            printable(key, MAX_SHOWN), "the key has bytes that are not UTF-8; a config's keys are text"
        )
    try:
        value = load_value(raw, source) if raw.strip() else ""
    except ConfigError as exc:
        reason = exc.problems[0].message.removeprefix("cannot read value: ")  # the reader's own prefix
        return problem(printable(key, MAX_SHOWN), f"cannot read value: {reason}")
    path: YamlPath = ()
    node: Any = merged.data
    parts = key.split(".")
    for i in range(len(parts)):
        step = _step(merged, node, path, parts[i:], key, raw, source)
        if isinstance(step, tuple):
            return problem(*step)
        mark = Mark(0, 0, source)
        path = (*path, step)
        if i == len(parts) - 1:
            _drop(merged, path)
            node[step] = value
            _mark_all(merged, path, value, mark)
            if isinstance(step, str):
                merged.key_marks[path] = mark
        else:
            if isinstance(step, str):
                merged.key_marks.setdefault(path, mark)
            node = node[step]
    return []


def _step(
    merged: LoadedYaml, node: Any, path: YamlPath, rest: list[str], key: str, raw: str, source: str
) -> str | int | tuple[YamlPath, str]:
    """The mapping key or list index `rest[0]` names in `node` at `path` (a mapping on the way that the
    config lacks is added), or where and why it names nothing."""
    part = rest[0]
    if isinstance(node, list):
        if not _is_index(part) or not -len(node) <= int(part) < len(node):
            return path, f"no list item {printable(part, MAX_SHOWN)!r} (the list has {len(node)})"
        return int(part) % len(node)
    if not isinstance(node, dict):
        return path, "is not a mapping or a list"
    if _is_index(part) and part not in node:
        return path, f"is a mapping, not a list: it has no item {part}"
    if len(rest) > 1 and not isinstance(node.get(part), (dict, list)):
        if _is_index(rest[1]):
            return (*path, part), _absent_list(key, rest[1:], raw)
        node[part] = {}
        merged.marks[(*path, part)] = Mark(0, 0, source)
    return part


def _is_index(part: str) -> bool:
    return part.removeprefix("-").isdigit()


def _absent_list(key: str, rest: list[str], raw: str) -> str:
    """The message for an index into a list the config does not have, with the --set that makes it."""
    index, fields = rest[0], rest[1:]
    prefix = key[: len(key) - len(".".join(rest)) - 1]
    item = raw.strip() or "''"
    for name in reversed(fields):
        item = f"{{{name}: {item}}}"
    example = f"--set '{printable(prefix, MAX_SHOWN)}=[{printable(item, MAX_SHOWN)}]'"
    if int(index) not in (0, -1):
        example = f"--set '{printable(prefix, MAX_SHOWN)}=[...]' with every item"
    return (
        f"is not set, so it is not a list yet and has no item {index}: write the whole list, e.g. {example}"
    )


def _mark_all(merged: LoadedYaml, path: YamlPath, value: Any, mark: Mark) -> None:
    """Every path in and under a --set value gets the --set's mark (errors inside it point there)."""
    merged.marks[path] = mark
    if isinstance(value, dict):
        for key, sub in value.items():
            merged.key_marks[(*path, key)] = mark
            _mark_all(merged, (*path, key), sub, mark)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _mark_all(merged, (*path, i), sub, mark)


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
            del table[k]


def _problem(loaded: LoadedYaml, at: YamlPath, message: str) -> Problem:
    mark = loaded.marks.get(at) or loaded.key_marks.get(at) or Mark(0, 0, loaded.source)
    return Problem(format_path(at), mark.line, mark.column, message, mark.source)


def _error(loaded: LoadedYaml, at: YamlPath, message: str) -> ConfigError:
    return ConfigError([_problem(loaded, at, message)], loaded.source)
