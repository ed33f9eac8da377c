"""Compose a config from its `extends:` bases and `--set KEY=VALUE` overrides.

Mappings merge key by key; lists and scalars replace; a mapping with `_delete_: true` (MMEngine's
convention) replaces the bases' mapping instead of merging into it. Every mark of the result carries the
file (or ``--set ...``) that wrote the value, so errors point where the value was written, and a base
file's error also names the `extends` entry that brought the base in (`brought_in`).
Relative `data.*.path` values written in a base are rewritten relative to the top config, so
they resolve against the file that wrote them; `package.module:name` imports are looked up next
to the top config (and on sys.path).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterator, Sequence
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
DELETE = "_delete_"  # in a file that extends: this mapping replaces the bases' one
YAML_SUFFIXES = (".yaml", ".yml")  # a base must be one: `extends: /etc/shadow` is refused unread
MAX_EXTENDS_DEPTH = 16  # bases of bases; the examples use 1
MAX_FILES = 32  # files read for one config (a base extended twice counts twice)
MAX_SHOWN = 80  # characters of a --set or an extends entry quoted in a message


@dataclasses.dataclass
class Composed:
    loaded: LoadedYaml
    files: list[Path]  # every file read, bases first
    sha256: str
    # a base file (as marks name it) -> the mark of the `extends` entry that first read it
    brought_in: dict[str, Mark] = dataclasses.field(default_factory=dict)


def compose(path: Path, overrides: Sequence[str] = ()) -> Composed:
    """The merged tree of `path`, its bases and `overrides`; raise ConfigError (located)."""
    read: list[tuple[Path, bytes]] = []
    brought_in: dict[str, Mark] = {}
    try:
        merged = _load(path, (), read, Budget(), brought_in)
    except ConfigError as exc:
        located = [dataclasses.replace(p, source=p.source or exc.source) for p in exc.problems]
        raise ConfigError(with_origin(located, brought_in), exc.source) from None
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
    return Composed(merged, [file for file, _ in read], digest.hexdigest(), brought_in)


def with_origin(problems: Sequence[Problem], brought_in: dict[str, Mark]) -> list[Problem]:
    """`problems`, those in a base file ending with the `extends` entries that brought it in (innermost first)."""
    out = []
    for problem in problems:
        chain: list[str] = []
        source = problem.source
        while source in brought_in and len(chain) <= MAX_EXTENDS_DEPTH:  # no cycle: compose refused them
            entry = brought_in[source]
            chain.append(f"{entry.source}:{entry.line}:{entry.column}")
            source = entry.source
        if len(chain) > 2:  # a long chain: the entry in the base's own parent and the one in the config
            chain = [chain[0], "...", chain[-1]]
        if chain:
            problem = dataclasses.replace(
                problem, message=f"{problem.message} (base brought in by extends at {' <- '.join(chain)})"
            )
        out.append(problem)
    return out


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


def _load(
    path: Path,
    chain: tuple[Path, ...],
    read: list[tuple[Path, bytes]],
    budget: Budget,
    brought_in: dict[str, Mark],
) -> LoadedYaml:
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
            raise ConfigError(
                [_problem(loaded, (EXTENDS,), "expected a file name or a list of file names")], source
            )
        problems: list[Problem] = []
        for i, entry in enumerate(entries):
            at = (EXTENDS,) if isinstance(bases, str) else (EXTENDS, i)
            base = path.parent / entry
            problem = _base_problem(base, entry, chain, len(read))
            if problem is not None:
                problems.append(_problem(loaded, at, problem))
                continue
            brought_in.setdefault(str(base), loaded.marks[at])
            try:
                base_loaded = _load(base, chain, read, budget, brought_in)
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
    replaced, problems = _replacements(loaded, merged, extends=bases is not None)
    if problems:
        raise ConfigError(problems, source)
    for where in replaced:  # what the bases had there is forgotten; the merge below writes this file's
        _drop(merged, where)
        _set(merged.data, where, {})
    _merge(merged, loaded, ())
    read.append((path, raw))
    return merged


def _replacements(
    loaded: LoadedYaml, bases: LoadedYaml, *, extends: bool
) -> tuple[list[YamlPath], list[Problem]]:
    """The mappings of `loaded` marked `_delete_: true`, which replace the `bases`' mapping at their path,
    and the `_delete_` keys that mean nothing there, located at the key. Every `_delete_` is taken out."""
    replaced: list[YamlPath] = []
    problems: list[Problem] = []
    for path in list(_marked_mappings(loaded.data, ())):
        at = (*path, DELETE)
        value = _get(loaded.data, path).pop(DELETE)
        mark = loaded.key_marks[at]
        _drop(loaded, at)
        old: Any = bases.data
        for element in path:
            old = old.get(element) if isinstance(old, dict) and isinstance(element, str) else None
        if value is not True:
            why = f"takes true (this mapping replaces the base's instead of merging into it), not {printable(repr(value), MAX_SHOWN)}"
        elif not extends:
            why = "_delete_: true replaces a base's mapping, and this file extends no base"
        elif not path:
            why = "_delete_: true at the top would replace every base: remove `extends` instead"
        elif any(isinstance(element, int) for element in path):
            why = "means nothing inside a list: a list replaces the base's list whole already"
        elif not isinstance(old, dict):
            why = f"the bases have no mapping at {format_path(path)} to replace: remove _delete_"
        else:
            replaced.append(path)
            continue
        problems.append(Problem(format_path(at), mark.line, mark.column, why, mark.source))
    return replaced, problems


def _marked_mappings(data: Any, path: YamlPath) -> Iterator[YamlPath]:
    """The paths of the mappings in `data` that have a `_delete_` key, outermost first."""
    if isinstance(data, dict):
        if DELETE in data:
            yield path
        for key, value in data.items():
            yield from _marked_mappings(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _marked_mappings(value, (*path, i))


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
        table.update({k: m for k, m in other.items() if k[: len(path)] == path})


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
        value = _set_value(raw, source)
    except ConfigError as exc:
        return problem(printable(key, MAX_SHOWN), exc.problems[0].message)
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


def _set_value(raw: str, source: str) -> Any:
    """A --set's VALUE read as YAML; ConfigError (its message only) when it cannot be, or holds a `_delete_`."""
    try:
        value = load_value(raw, source) if raw.strip() else ""
    except ConfigError as exc:
        reason = exc.problems[0].message.removeprefix("cannot read value: ")  # the reader's own prefix
        raise ConfigError([Problem("", None, None, f"cannot read value: {reason}")], source) from None
    if next(_marked_mappings(value, ()), None) is not None:  # a path, () for the top: test for one
        why = f"{DELETE} means nothing in a --set value: a mapping VALUE replaces the key whole already"
        raise ConfigError([Problem("", None, None, why)], source)
    return value


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
    """A relative `data.*.path` written in a base made relative to the top config (see the module docstring)."""
    data = merged.data.get("data") if isinstance(merged.data, dict) else None
    for split in ("train", "eval"):
        section = data.get(split) if isinstance(data, dict) else None
        value = section.get("path") if isinstance(section, dict) else None
        mark = merged.marks.get(("data", split, "path"))  # every mark of the tree names its file or --set
        if not isinstance(value, str) or mark is None or mark.source is None or Path(value).is_absolute():
            continue
        written_in = Path(mark.source).parent
        if not mark.source.startswith("--set ") and written_in.resolve() != top_dir.resolve() and section:
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
