"""Load YAML into plain Python values while remembering where every node came from."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import Event
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from mscodegen.config.errors import MAX_SHOWN_KEY, ConfigError, Problem, format_path, quote_key

YamlPath = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"  # the resolved tags: _TAG + "map", "seq", "merge", "null", "int", ...
# Plain scalars YAML 1.1 (PyYAML) reads in another base, silently: `1:30` is the base-60 number 90 and
# `0123` the octal 83. Nobody writes either meaning on purpose in a config (YAML 1.2 dropped both).
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_OCTAL = re.compile(r"[-+]?0[0-7_]+")

MAX_DEPTH = 64  # nested collections; PyYAML's composer recurses, so deeper input is rejected first
MAX_NODES = 100_000  # values after expanding aliases (a "billion laughs" file stops here)
# The size of a config file (and of a config with all its bases). The examples are under 3 KB; 256 KiB
# is ~100 times that, and PyYAML's pure-Python scanner (the one whose positions and messages the
# errors quote) reads it in well under a second, so any file is accepted or rejected in under 2 s.
MAX_BYTES = 256 * 1024
# Scalars, collections and aliases in the parse (the examples have at most 200). Each costs PyYAML about
# 40 microseconds, so 10,000 bound the parse of a dense file ("[1,1,1,...") the way MAX_BYTES bounds a
# sparse one; MAX_NODES still bounds what aliases expand to.
MAX_EVENTS = 10_000
_BOMS = (  # longest first: the UTF-32-LE BOM starts with the UTF-16-LE one
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


class _TooLarge(Exception):
    """Raised inside the builder once MAX_NODES values have been built."""


@dataclass
class Budget:
    """What reading one config may still cost: shared by the config file and all its bases."""

    bytes: int = MAX_BYTES
    events: int = MAX_EVENTS


@dataclass(frozen=True)
class Mark:
    """A 1-based position in the YAML text; ``source`` names the file (or ``--set``) when composed."""

    line: int
    column: int
    source: str | None = None


@dataclass
class LoadedYaml:
    """Plain data plus the marks of its value nodes and mapping keys, by path."""

    data: Any
    marks: dict[YamlPath, Mark] = field(default_factory=dict)
    key_marks: dict[YamlPath, Mark] = field(default_factory=dict)
    source: str = "<string>"
    problems: list[Problem] = field(default_factory=list)  # non-fatal: duplicate keys, bad values

    def mark_for(self, loc: tuple[str | int, ...], *, key: bool = False) -> tuple[YamlPath, Mark]:
        """Map a pydantic error location to (matched YAML path, best mark).

        Location elements absent from the data (union tags such as ``"adam"``,
        ``"function-after[...]"`` or a missing field) are skipped. With ``key=True``
        and a final element that matched a mapping key, the key's mark is returned.
        """
        value, last_is_key = self.data, False
        path: YamlPath = ()
        for element in loc:
            if isinstance(value, dict) and isinstance(element, str) and element in value:
                value, last_is_key = value[element], True
            elif isinstance(value, list) and type(element) is int and 0 <= element < len(value):
                value, last_is_key = value[element], False
            else:
                last_is_key = False
                continue
            path += (element,)
        if key and last_is_key:
            return path, self.key_marks[path]
        return path, self.marks[path]


def load_yaml(text: str, source: str, *, strict: bool = True, budget: Budget | None = None) -> LoadedYaml:
    """Parse ``text``; raise ConfigError on syntax errors, duplicate or non-string keys.

    With ``strict=False`` the problems of a document that did parse are returned in ``problems``
    instead: duplicate keys (the first value is kept), values that cannot be read, unsupported tags,
    non-string keys (the value is None, or the key is left out), so that the caller can report them
    together with the schema's errors.
    """
    loader, root = _compose(text, source, budget or Budget())
    if root is None or (root.tag == _TAG + "null" and root.value == ""):  # "" or "---"
        return LoadedYaml({}, {(): Mark(1, 1)}, {}, source)
    if not isinstance(root, MappingNode):
        where = _mark(root)
        problem = Problem("", where.line, where.column, "the config must be a mapping of keys to values")
        raise ConfigError([problem], source)
    builder, data = _build(loader, root, source, strict=strict)
    return LoadedYaml(data, builder.marks, builder.key_marks, source, builder.problems)


def load_value(text: str, source: str) -> Any:
    """One YAML value of any kind (a `--set` VALUE), under the same limits as a config file."""
    loader, root = _compose(text, source, Budget())
    return None if root is None else _build(loader, root, source, strict=True)[1]


def _build(loader: _Replay, root: Node, source: str, *, strict: bool) -> tuple[_Builder, Any]:
    """The builder (its marks and problems) and the value of `root`; ConfigError when it is too large, or
    (`strict`) has problems."""
    builder = _Builder(loader)
    try:
        value = builder.build(root, ())
    except _TooLarge:
        raise ConfigError(builder.problems, source) from None
    if builder.problems and strict:
        raise ConfigError(builder.problems, source)
    return builder, value


def _compose(text: str, source: str, budget: Budget) -> tuple[_Replay, Node | None]:
    """The node tree of ``text`` from one bounded scan; every failure is a located ConfigError."""
    if len(text) > MAX_BYTES:  # text from a file was capped when read (budget.bytes is what remains)
        raise ConfigError([Problem("", None, None, _too_large(len(text), Budget()))], source)
    try:
        loader = _Replay(_events(text, source, budget))
        return loader, loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, source) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, source) from None
    except yaml.YAMLError as exc:
        raise ConfigError([Problem("", None, None, f"invalid YAML: {exc}")], source) from None


class _Replay(Composer, SafeConstructor, Resolver):
    """A SafeLoader that composes from events already parsed (and counted), instead of parsing again."""

    def __init__(self, events: list[Event]) -> None:
        self._events = deque(events)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def check_event(self, *choices: type[Event]) -> bool:
        return bool(self._events) and (not choices or isinstance(self._events[0], choices))

    def peek_event(self) -> Event:
        return self._events[0]

    def get_event(self) -> Event:
        return self._events.popleft()


def _events(text: str, source: str, budget: Budget) -> list[Event]:
    """The parse events of ``text``, stopped at MAX_DEPTH nested collections or the budget's events.

    The composer recurses per nesting level, so depth is checked here, on the flat event stream.
    """
    depth = 0
    events: list[Event] = []
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        events.append(event)
        message = None
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                message = f"collections are nested more than {MAX_DEPTH} levels deep"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        if len(events) > budget.events:
            message = (
                f"more than {MAX_EVENTS} values and collections"
                + (" (with its bases)" if budget.events < MAX_EVENTS else "")
                + "; a config has a few hundred"
            )
        if message is not None:
            where = event.start_mark
            line, column = (where.line + 1, where.column + 1) if where is not None else (None, None)
            raise ConfigError([Problem("", line, column, message)], source)
    budget.events -= len(events)
    return events


def read_config_bytes(path: Path, budget: Budget | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most the budget's; ConfigError otherwise.

    A directory, FIFO, socket or device is refused without reading it (a FIFO is opened
    non-blocking, so a missing writer cannot hang the command); the read stops one byte past the
    limit, so `/dev/zero` or a 50 MB file costs no more than a file at the limit.
    """
    budget = budget or Budget()
    source = str(path)

    def fail(message: str) -> ConfigError:
        return ConfigError([Problem("", None, None, message)], source)

    if not is_utf8(source):  # Python gives such bytes as surrogates, which no message or script can print
        raise fail(
            "the file name has bytes that are not UTF-8; rename the file (its name goes into the scripts)"
        )

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise fail(file_problem(path, exc)) from None
    try:
        kind = _not_a_file(os.fstat(fd).st_mode)
        if kind is not None:
            raise fail(f"{kind}, not a file; a config is a YAML file")
        with os.fdopen(os.dup(fd), "rb") as file:
            raw = file.read(budget.bytes + 1)
    except OSError as exc:
        raise fail(file_problem(path, exc)) from None
    finally:
        os.close(fd)
    if len(raw) > budget.bytes:
        raise fail(_too_large(len(raw), budget))
    budget.bytes -= len(raw)
    return raw


def is_utf8(text: str) -> bool:
    """Whether ``text`` (an argument or a file name from the OS) has no bytes that are not UTF-8: Python
    gives those as surrogates, which UTF-8 cannot encode."""
    return not any("\ud800" <= c <= "\udfff" for c in text)


def file_problem(path: Path, exc: OSError | None = None) -> str:
    """Why ``path`` cannot be read as a config file ("" when it is a readable regular file)."""
    if exc is None:
        try:
            kind = _not_a_file(os.stat(path).st_mode)
        except OSError as error:
            exc = error
        else:
            return f"{kind}, not a file; a config is a YAML file" if kind else ""
    if exc.errno == errno.ENOENT:
        return "file not found"
    if exc.errno == errno.ELOOP:
        return "a symlink loop (a link that leads back to itself)"
    if exc.errno == errno.EISDIR:
        return "a directory, not a file; a config is a YAML file"
    return f"cannot read file: {exc.strerror or exc}"


def _not_a_file(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _too_large(size: int, budget: Budget) -> str:
    limit = f"{MAX_BYTES // 1024} KiB"
    if budget.bytes < MAX_BYTES:
        return f"with the bases read before it, this config is over {limit}, the most a config may have"
    over = f"over {limit}" if size > budget.bytes else f"{size} bytes"
    return f"file is {over}; a config may have at most {limit} (the examples have under 3 KB)"


def decode(raw: bytes, source: str) -> str:
    """The text of ``raw`` by its BOM or its null bytes (UTF-8 otherwise); the first undecodable byte is located."""
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None) or _without_bom(raw)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode(encoding)  # decodes: the error is the first bad byte
        before = before.removeprefix("\ufeff")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        name = {"utf-8-sig": "UTF-8"}.get(encoding, encoding.upper())
        message = f"file is not valid {name}: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        if encoding == "utf-8":
            message += " (save the file as UTF-8)"
        raise ConfigError([Problem("", line, column, message)], source) from None


def _without_bom(raw: bytes) -> str:
    """The encoding of a file without a BOM, as YAML detects it from where the first character's null bytes
    are (a YAML file starts with an ASCII character): Windows tools save UTF-16 without a BOM too."""
    head = raw[:4]
    if len(head) == 4 and head[:3] == b"\0\0\0" and head[3]:
        return "utf-32-be"
    if len(head) == 4 and head[0] and head[1:] == b"\0\0\0":
        return "utf-32-le"
    if len(head) >= 2 and not head[0] and head[1]:
        return "utf-16-be"
    if len(head) >= 2 and head[0] and not head[1]:
        return "utf-16-le"
    return "utf-8"


def _mark(node: Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Turn a composed node tree into plain values, collecting marks and problems."""

    def __init__(self, loader: _Replay) -> None:
        self.loader = loader
        self.marks: dict[YamlPath, Mark] = {}
        self.key_marks: dict[YamlPath, Mark] = {}
        self.problems: list[Problem] = []
        self._active: set[int] = set()  # collection nodes being built, to stop alias cycles

    def problem(self, path: YamlPath, mark: Mark, message: str) -> None:
        self.problems.append(Problem(format_path(path), mark.line, mark.column, message))

    def build(self, node: Node, path: YamlPath) -> Any:
        self.marks[path] = _mark(node)
        if len(self.marks) > MAX_NODES or len(path) > MAX_DEPTH:
            limit = f"more than {MAX_NODES} values" if len(self.marks) > MAX_NODES else "too deep nesting"
            self.problem(path, _mark(node), f"aliases expand to {limit}; write the values out instead")
            raise _TooLarge
        if isinstance(node, ScalarNode):
            return self._scalar(node, path)
        if id(node) in self._active:
            self.problem(path, _mark(node), "an alias refers to a node that contains it")
            return None
        if node.tag not in (_TAG + "map", _TAG + "seq"):
            self.problem(path, _mark(node), f"unsupported YAML tag {node.tag!r}")
            return None
        self._active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            assert isinstance(node, MappingNode)  # the tag check above leaves sequences and mappings
            return self._mapping(node, path)
        finally:
            self._active.discard(id(node))

    def _scalar(self, node: ScalarNode, path: YamlPath, *, key: bool = False) -> Any:
        surrogate = _surrogate_problem(node.value)
        if surrogate is not None:
            self.problem(path, _mark(node), surrogate)
            return None
        if node.tag == _TAG + "binary" and not key:  # pydantic would decode it into a str silently
            self.problem(
                path, _mark(node), "!!binary gives bytes, which no config value takes; write the text"
            )
            return None
        base = None if key else _other_base(node)  # a key that is a number is reported as one (_key)
        if base is not None:
            value = self.loader.construct_object(node)
            text = node.value
            message = f"YAML 1.1 reads {text} as {base}, {value!r}: write '{text}' in quotes if you mean text, or {value!r}"
            if len(text) > MAX_SHOWN_KEY:  # echoed twice, with its value: say it without them
                message = f"YAML 1.1 reads this as {base}: quote it if you mean text, or write the number in decimal"
            self.problem(path, _mark(node), message)
            return None
        if node.tag == _TAG + "timestamp":
            return node.value  # keep dates as written rather than datetime objects
        try:
            return self.loader.construct_object(node)
        except (yaml.YAMLError, ValueError) as exc:
            reason = getattr(exc, "problem", None) or str(exc)
            self.problem(path, _mark(node), f"cannot read value: {reason}")
            return None

    def _mapping(self, node: MappingNode, path: YamlPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":  # `<<: *base` - explicit keys win, so merge first
                result.update(self._merged(value_node, path))
        seen: dict[str, Mark] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                continue
            key_mark = _mark(key_node)
            key = self._key(key_node, path, key_mark)
            if key is None:
                continue
            if key in seen:
                first = seen[key]
                message = f"duplicate key {quote_key(key)} (first defined at line {first.line})"
                self.problem((*path, key), key_mark, message)
                continue
            seen[key] = key_mark
            self.key_marks[(*path, key)] = key_mark
            result[key] = self.build(value_node, (*path, key))
        return result

    def _merged(self, node: Node, path: YamlPath) -> dict[str, Any]:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        result: dict[str, Any] = {}
        for source in reversed(sources):  # earlier sources take precedence
            if not isinstance(source, MappingNode) or id(source) in self._active:
                message = "'<<' must refer to a mapping or a list of mappings"
                self.problem(path, _mark(source), message)
                continue
            self._active.add(id(source))
            try:
                result.update(self._mapping(source, path))
            finally:
                self._active.discard(id(source))
        return result

    def _key(self, node: Node, path: YamlPath, mark: Mark) -> str | None:
        if isinstance(node, ScalarNode) and _surrogate_problem(node.value) is not None:
            self._scalar(node, path, key=True)  # reports it
            return None
        value = self._scalar(node, path, key=True) if isinstance(node, ScalarNode) else node
        if isinstance(value, str):
            return value
        if isinstance(node, ScalarNode):
            shown = f"{quote_key(node.value)}, which YAML reads as {quote_key(repr(value))[1:-1]}"
        else:
            shown = "a collection"
        message = f"mapping keys must be strings, got {shown}; quote it if it is text"
        self.problem(path, mark, message)
        return None


def _surrogate_problem(text: str) -> str | None:
    """A lone surrogate (`"\\ud800"`: half of a UTF-16 pair, escaped) is no character: no file name, message
    or script can hold it in UTF-8."""
    at = next((i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff"), None)
    if at is None:
        return None
    return (
        f"{text[at]!r} (at character {at + 1}) is half of a UTF-16 surrogate pair, not a character: "
        "write the character itself, or its \\U escape"
    )


def _other_base(node: ScalarNode) -> str | None:
    """The base YAML 1.1 reads a plain `1:30` (60) or `0123` (8) in, named; None for any other scalar."""
    if node.style is not None or node.tag not in (_TAG + "int", _TAG + "float"):
        return None
    if _SEXAGESIMAL.fullmatch(node.value):
        return "a base-60 (sexagesimal) number"
    if _OCTAL.fullmatch(node.value) and node.value.strip("+-0_"):  # 00 is 0 in any base
        return "an octal number"
    return None


def _syntax_error(exc: yaml.MarkedYAMLError, source: str) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    message = exc.problem or exc.context or "syntax error"
    if exc.problem and exc.context:
        where = exc.context_mark
        if where is not None and not _same_place(where, exc.problem_mark):
            message += f" ({exc.context} at {where.line + 1}:{where.column + 1})"
    if "'\\t'" in message:
        message += "; YAML does not allow tabs for indentation"
    line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
    return ConfigError([Problem("", line, column, f"invalid YAML: {message}")], source)


def _same_place(a: yaml.Mark, b: yaml.Mark | None) -> bool:
    return b is not None and (a.line, a.column) == (b.line, b.column)


def _reader_error(exc: yaml.reader.ReaderError, text: str, source: str) -> ConfigError:
    position = exc.position
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    message = f"invalid YAML: unacceptable character #x{exc.character:04x}"
    return ConfigError([Problem("", line, column, message)], source)
