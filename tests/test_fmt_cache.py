"""The black-output and Jinja bytecode caches: a hit, a miss, corrupt and unwritable entries.

A cache may only make generation faster, never change its output.
"""

from __future__ import annotations

import os
import stat

import black
import pytest

from mscodegen import _cache, fmt, render

SOURCE = "def f( a,b ):\n  return {'a':a,\n 'b':b}\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("MSCODEGEN_NO_CACHE", raising=False)
    monkeypatch.setenv("MSCODEGEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def black_calls(monkeypatch):
    calls = []
    real = fmt._black

    def counting(source, name):
        calls.append(name)
        return real(source, name)

    monkeypatch.setattr(fmt, "_black", counting)
    return calls


def _entries(cache_dir):
    return sorted((cache_dir / "black").iterdir()) if (cache_dir / "black").exists() else []


def test_miss_then_hit_gives_blacks_output(cache_dir, black_calls):
    expected = black.format_str(SOURCE, mode=black.Mode(line_length=100))
    assert fmt.format_code(SOURCE, "x.py") == expected
    assert black_calls == ["x.py"] and len(_entries(cache_dir)) == 1
    assert fmt.format_code(SOURCE, "x.py") == expected
    assert black_calls == ["x.py"], "the second call should have been served from the cache"


def test_different_input_is_a_miss(cache_dir, black_calls):
    fmt.format_code(SOURCE, "a.py")
    fmt.format_code(SOURCE + "x = 1\n", "b.py")
    assert black_calls == ["a.py", "b.py"] and len(_entries(cache_dir)) == 2


def test_corrupt_entry_is_a_miss_and_is_replaced(cache_dir, black_calls):
    expected = fmt.format_code(SOURCE, "x.py")
    (entry,) = _entries(cache_dir)
    data = bytearray(entry.read_bytes())
    data[-3] ^= 0x20  # flip one bit of the payload: the stored sha256 no longer matches
    entry.write_bytes(bytes(data))
    assert fmt.format_code(SOURCE, "x.py") == expected
    assert len(black_calls) == 2
    entry.write_bytes(b"short")
    assert fmt.format_code(SOURCE, "x.py") == expected
    assert len(black_calls) == 3


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores permissions")
def test_unwritable_cache_dir_falls_back(cache_dir, black_calls):
    cache_dir.mkdir()
    cache_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert fmt.format_code(SOURCE, "x.py") == fmt.format_code(SOURCE, "y.py")
    finally:
        cache_dir.chmod(stat.S_IRWXU)
    assert len(black_calls) == 2


def test_cache_dir_that_is_a_file_falls_back(tmp_path, monkeypatch, black_calls):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("MSCODEGEN_CACHE_DIR", str(blocker))
    monkeypatch.delenv("MSCODEGEN_NO_CACHE", raising=False)
    assert fmt.format_code(SOURCE, "x.py") == fmt.format_code(SOURCE, "y.py")
    assert len(black_calls) == 2


def test_no_cache_env_disables(tmp_path, monkeypatch, black_calls):
    monkeypatch.setenv("MSCODEGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
    fmt.format_code(SOURCE, "x.py")
    fmt.format_code(SOURCE, "x.py")
    assert len(black_calls) == 2 and not (tmp_path / "cache").exists()


def test_invalid_python_is_still_an_error(cache_dir):
    with pytest.raises(fmt.GeneratedCodeError):
        fmt.format_code("def (:\n", "bad.py")


def test_key_covers_black_version_and_mode(cache_dir, black_calls, monkeypatch):
    fmt.format_code(SOURCE, "x.py")
    real_version = fmt.black_version
    monkeypatch.setattr(fmt, "black_version", lambda: "0.0-other")
    fmt.format_code(SOURCE, "x.py")  # a different black: a miss (and, not being the imported one, not stored)
    assert len(black_calls) == 2 and len(_entries(cache_dir)) == 1
    monkeypatch.setattr(fmt, "MODE_SETTINGS", {"line_length": 88})
    monkeypatch.setattr(fmt, "black_version", real_version)
    assert fmt.format_code(SOURCE, "z.py")  # other mode settings: another miss
    assert len(black_calls) == 3
    assert _cache.key("a", "b") != _cache.key("ab", "")  # parts are length-prefixed


def test_jinja_bytecode_cache_same_output(tmp_path, monkeypatch):
    """Rendering with a cold and a warm template cache, and with none, gives the same text."""
    from pathlib import Path

    from mscodegen.config import load_config
    from mscodegen.plan import build_plan

    example = Path(__file__).resolve().parents[1] / "examples" / "lenet_digits.yaml"
    loaded = load_config(example)
    plan = build_plan(
        loaded.config, "native", source="x.yaml", config_dir=example.parent, out_dir=tmp_path, name="x"
    )
    texts = []
    monkeypatch.setattr(render, "compiled_templates_current", lambda: False)  # the cache serves templates/
    for setting in ("none", "cold", "warm"):
        monkeypatch.setenv("MSCODEGEN_CACHE_DIR", str(tmp_path / "jinja-cache"))
        if setting == "none":
            monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
        else:
            monkeypatch.delenv("MSCODEGEN_NO_CACHE", raising=False)
        render.environment.cache_clear()
        texts.append(render.render(plan))
        if setting == "cold":
            (bc_dir,) = (tmp_path / "jinja-cache").iterdir()
            entries = list(bc_dir.iterdir())
            assert entries, "no compiled template was stored"
            for entry in entries[:1]:
                entry.write_bytes(b"garbage")  # the warm run must survive a corrupt entry
    render.environment.cache_clear()
    assert texts[0] == texts[1] == texts[2]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "in-order"])
def test_format_all_matches_black_one_by_one_in_the_given_order(monkeypatch, fork, black_calls):
    monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
    monkeypatch.setattr(fmt, "_can_fork", lambda: fork)
    monkeypatch.setattr(fmt.os, "cpu_count", lambda: 2)
    sources = {f"s{i}.py": SOURCE + f"x{i} = [{i},{i}]\n" for i in range(3)}
    out = fmt.format_all(sources)
    assert list(out) == list(sources)
    # forked: this process formats the first script, a worker process the other two
    assert black_calls == (["s0.py"] if fork else list(sources))
    for name, source in sources.items():
        assert out[name] == black.format_str(source, mode=black.Mode(line_length=fmt.LINE_LENGTH))


def test_format_all_names_the_invalid_script_even_when_another_process_formats_it(monkeypatch):
    monkeypatch.setenv("MSCODEGEN_NO_CACHE", "1")
    monkeypatch.setattr(fmt, "_can_fork", lambda: True)
    monkeypatch.setattr(fmt.os, "cpu_count", lambda: 2)
    with pytest.raises(fmt.GeneratedCodeError, match=r"^b\.py: template output is not valid Python"):
        fmt.format_all({"a.py": SOURCE, "b.py": "def f(:\n"})
