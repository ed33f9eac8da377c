"""Write generated files without ever losing a user's edits.

Each generated file's pristine text (what mscodegen wrote, before any edit) is kept
as a plain file under ``<out>/.mscodegen/pristine/``; the lock (:data:`LOCK_NAME`)
records the producer metadata and the sha256 of each pristine text. So
``write_new`` can refuse to clobber edits and ``update`` can 3-way merge them.

Every file is replaced atomically, and the lock is written last: it is the commit
point. A pristine file replaced before an interrupted run could write the lock no
longer matches the lock's hash, so its previous text is first copied to
``.mscodegen/previous/`` and read from there until the lock is committed (then the
copy is removed). A pristine file that is missing or matches neither raises
:class:`PristineError`: mscodegen cannot tell edits from generated code without it.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mscodegen.output._files import free_name, latest_name, not_utf8, remove_stale_temps
from mscodegen.output.lock import (
    LOCK_NAME,
    STATE_DIR,
    Lock,
    LockError,
    LockMeta,
    WriteError,
    read_lock,
    relative_name,
    sha256,
)
from mscodegen.output.merge import MergeResult, merge3, unified_diff

PRISTINE_DIR = f"{STATE_DIR}/pristine"
PREVIOUS_DIR = f"{STATE_DIR}/previous"  # pristine texts of an uncommitted write (see the docstring)
_MARKER_RE = re.compile(r"^<<<<<<< yours\r?$", re.MULTILINE)
EXECUTABLE_SUFFIXES = (".sh",)  # generated shell scripts (launch.sh) get +x wherever +r is set


class NoLockError(WriteError):
    def __init__(self, out_dir: Path) -> None:
        super().__init__(
            f"{out_dir} has no {LOCK_NAME}, so it was not written by `mscodegen new` and there is no "
            f"generated text to compare or merge with; generate it first: mscodegen new CONFIG --out {out_dir}"
        )


class UndecodableError(WriteError):
    """A generated file (or its pristine copy) holds bytes that are not UTF-8; nothing was written."""

    exit_code = 2

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(
            f"{path}:{problem}, so mscodegen cannot compare or merge it (nothing was written). Remove "
            f"the bytes, or regenerate with `mscodegen new CONFIG --force` (it keeps your file as a .bak copy)"
        )


class OtherConfigError(WriteError):
    """`update` was given another config than the one the directory was generated from."""

    exit_code = 2

    def __init__(self, out_dir: Path, recorded: str, config: Path) -> None:
        super().__init__(
            f"{out_dir} was generated from {recorded!r} (its lock says so), not from {config.as_posix()!r}; "
            "nothing was written. Generate this config elsewhere (--out DIR), replace the files with "
            f"`mscodegen new {config.as_posix()} --out {out_dir.as_posix()} --force`, or merge it anyway "
            "with `mscodegen update --force`"
        )


class PristineError(WriteError):
    """A pristine copy is missing or does not match the hash in the lock; nothing was written."""

    def __init__(self, out_dir: Path, name: str, problem: str) -> None:
        self.name = name
        path = _path(out_dir, name, PRISTINE_DIR)
        super().__init__(
            f"{path} {problem}, so mscodegen cannot tell your edits to {Path(out_dir) / name} "
            "from generated code (nothing was written). Restore it from version control "
            f"(e.g. `git checkout -- {path}`), or regenerate with `mscodegen new --force` "
            "(an edited file is then kept as <file>.bak)."
        )


class UnresolvedConflictError(WriteError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} still has conflict markers from a previous `mscodegen update` "
            f"(your version is in {latest_name(path, '.orig').name}). Resolve them, then retry."
        )


class EditedFilesError(WriteError):
    def __init__(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        names = "\n".join(f"  {p}" for p in self.paths)
        super().__init__(
            f"Refusing to overwrite {len(self.paths)} file(s) changed since "
            f"they were generated (nothing was written):\n{names}\n"
            "Use `mscodegen update` to merge your edits into the new version, "
            "or `--force` to overwrite (each edited file is kept as <name>.bak)."
        )


@dataclass
class WriteReport:
    """Outcome of :func:`write_new`: status per file and ``.bak`` names written."""

    # created | unchanged | updated (was unedited) | overwritten (edited, forced)
    statuses: dict[str, str] = field(default_factory=dict)
    backups: list[str] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)  # stale temp files of a killed write


@dataclass
class UpdateReport:
    """Outcome of :func:`update`; ``diffs`` are disk -> result per changed file."""

    # unchanged | updated | merged | conflict | created
    statuses: dict[str, str] = field(default_factory=dict)
    conflicts: list[tuple[str, int]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    originals: list[str] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)  # stale temp files of a killed write


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, no newline translation) atomically.

    Writes a temp file in the same directory, fsyncs it and ``os.replace``-s it
    over ``path``, keeping the old file's mode bits. On failure the temp file is
    removed and the old file (if any) is left as it was.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:  # new file: what open() would give under the umask
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    _replace(path, text.encode("utf-8"), mode)


def _replace(path: Path, raw: bytes, mode: int | None) -> None:
    """Write `raw` to a temp file beside `path` (with `mode`; None: mkstemp's 0600), fsync, os.replace."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _read(path: Path) -> str | None:
    """File text exactly as stored (no newline translation), or None if missing.

    Bytes that are not UTF-8 raise :class:`UndecodableError`, located.
    """
    raw = _read_bytes(path)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UndecodableError(path, not_utf8(raw, exc)) from None


def _path(out_dir: Path, name: str, folder: str = "") -> Path:
    """Where generated file ``name`` is written, or its copy under ``folder`` (PRISTINE_DIR, PREVIOUS_DIR)."""
    return Path(out_dir, folder, *relative_name(name).parts)


def _write(path: Path, text: str, *, executable: bool = True) -> None:
    """Atomically write ``text`` unless already there, creating parent dirs.

    Files named ``*.sh`` are made executable (``x`` added wherever ``r`` is set) when
    written, unless ``executable`` is false (pristine copies).
    """
    if _read_bytes(path) != text.encode("utf-8"):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        if executable and path.suffix in EXECUTABLE_SUFFIXES:
            mode = stat.S_IMODE(path.stat().st_mode)
            os.chmod(path, mode | (mode & 0o444) >> 2)


def read_pristine(out_dir: Path, lock: Lock) -> tuple[dict[str, str], dict[str, PristineError]]:
    """Pristine text of each file in ``lock`` whose copy matches its hash; the others' errors.

    The copy under ``PRISTINE_DIR`` is used, or the one under ``PREVIOUS_DIR`` left by an
    interrupted write.
    """
    texts: dict[str, str] = {}
    errors: dict[str, PristineError] = {}
    for name, digest in lock.files.items():
        current = _read_bytes(_path(out_dir, name, PRISTINE_DIR))
        previous = _read_bytes(_path(out_dir, name, PREVIOUS_DIR))
        for raw in (current, previous):
            if raw is not None and hashlib.sha256(raw).hexdigest() == digest:
                with contextlib.suppress(UnicodeDecodeError):  # a hash edited to match other bytes
                    texts[name] = raw.decode("utf-8")
                    break
        else:
            problem = "is missing" if current is None else "does not match the sha256 recorded in the lock"
            errors[name] = PristineError(out_dir, name, problem)
    return texts, errors


def _next_lock(old: Lock | None, files: dict[str, str], meta: LockMeta) -> Lock:
    """Lock after writing ``files``: entries for other files are kept."""
    kept = dict(old.files) if old else {}
    kept.update({name: sha256(text) for name, text in files.items()})
    return Lock(meta, dict(sorted(kept.items())))


def _commit(
    out_dir: Path, old: Lock | None, old_texts: dict[str, str], files: dict[str, str], meta: LockMeta
) -> None:
    """Write the pristine copies of the new lock's files, then the lock (the commit point).

    A pristine copy about to be replaced is first saved under ``PREVIOUS_DIR`` (see the module
    docstring); that directory is removed once the lock is written.
    """
    new = _next_lock(old, files, meta)
    for name in new.files:
        text = files.get(name, old_texts.get(name))
        path = _path(out_dir, name, PRISTINE_DIR)
        if text is None or _read_bytes(path) == text.encode("utf-8"):
            continue  # a kept entry whose copy is unusable stays as it is (PristineError when needed)
        before = old_texts.get(name)
        if old is not None and before is not None:
            _write(_path(out_dir, name, PREVIOUS_DIR), before, executable=False)
        _write(path, text, executable=False)
    _write(out_dir / LOCK_NAME, new.to_json())
    shutil.rmtree(out_dir / PREVIOUS_DIR, ignore_errors=True)


def write_new(out_dir: Path, files: dict[str, str], meta: LockMeta, *, force: bool = False) -> WriteReport:
    """Write freshly generated ``files``, refusing to clobber user edits.

    Every file is checked before anything is written; edited files (or existing
    files the lock does not know) raise :class:`EditedFilesError` unless
    ``force``, in which case each is first copied to ``<name>.bak`` (``.bak.1``, ...
    when that exists). A file whose pristine copy is unusable counts as edited;
    without ``force`` that raises its :class:`PristineError`. A file that is not
    UTF-8 raises :class:`UndecodableError`, and an unreadable lock :class:`LockError`,
    unless ``force``: then the file is edited and the lock is replaced (kept as a backup).
    """
    try:
        lock = read_lock(out_dir)
    except LockError:
        if not force:
            raise
        lock = None  # `new --force` is the documented recovery: start over, keeping the old lock
    pristine, broken = read_pristine(out_dir, lock) if lock else ({}, {})
    report = WriteReport()
    current: dict[str, bytes | None] = {}
    edited: list[str] = []
    for name, text in sorted(files.items()):
        raw = current[name] = _read_bytes(_path(out_dir, name))
        report.statuses[name] = _new_status(raw, text, pristine.get(name))
        if report.statuses[name] == "overwritten":
            if not force:
                _read(_path(out_dir, name))  # bytes that are not UTF-8 are named, located
            edited.append(name)
    if edited and not force:
        for name in edited:
            if name in broken:
                raise broken[name]
        raise EditedFilesError([_path(out_dir, n) for n in edited])
    report.removed = _remove_stale_temps(out_dir, lock, files)
    _write_with_backups(out_dir, files, current, report, lock_unread=lock is None)
    _commit(out_dir, lock, pristine, files, meta)
    return report


def _write_with_backups(
    out_dir: Path,
    files: dict[str, str],
    current: dict[str, bytes | None],
    report: WriteReport,
    lock_unread: bool,
) -> None:
    """Write what `new` changes; an overwritten file, and a lock that could not be read, first go to a
    free `.bak` name (`current`: the files' bytes before)."""
    lock_path = out_dir / LOCK_NAME
    if lock_unread and (raw_lock := _read_bytes(lock_path)) is not None:
        backup = free_name(lock_path, ".bak")
        _replace(backup, raw_lock, None)  # byte for byte: it may hold bytes that are not UTF-8
        report.backups.append(backup.name)
    for name, status in report.statuses.items():
        path = _path(out_dir, name)
        if status == "overwritten":
            backup = free_name(path, ".bak")
            _replace(backup, current[name] or b"", None)
            report.backups.append(backup.relative_to(out_dir).as_posix())
        if status != "unchanged":
            _write(path, files[name])


def _new_status(raw: bytes | None, text: str, pristine: str | None) -> str:
    """What `new` does to a file that holds `raw` (None: absent) to write `text`."""
    if raw is None:
        return "created"
    if raw == text.encode("utf-8"):
        return "unchanged"
    if pristine is not None and raw == pristine.encode("utf-8"):
        return "updated"
    return "overwritten"


def _remove_stale_temps(out_dir: Path, lock: Lock | None, files: dict[str, str]) -> list[Path]:
    """The temp files a killed `new`/`update` left beside the files, their pristine copies and the lock."""
    names = {*files, *(lock.files if lock else ()), LOCK_NAME}
    directories = {out_dir}
    for name in names - {LOCK_NAME}:
        directories |= {_path(out_dir, name, folder).parent for folder in ("", PRISTINE_DIR, PREVIOUS_DIR)}
    return remove_stale_temps(sorted(directories), {PurePosixPath(n).name for n in names})


def check(out_dir: Path, files: dict[str, str], meta: LockMeta) -> list[str]:
    """Names whose on-disk bytes differ from ``files`` (then the lock, then pristine copies). Reads only.

    An unreadable lock is out of date (``new --force`` replaces it).
    """
    stale = [n for n in sorted(files) if _read_bytes(_path(out_dir, n)) != files[n].encode("utf-8")]
    try:
        old = read_lock(out_dir)
    except LockError:
        old = None
    new_lock = _next_lock(old, files, meta)
    if _read_bytes(out_dir / LOCK_NAME) != new_lock.to_json().encode("utf-8"):
        stale.append(LOCK_NAME)
    for name, digest in new_lock.files.items():
        raw = _read_bytes(_path(out_dir, name, PRISTINE_DIR))
        if raw is None or hashlib.sha256(raw).hexdigest() != digest:
            stale.append(f"{PRISTINE_DIR}/{name}")
    return stale


def update(out_dir: Path, files: dict[str, str], meta: LockMeta, *, dry_run: bool = False) -> UpdateReport:
    """Three-way merge user edits (disk) with the new generation (``files``).

    Conflicting files get diff3 markers and the user's version is saved as
    ``<name>.orig``. The lock always records the new pristine text. With
    ``dry_run`` nothing is written; the report still carries the diffs. Files
    with unresolved markers from a previous run, or whose pristine copy is
    unusable (:class:`PristineError`), raise before anything is written.
    """
    lock = read_lock(out_dir)
    if lock is None:
        raise NoLockError(out_dir)
    pristine, broken = read_pristine(out_dir, lock)
    report = UpdateReport()
    writes: list[tuple[Path, str]] = []
    for name, theirs in sorted(files.items()):
        path = _path(out_dir, name)
        ours = _read(path)
        if ours is None:
            status, text = "created", theirs
        else:
            _check_mergeable(path, ours, theirs, broken.get(name))
            result = _gated(name, merge3(pristine.get(name, ""), ours, theirs), ours, theirs)
            text = result.text
            if result.conflicts:
                status = "conflict"
                report.conflicts.extend((name, line) for line in result.conflicts)
                original = free_name(path, ".orig")  # an earlier conflict's .orig is kept
                writes.append((original, ours))
                report.originals.append(original.relative_to(out_dir).as_posix())
            elif text == ours:
                status = "unchanged"
            else:
                status = "updated" if ours == pristine.get(name) else "merged"
        report.statuses[name] = status
        if text != ours:
            report.diffs[name] = unified_diff(ours or "", text, name)
            writes.append((path, text))
    if not dry_run:
        report.removed = _remove_stale_temps(out_dir, lock, files)
        for path, text in writes:
            _write(path, text)
        _commit(out_dir, lock, pristine, files, meta)
    return report


def _check_mergeable(path: Path, ours: str, theirs: str, broken: PristineError | None) -> None:
    """Raise when `update` cannot merge into `ours`: it holds unresolved markers, or its pristine copy is
    unusable (`broken`). Equal to `theirs`: nothing to merge (and the copy is repaired)."""
    if _MARKER_RE.search(ours) and ours != theirs:
        raise UnresolvedConflictError(path)
    if broken is not None and ours != theirs:
        raise broken


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
    """Unified diff (pristine -> disk) for each generated file the user changed.

    Raises :class:`PristineError` if a pristine copy is unusable.
    """
    lock = read_lock(out_dir)
    if lock is None:
        raise NoLockError(out_dir)
    pristine, broken = read_pristine(out_dir, lock)
    for error in broken.values():
        raise error
    edits = {}
    for name, text in sorted(pristine.items()):
        current = _read(_path(out_dir, name)) or ""
        if current != text:
            edits[name] = unified_diff(text, current, name)
    return edits
