"""Helpers of the contract battery (issue 16): one error line, exit 2, nothing lost or left behind.

Shared by tests/biotok/cli/test_contract.py and tests/biotok_train/cli/test_contract.py:

- :func:`assert_contract` checks a CliRunner result: exit 2, exactly one ``PROG: error: ...`` line
  on stderr naming the given fragments (paths), nothing on stdout, no traceback;
- :func:`tree_digest` hashes a directory tree (paths, modes of folders, bytes of files), so a
  test can assert that an input or a previous output is byte-identical after a failed run;
- :class:`Mounts` makes tiny tmpfs mounts (read-only, or full) where the tests run as root,
  falls back to ``chmod`` for read-only when not root, else skips with the reason;
- :func:`leftovers` lists the temporary siblings (``.NAME.*``) a run may have left beside an output.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import traceback
from pathlib import Path

import pytest


def _exc_text(result) -> str:
    if result.exc_info is None or isinstance(result.exception, SystemExit):
        return ""
    return "".join(traceback.format_exception(*result.exc_info))


def assert_contract(result, prog: str, *fragments: object) -> str:
    """Exit 2, one ``PROG: error:`` line on stderr holding every fragment, empty stdout, no traceback."""
    detail = f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n{_exc_text(result)}"
    assert result.exit_code == 2, detail
    assert "Traceback" not in result.output, detail
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, detail
    line = lines[0]
    assert line.startswith(f"{prog}: error: "), detail
    assert not result.stdout.strip(), detail
    for frag in fragments:
        assert str(frag) in line, f"{frag!s} not named in: {line}"
    return line


def assert_proc_contract(proc: subprocess.CompletedProcess, prog: str, *fragments: object) -> str:
    """:func:`assert_contract` for a finished subprocess (stderr read from the real fd 2)."""
    detail = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 2, detail
    assert "Traceback" not in proc.stderr, detail
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, detail
    assert lines[0].startswith(f"{prog}: error: "), detail
    for frag in fragments:
        assert str(frag) in lines[0], f"{frag!s} not named in: {lines[0]}"
    return lines[0]


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of the bytes (files), 'dir' (folders), 'link:TARGET' (symlinks)."""
    root = Path(root)
    if not root.exists() and not root.is_symlink():
        return {"": "absent"}
    if root.is_file():
        return {"": hashlib.sha256(root.read_bytes()).hexdigest()}
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = f"link:{os.readlink(p)}"
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def leftovers(parent: Path, name: str) -> list[str]:
    """Hidden temporary siblings of output ``name`` in ``parent`` (``.NAME.*``)."""
    if not parent.is_dir():
        return []
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def modes(root: Path) -> dict[str, str]:
    """Octal permission bits of every file and folder under ``root`` (``root`` itself as '.')."""
    out = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = oct(stat.S_IMODE(p.stat().st_mode))
    return out


class Mounts:
    """Tiny tmpfs mounts for the fault cases; unmounted at teardown."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.mounted: list[Path] = []
        self.chmodded: list[Path] = []

    def _mount(self, name: str, size: str) -> Path | None:
        mnt = self.base / name
        mnt.mkdir(parents=True)
        if os.geteuid() != 0 or shutil.which("mount") is None:
            return None
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mnt)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.why = r.stderr.strip() or f"mount exited {r.returncode}"
            return None
        self.mounted.append(mnt)
        return mnt

    def read_only(self, name: str = "ro", populate=None) -> Path:
        """A read-only folder (tmpfs remounted ro; else chmod 0555 when not root), filled first by
        ``populate(path)``."""
        self.why = "not root"
        mnt = self._mount(name, "4m")
        if mnt is None:
            if os.geteuid() == 0:
                pytest.skip(f"cannot mount a tmpfs ({self.why}) and chmod does not stop root")
            mnt = self.base / name
            if populate:
                populate(mnt)
            for p in [mnt, *mnt.rglob("*")]:
                if p.is_dir():
                    p.chmod(0o555)
                    self.chmodded.append(p)
            return mnt
        if populate:
            populate(mnt)
        r = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot remount the tmpfs read-only: {r.stderr.strip()}")
        return mnt

    def full(self, name: str = "full", populate=None, size: str = "1m") -> Path:
        """A folder on a full disk: a small tmpfs filled by ``populate(path)``, then to the last byte."""
        self.why = "not root"
        mnt = self._mount(name, size)
        if mnt is None:
            pytest.skip(f"a full disk needs a tmpfs mount, as root ({self.why})")
        if populate:
            populate(mnt)
        with open(mnt / ".filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 65536)  # short writes until the very last byte, then ENOSPC
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
        return mnt

    def close(self) -> None:
        for p in self.chmodded:
            if p.exists():
                p.chmod(0o755)
        for mnt in reversed(self.mounted):
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def cli_cmd(prog: str) -> list[str]:
    """A command line running the real CLI in a fresh interpreter (for signals and fd-2 output)."""
    module = "biotok.cli" if prog == "biotok" else "biotok_train.cli"
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main(prog_name={prog!r}))"]
