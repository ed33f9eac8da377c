"""Write generated files without ever losing a user's edits.

The lock (:data:`LOCK_NAME`) stores each file's pristine generated text, so
``write_new`` can refuse to clobber edits and ``update`` can 3-way merge them.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import stat
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from mscodegen.merge import MergeResult, merge3, unified_diff

LOCK_NAME = ".mscodegen-lock.json"
LOCK_FORMAT = 1
_MARKER_RE = re.compile(r"^<<<<<<< yours\r?$", re.MULTILINE)
EXECUTABLE_SUFFIXES = (".sh",)  # generated shell scripts (launch.sh) get +x wherever +r is set


class WriteError(Exception):
    """Base class for errors raised while writing generated files."""


class NoLockError(WriteError):
    """The output directory has no lock file."""

    def __init__(self, out_dir: Path) -> None:
        super().__init__(
            f"No {LOCK_NAME} in {out_dir}: nothing to update. "
            "Run `mscodegen new` first to generate the files."
        )


class LockError(WriteError):
    """The lock file exists but cannot be read."""


class UnresolvedConflictError(WriteError):
    """A file still holds conflict markers from an earlier ``update``."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} still has conflict markers from a previous `mscodegen update` "
            f"(your version is in {path.name}.orig). Resolve them, then retry."
        )


class EditedFilesError(WriteError):
    """Files were edited since generation; nothing was written."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        names = "\n".join(f"  {p}" for p in self.paths)
        super().__init__(
            f"Refusing to overwrite {len(self.paths)} file(s) changed since "
            f"they were generated (nothing was written):\n{names}\n"
            "Use `mscodegen update` to merge your edits into the new version, "
            "or `--force` to overwrite (each edited file is kept as <name>.bak)."
        )


@dataclass(frozen=True)
class LockMeta:
    """What produced the generated files."""

    config: str
    config_sha256: str
    mscodegen_version: str
    black_version: str
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE texts the files were generated with


@dataclass
class Lock:
    """Lock file content: producer metadata and pristine text per file name."""

    meta: LockMeta
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        """Deterministic JSON: sorted keys, indent 2, trailing newline."""
        meta = asdict(self.meta)
        if not self.meta.overrides:
            del meta["overrides"]  # locks without overrides read as before
        else:
            meta["overrides"] = list(self.meta.overrides)
        doc = {"format": LOCK_FORMAT, "meta": meta, "files": self.files}
        return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@dataclass
class WriteReport:
    """Outcome of :func:`write_new`: status per file and ``.bak`` names written."""

    # created | unchanged | updated (was unedited) | overwritten (edited, forced)
    statuses: dict[str, str] = field(default_factory=dict)
    backups: list[str] = field(default_factory=list)


@dataclass
class UpdateReport:
    """Outcome of :func:`update`; ``diffs`` are disk -> result per changed file."""

    # unchanged | updated | merged | conflict | created
    statuses: dict[str, str] = field(default_factory=dict)
    conflicts: list[tuple[str, int]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    originals: list[str] = field(default_factory=list)

    @property
    def has_conflicts(self) -> bool:
        """True if any file was written with conflict markers."""
        return bool(self.conflicts)


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, no newline translation) atomically.

    Writes a temp file in the same directory, fsyncs it and ``os.replace``-s it
    over ``path``, keeping the old file's mode bits. On failure the temp file is
    removed and the old file (if any) is left as it was.
    """
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:  # new file: what open() would give under the umask
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read(path: Path) -> str | None:
    """File text exactly as stored (no newline translation), or None if missing."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None


def _target(out_dir: Path, name: str) -> Path:
    """Path of generated file ``name``; reject names escaping ``out_dir``."""
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or ".." in rel.parts or name == LOCK_NAME:
        raise ValueError(f"invalid generated file name {name!r}")
    return Path(out_dir, *rel.parts)


def _write(path: Path, text: str) -> None:
    """Atomically write ``text`` unless already there, creating parent dirs.

    Files named ``*.sh`` are made executable (``x`` added wherever ``r`` is set) when written.
    """
    if _read(path) != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        if path.suffix in EXECUTABLE_SUFFIXES:
            mode = stat.S_IMODE(path.stat().st_mode)
            os.chmod(path, mode | (mode & 0o444) >> 2)


def read_lock(out_dir: Path) -> Lock | None:
    """Lock stored in ``out_dir``, or None if there is none."""
    path = Path(out_dir) / LOCK_NAME
    text = _read(path)
    if text is None:
        return None
    try:
        doc = json.loads(text)
        if doc["format"] != LOCK_FORMAT:
            raise ValueError(f"unsupported format {doc['format']!r}")
        files = dict(doc["files"])
        if not all(isinstance(v, str) for v in files.values()):
            raise ValueError("file texts must be strings")
        meta = dict(doc["meta"])
        overrides = meta.pop("overrides", [])
        if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
            raise ValueError("meta.overrides must be a list of strings")
        return Lock(LockMeta(**meta, overrides=tuple(overrides)), files)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LockError(f"cannot read {path}: {exc!r}") from exc


def _next_lock(old: Lock | None, files: dict[str, str], meta: LockMeta) -> Lock:
    """Lock after writing ``files``: entries for other files are kept."""
    kept = dict(old.files) if old else {}
    kept.update(files)
    return Lock(meta, dict(sorted(kept.items())))


def write_new(out_dir: Path, files: dict[str, str], meta: LockMeta, *, force: bool = False) -> WriteReport:
    """Write freshly generated ``files``, refusing to clobber user edits.

    Every file is checked before anything is written; edited files (or existing
    files the lock does not know) raise :class:`EditedFilesError` unless
    ``force``, in which case each is first copied to ``<name>.bak``.
    """
    out_dir = Path(out_dir)
    lock = read_lock(out_dir)
    pristine = lock.files if lock else {}
    report = WriteReport()
    current: dict[str, str | None] = {}
    edited: list[str] = []
    for name, text in sorted(files.items()):
        cur = current[name] = _read(_target(out_dir, name))
        if cur is None:
            report.statuses[name] = "created"
        elif cur == text:
            report.statuses[name] = "unchanged"
        elif pristine.get(name) == cur:
            report.statuses[name] = "updated"
        else:
            report.statuses[name] = "overwritten"
            edited.append(name)
    if edited and not force:
        raise EditedFilesError([_target(out_dir, n) for n in edited])
    for name, status in report.statuses.items():
        path = _target(out_dir, name)
        if status == "overwritten":
            atomic_write(path.with_name(path.name + ".bak"), current[name] or "")
            report.backups.append(name + ".bak")
        if status != "unchanged":
            _write(path, files[name])
    _write(out_dir / LOCK_NAME, _next_lock(lock, files, meta).to_json())
    return report


def check(out_dir: Path, files: dict[str, str], meta: LockMeta) -> list[str]:
    """Names whose on-disk text differs from ``files`` (plus the lock). Reads only."""
    out_dir = Path(out_dir)
    stale = [n for n in sorted(files) if _read(_target(out_dir, n)) != files[n]]
    new_lock = _next_lock(read_lock(out_dir), files, meta).to_json()
    if _read(out_dir / LOCK_NAME) != new_lock:
        stale.append(LOCK_NAME)
    return stale


def update(out_dir: Path, files: dict[str, str], meta: LockMeta, *, dry_run: bool = False) -> UpdateReport:
    """Three-way merge user edits (disk) with the new generation (``files``).

    Conflicting files get diff3 markers and the user's version is saved as
    ``<name>.orig``. The lock always records the new pristine text. With
    ``dry_run`` nothing is written; the report still carries the diffs. Files
    with unresolved markers from a previous run raise before anything is written.
    """
    out_dir = Path(out_dir)
    lock = read_lock(out_dir)
    if lock is None:
        raise NoLockError(out_dir)
    report = UpdateReport()
    writes: list[tuple[Path, str]] = []
    for name, theirs in sorted(files.items()):
        path = _target(out_dir, name)
        ours = _read(path)
        if ours is None:
            status, text = "created", theirs
        elif _MARKER_RE.search(ours) and ours != theirs:
            raise UnresolvedConflictError(path)
        else:
            result = _gated(name, merge3(lock.files.get(name, ""), ours, theirs), ours, theirs)
            text = result.text
            if result.conflicts:
                status = "conflict"
                report.conflicts.extend((name, line) for line in result.conflicts)
                writes.append((path.with_name(path.name + ".orig"), ours))
                report.originals.append(name + ".orig")
            elif text == ours:
                status = "unchanged"
            else:
                status = "updated" if ours == lock.files.get(name) else "merged"
        report.statuses[name] = status
        if text != ours:
            report.diffs[name] = unified_diff(ours or "", text, name)
            writes.append((path, text))
    if not dry_run:
        for path, text in writes:
            _write(path, text)
        _write(out_dir / LOCK_NAME, _next_lock(lock, files, meta).to_json())
    return report


def _gated(name: str, result: MergeResult, ours: str, theirs: str) -> MergeResult:
    """A clean merge of a .py file that does not parse becomes a whole-file conflict, never a broken script."""
    if result.conflicts or not name.endswith(".py"):
        return result
    try:
        ast.parse(result.text)
    except (SyntaxError, ValueError):
        eol = "\n"
        text = f"<<<<<<< yours{eol}{ours}{'' if ours.endswith(eol) else eol}======={eol}{theirs}"
        text += f"{'' if theirs.endswith(eol) else eol}>>>>>>> generated (the clean merge did not parse){eol}"
        return MergeResult(text, [1])
    return result


def user_edits(out_dir: Path) -> dict[str, str]:
    """Unified diff (pristine -> disk) for each generated file the user changed."""
    out_dir = Path(out_dir)
    lock = read_lock(out_dir)
    if lock is None:
        raise NoLockError(out_dir)
    edits = {}
    for name, pristine in sorted(lock.files.items()):
        current = _read(_target(out_dir, name)) or ""
        if current != pristine:
            edits[name] = unified_diff(pristine, current, name)
    return edits
