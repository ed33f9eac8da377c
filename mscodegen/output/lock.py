"""The lock file of an output directory: what produced its files, and the sha256 of each pristine text.

It is the commit point of every write (output/write.py). Reading it validates every field and quotes
none of its content back: a hand-edited or truncated lock is one located line, recovery included.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mscodegen.output._files import not_utf8

LOCK_NAME = ".mscodegen-lock.json"
LOCK_FORMAT = 3  # meta.config is relative to the output directory (2: as given on the command line)
READABLE_LOCK_FORMATS = (2, 3)  # 2 differs only in meta.config
STATE_DIR = ".mscodegen"
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_META_KEYS = ("config", "config_sha256", "mscodegen_version", "black_version")


class WriteError(Exception):
    """Base class for errors raised while writing generated files; ``exit_code`` is the CLI's."""

    exit_code = 1


class LockError(WriteError):
    """The lock file exists but cannot be read: one located line, recovery included."""

    exit_code = 2

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"{path}:{problem}; mscodegen cannot tell which files it generated. Restore it from version "
            "control, or regenerate with `mscodegen new CONFIG --force` (edited files are kept as <file>.bak)"
        )


@dataclass(frozen=True)
class LockMeta:
    """What produced the generated files."""

    config: str  # relative to the output directory, so the lock reads the same from any directory
    config_sha256: str
    mscodegen_version: str
    black_version: str
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE texts the files were generated with


def sha256(text: str) -> str:
    """Hex sha256 of ``text`` encoded as UTF-8 (how pristine texts are hashed in the lock)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Lock:
    """Lock file content: producer metadata and the sha256 of each pristine text, by file name."""

    meta: LockMeta
    files: dict[str, str] = field(default_factory=dict)
    format: int = LOCK_FORMAT  # as read; written always as LOCK_FORMAT

    def config_path(self, out_dir: Path) -> Path:
        """The config the files were generated from (format 2 recorded it relative to where `new` ran)."""
        recorded = Path(self.meta.config)
        return recorded if self.format == 2 else Path(os.path.normpath(Path(out_dir) / recorded))

    def to_json(self) -> str:
        meta = asdict(self.meta)
        if not self.meta.overrides:
            del meta["overrides"]  # locks without overrides read as before
        files = {name: {"sha256": digest} for name, digest in self.files.items()}
        doc = {"format": LOCK_FORMAT, "meta": meta, "files": files}
        return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def relative_name(name: str) -> PurePosixPath:
    """``name`` as a relative path; reject names escaping the output dir or naming mscodegen's own files."""
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or ".." in rel.parts or name == LOCK_NAME or rel.parts[0] == STATE_DIR:
        raise ValueError(f"invalid generated file name {name!r}")
    return rel


def read_lock(out_dir: Path) -> Lock | None:
    """Lock stored in ``out_dir``, or None if there is none.

    Anything else raises :class:`LockError` with one located line that quotes none of its content.
    """
    path = Path(out_dir) / LOCK_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LockError(path, not_utf8(raw, exc)) from None
    except json.JSONDecodeError as exc:
        raise LockError(path, f"{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    try:
        return _lock_of(doc)
    except ValueError as exc:
        raise LockError(path, f" {exc}") from None


def _lock_of(doc: object) -> Lock:
    """The Lock a parsed lock file describes; ValueError names the first thing wrong (never a value)."""
    if not isinstance(doc, dict):
        raise ValueError("expected a JSON object")
    files, meta = doc.get("files"), doc.get("meta")
    if not isinstance(files, dict) or not isinstance(meta, dict):
        raise ValueError("'files' and 'meta' must be JSON objects")
    if doc.get("format") not in READABLE_LOCK_FORMATS:
        raise ValueError(f"'format' must be {' or '.join(map(str, READABLE_LOCK_FORMATS))}")
    hashes = _hashes_of(files)  # the files are checked first
    return Lock(_meta_of(meta), hashes, doc["format"])


def _hashes_of(files: dict[str, object]) -> dict[str, str]:
    """A lock's `files`: each name's sha256, sorted by name."""
    hashes = {}
    for name, entry in files.items():
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(digest, str) or not _SHA256_RE.match(digest):
            raise ValueError("each file needs a sha256 (64 hex digits)")
        hashes[name] = digest
    for name in hashes:
        try:
            relative_name(name)
        except ValueError:
            raise ValueError(
                "a file name leaves the output directory or names mscodegen's own files"
            ) from None
    return dict(sorted(hashes.items()))


def _meta_of(meta: dict[str, Any]) -> LockMeta:
    for key in _META_KEYS:
        if not isinstance(meta.get(key), str):
            raise ValueError(f"meta.{key} must be a string")
    if set(meta) - {*_META_KEYS, "overrides"}:
        raise ValueError(f"meta has keys other than {', '.join(_META_KEYS)}, overrides")
    overrides = meta.get("overrides", [])
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise ValueError("meta.overrides must be a list of strings")
    fields = {key: meta[key] for key in _META_KEYS}
    return LockMeta(**fields, overrides=tuple(overrides))


def same_config(lock: Lock, out_dir: Path, config: Path) -> bool:
    """Whether the lock names ``config``: the same file, or (when the recorded path does not
    resolve: the folder was moved, or a format-2 lock from another directory) the same file name."""
    recorded = lock.config_path(out_dir)
    with contextlib.suppress(OSError):
        if recorded.exists() and config.exists():
            return os.path.samefile(recorded, config)
    return recorded.name == config.name
