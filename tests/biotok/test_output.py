"""biotok.output: the one atomic writer and its output policy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from biotok.errors import ConfigError, OutputExistsError, OutputWriteError
from biotok.output import atomic_directory, atomic_file, check_writable, is_biotok_output


def _siblings(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_directory_appears_whole_and_only_at_the_end(tmp_path):
    out = tmp_path / "out"
    with atomic_directory(out) as tmp:
        (tmp / "a.txt").write_text("a")
        assert not out.exists() and tmp.parent == tmp_path and tmp.name.startswith(".out.")
    assert (out / "a.txt").read_text() == "a" and _siblings(tmp_path) == ["out"]


def test_failure_removes_the_temp_and_keeps_the_old_output(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_directory(out, force=True) as tmp:
            (tmp / "new.txt").write_text("new")
            raise RuntimeError("boom")
    assert _siblings(out) == ["old.txt"] and _siblings(tmp_path) == ["out"]


def test_existing_output_needs_force_checked_again_at_rename(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OutputExistsError, match="--force"):
        check_writable(out, force=False)
    later = tmp_path / "later"
    with pytest.raises(OutputExistsError, match="while this run was writing"):
        with atomic_directory(later) as tmp:
            (tmp / "x").write_text("x")
            later.mkdir()  # another run wrote it meanwhile
            (later / "theirs").write_text("theirs")
    assert _siblings(later) == ["theirs"] and _siblings(tmp_path) == ["later", "out"]


def test_force_never_replaces_an_input_nor_the_current_directory(tmp_path, monkeypatch):
    corpus_dir = tmp_path / "corpus"
    corpus_dir.mkdir()
    (corpus_dir / "c.txt").write_text("text")
    with pytest.raises(OutputExistsError, match="contains the input"):
        check_writable(corpus_dir, force=True, inputs=[corpus_dir / "c.txt"])
    with pytest.raises(OutputExistsError, match="is the input"):
        with atomic_file(corpus_dir / "c.txt", force=True, inputs=[corpus_dir / "c.txt"]):
            pass
    monkeypatch.chdir(corpus_dir)
    with pytest.raises(OutputExistsError, match="current directory"):
        check_writable(tmp_path, force=True)
    assert (corpus_dir / "c.txt").read_text() == "text"


def test_marker_limits_force_to_biotok_outputs(tmp_path):
    mine, other, empty = tmp_path / "mine", tmp_path / "other", tmp_path / "empty"
    for d in (mine, other, empty):
        d.mkdir()
    (mine / "biotok.json").write_text("{}")
    (other / "thesis.tex").write_text("precious")
    assert is_biotok_output(mine, "biotok.json") and is_biotok_output(empty, "biotok.json")
    assert not is_biotok_output(other, "biotok.json")
    with pytest.raises(OutputExistsError, match="not a biotok output"):
        check_writable(other, force=True, marker="biotok.json")
    with atomic_directory(mine, force=True, marker="biotok.json") as tmp:
        (tmp / "biotok.json").write_text('{"new": 1}')
    assert (mine / "biotok.json").read_text() == '{"new": 1}'


def test_atomic_file_keeps_suffix_and_umask_permissions(tmp_path):
    out = tmp_path / "counts.tsv"
    with atomic_file(out) as tmp:
        assert tmp.suffix == ".tsv" and tmp.parent == tmp_path
        tmp.write_text("a\t1\n")
    assert out.read_text() == "a\t1\n" and _siblings(tmp_path) == ["counts.tsv"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    with pytest.raises(OutputExistsError):
        with atomic_file(out):
            pass
    with pytest.raises(ConfigError, match="does not exist"):
        with atomic_file(tmp_path / "no" / "x.png", parents=False):
            pass


def test_directory_gets_umask_permissions(tmp_path):
    with atomic_directory(tmp_path / "d") as tmp:
        (tmp / "f").write_text("x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o777 & ~mask


def test_run_lock_refuses_a_second_run_and_frees_on_exit(tmp_path):
    import subprocess
    import sys

    from biotok.output import run_lock

    out = tmp_path / "run"
    # another process holds the lock: this one is refused with one line naming the holder
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from biotok.output import run_lock\n"
        f"with run_lock({str(out)!r}):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputExistsError, match=f"in use by another probe run \\(pid {holder.pid}\\)"):
            with run_lock(out, "probe"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with run_lock(out, "probe") as lock:  # a killed holder leaves no stale lock
        assert lock.is_file()
    with run_lock(out):  # released on exit, so a rerun takes it again
        pass


def test_run_lock_changes_no_byte_of_the_folder(tmp_path):
    """The lock wrote its holder into the lock file: a ``probe --force`` stopped early changed the
    previous probe's bytes. Now the lock file is created empty and never written."""
    from biotok.output import LOCK_NAME, run_lock

    out = tmp_path / "run"
    out.mkdir()
    (out / LOCK_NAME).write_text("pid 1 on abcdef\n")  # left by an older biotok
    with run_lock(out, "probe"):
        pass
    assert (out / LOCK_NAME).read_text() == "pid 1 on abcdef\n"
    with run_lock(tmp_path / "new", "probe") as lock:
        assert lock.read_bytes() == b""


@pytest.mark.parametrize("kind", ["symlink", "dangling", "fifo", "folder"])
def test_run_lock_never_follows_a_link(tmp_path, kind):
    """A symlinked lock file was opened through the link and its target overwritten; now refused in
    one line, and the target keeps its bytes (a dangling link creates nothing; a FIFO is never opened)."""
    from biotok.output import LOCK_NAME, run_lock

    out, victim = tmp_path / "run", tmp_path / "victim.txt"
    out.mkdir()
    if kind == "symlink":
        victim.write_bytes(b"precious\n")
        (out / LOCK_NAME).symlink_to(victim)
    elif kind == "dangling":
        (out / LOCK_NAME).symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(out / LOCK_NAME)
    else:
        (out / LOCK_NAME).mkdir()
    with pytest.raises((OutputExistsError, OutputWriteError)) as e:
        with run_lock(out, "probe"):
            pass
    assert "\n" not in str(e.value) and str(out / LOCK_NAME) in str(e.value)
    if kind == "symlink":
        assert victim.read_bytes() == b"precious\n"
    elif kind == "dangling":
        assert not victim.exists()
