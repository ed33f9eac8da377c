"""Output directories in states a kill, an editor or a hand left them in (issue 22): bytes that are not
UTF-8, a malformed lock, another config's directory, temp files of a killed write, a second conflict.

Each refusal is one located line, exit 2, nothing written; `new --force` (the documented recovery)
always works and keeps what it replaces.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from mscodegen.cli import main
from mscodegen.output._files import STALE_TEMP_SECONDS
from mscodegen.output.write import (
    LOCK_NAME,
    LockError,
    LockMeta,
    read_lock,
    update,
    write_new,
)

from conftest import TINY

META = LockMeta(config="a.yaml", config_sha256="ab" * 32, mscodegen_version="0", black_version="0")
V1 = "epochs = 5\n\nlr = 0.01\n"
V2 = "epochs = 8\n\nlr = 0.01\n"
SCRIPT = "train_native.py"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tiny.yaml in tmp_path (the working directory) and its native script generated into out/."""
    monkeypatch.chdir(tmp_path)
    Path("tiny.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native"]) == 0
    return tmp_path / "out"


def refused(args: list[str], capsys: pytest.CaptureFixture[str], out: Path) -> str:
    """Run a command that must refuse: exit 2, one line on stderr, nothing written."""
    capsys.readouterr()
    before = snapshot(out)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    assert snapshot(out) == before
    return err.strip()


EDITING_COMMANDS = [
    ["update", "tiny.yaml", "--out", "out", "--variant", "native"],
    ["update", "tiny.yaml", "--out", "out", "--variant", "native", "--dry-run"],
    ["diff", "out"],
    ["new", "tiny.yaml", "--out", "out", "--variant", "native"],
    ["new", "tiny.yaml", "--out", "out", "--variant", "native", "--check"],
]


@pytest.mark.parametrize("command", EDITING_COMMANDS, ids=lambda c: " ".join(c[:1] + c[5:]))
def test_a_script_that_is_not_utf8_is_located(project: Path, capsys, command: list[str]) -> None:
    script = project / SCRIPT
    script.write_bytes(script.read_bytes().replace(b"import", b"imp\xe9rt", 1))
    line = refused(command, capsys, project)
    assert line.startswith(f"error: out/{SCRIPT}:") and "byte 0xe9 is not UTF-8" in line
    assert "mscodegen new CONFIG --force" in line


@pytest.mark.usefixtures("capsys")
def test_new_force_replaces_a_script_that_is_not_utf8_and_keeps_its_bytes(project: Path) -> None:
    script = project / SCRIPT
    broken = script.read_bytes() + b"\xff\xfe"
    script.write_bytes(broken)
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native", "--force"]) == 0
    assert (project / f"{SCRIPT}.bak").read_bytes() == broken
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native", "--check"]) == 0


BAD_LOCKS = {
    "not utf-8": (b'{"format": 2, "meta": {}, "files": {}} \xff', "1:40: byte 0xff is not UTF-8"),
    "not json": (b"{secret-token", "1:2: not JSON (Expecting property name enclosed in double quotes)"),
    "a list": (b"[]", " expected a JSON object"),
    "meta a list": (b'{"format": 2, "meta": ["x"], "files": {}}', " 'files' and 'meta' must be JSON objects"),
    "config not a string": (
        b'{"format": 2, "files": {}, "meta": {"config": 1, "config_sha256": "", "mscodegen_version": "",'
        b' "black_version": ""}}',
        " meta.config must be a string",
    ),
    "foreign meta key": (
        b'{"format": 2, "files": {}, "meta": {"config": "a.yaml", "config_sha256": "", "mscodegen_version":'
        b' "", "black_version": "", "secret-token": 1}}',
        " meta has keys other than",
    ),
    "bad sha": (
        b'{"format": 2, "meta": {}, "files": {"a.py": {"sha256": "secret-token"}}}',
        " each file needs",
    ),
    "format 4": (b'{"format": 4, "meta": {}, "files": {}}', " 'format' must be 2 or 3"),
}


@pytest.mark.parametrize("case", BAD_LOCKS)
def test_a_malformed_lock_is_one_located_line_that_quotes_none_of_it(tmp_path: Path, case: str) -> None:
    raw, problem = BAD_LOCKS[case]
    (tmp_path / LOCK_NAME).write_bytes(raw)
    with pytest.raises(LockError) as info:
        read_lock(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / LOCK_NAME}:{problem}")
    assert "\n" not in message and "secret-token" not in message
    assert info.value.exit_code == 2


@pytest.mark.parametrize("command", EDITING_COMMANDS[:3] + EDITING_COMMANDS[4:], ids=lambda c: " ".join(c))
def test_commands_on_a_malformed_lock_refuse(project: Path, capsys, command: list[str]) -> None:
    (project / LOCK_NAME).write_text('{"format": 2, "meta": {"config": "/etc/shadow"}, "files": {}}')
    line = refused(command, capsys, project)
    assert line.startswith(f"error: out/{LOCK_NAME}: ") and "mscodegen new CONFIG --force" in line


@pytest.mark.usefixtures("capsys")
def test_new_force_recovers_from_a_malformed_lock_and_keeps_it(project: Path) -> None:
    (project / LOCK_NAME).write_bytes(b"\xff{broken")
    (project / SCRIPT).write_text("# my own version\n")
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native", "--force"]) == 0
    assert (project / f"{LOCK_NAME}.bak").read_bytes() == b"\xff{broken"
    assert (project / f"{SCRIPT}.bak").read_text() == "# my own version\n"
    assert read_lock(project) is not None
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native", "--check"]) == 0


def test_explain_does_not_read_a_config_an_edited_lock_names(project: Path, capsys) -> None:
    lock = json.loads((project / LOCK_NAME).read_text())
    lock["meta"]["config"] = "/etc/passwd"
    (project / LOCK_NAME).write_text(json.dumps(lock))
    assert main(["explain", f"out/{SCRIPT}:3"]) == 2
    err = capsys.readouterr().err
    assert "which is not a .yaml file" in err and "root:" not in err


def test_update_refuses_a_directory_generated_from_another_config(project: Path, capsys) -> None:
    Path("other.yaml").write_text(yaml.safe_dump({**TINY, "train": {"epochs": 3}}, sort_keys=False))
    line = refused(["update", "other.yaml", "--out", "out", "--variant", "native"], capsys, project)
    assert "generated from 'tiny.yaml'" in line and "not from 'other.yaml'" in line
    assert "mscodegen new other.yaml --out out --force" in line and "update --force" in line
    assert main(["update", "other.yaml", "--out", "out", "--variant", "native", "--force"]) == 0
    assert "EPOCHS = 3" in (project / SCRIPT).read_text()
    # the same config under another spelling, or from another working directory, is not "another"
    assert main(["update", "./other.yaml", "--out", "out", "--variant", "native"]) == 0


@pytest.mark.usefixtures("capsys")
def test_recorded_overrides_are_reused_only_for_their_own_config(project: Path) -> None:
    assert main(["new", "tiny.yaml", "--out", "out", "--variant", "native", "--set", "train.epochs=4"]) == 0
    Path("other.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    assert main(["new", "other.yaml", "--out", "out", "--variant", "native"]) == 0
    assert "EPOCHS = 2" in (project / SCRIPT).read_text()  # TINY's, not the other config's --set


def _temp(directory: Path, name: str, age: float) -> Path:
    path = directory / name
    path.write_text("half written")
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_stale_temp_files_of_a_killed_write_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    write_new(out, {"train.py": V1}, META)
    old = STALE_TEMP_SECONDS + 60
    pristine = out / ".mscodegen" / "pristine"
    stale = [
        _temp(out, ".train.py.ab_c12x9.tmp", old),
        _temp(out, f".{LOCK_NAME}.0123abcd.tmp", old),
        _temp(out, ".train.py.orig.1.zzzzzzzz.tmp", old),
        _temp(pristine, ".train.py.k3j4h5g6.tmp", old),
    ]
    kept = [
        _temp(out, ".train.py.fresh123.tmp", 5),  # a concurrent write may still be renaming it
        _temp(out, ".other.py.ab_c12x9.tmp", old),  # not a file mscodegen writes here
        _temp(out, ".train.py.ABCDEFGH.tmp", old),  # not mkstemp's alphabet
        _temp(out, ".train.py.abc.tmp", old),
        _temp(out, "train.py.ab_c12x9.tmp", old),  # no leading dot
    ]
    os.symlink(out / "train.py", out / ".train.py.linklink.tmp")
    report = update(out, {"train.py": V2}, META)
    assert sorted(report.removed) == sorted(stale)
    assert all(not p.exists() for p in stale) and all(p.exists() for p in kept)
    assert (out / ".train.py.linklink.tmp").is_symlink()
    assert update(out, {"train.py": V2}, META, dry_run=True).removed == []  # a dry run removes nothing
    _temp(out, ".train.py.ab_c12x9.tmp", old)
    assert [p.name for p in write_new(out, {"train.py": V2}, META).removed] == [".train.py.ab_c12x9.tmp"]


def test_new_and_update_report_the_temp_files_they_remove(project: Path, capsys) -> None:
    stale = _temp(project, f".{SCRIPT}.q1w2e3r4.tmp", STALE_TEMP_SECONDS + 60)
    capsys.readouterr()
    assert main(["update", "tiny.yaml", "--out", "out", "--variant", "native"]) == 0
    assert f"removed  out/{stale.name} (a temp file left by an interrupted run)" in capsys.readouterr().out
    assert not stale.exists()


def test_a_second_conflict_keeps_the_first_orig(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    write_new(out, {"train.py": V1}, META)
    (out / "train.py").write_text(V1.replace("epochs = 5", "epochs = 20"))
    assert update(out, {"train.py": V2}, META).originals == ["train.py.orig"]
    first = (out / "train.py.orig").read_bytes()
    (out / "train.py").write_text(V1.replace("epochs = 5", "epochs = 30"))  # resolved, then edited again
    report = update(out, {"train.py": V2.replace("epochs = 8", "epochs = 9")}, META)
    assert report.originals == ["train.py.orig.1"]
    assert (out / "train.py.orig").read_bytes() == first
    assert b"epochs = 30" in (out / "train.py.orig.1").read_bytes()


def test_a_second_forced_new_keeps_the_first_bak(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    write_new(out, {"train.py": V1}, META)
    (out / "train.py").write_text("# mine 1\n")
    assert write_new(out, {"train.py": V1}, META, force=True).backups == ["train.py.bak"]
    (out / "train.py").write_text("# mine 2\n")
    assert write_new(out, {"train.py": V1}, META, force=True).backups == ["train.py.bak.1"]
    assert (out / "train.py.bak").read_text() == "# mine 1\n"
    assert (out / "train.py.bak.1").read_text() == "# mine 2\n"
