"""The one atomic writer: every biotok output is built in a hidden sibling and renamed into place.

The output policy, in one place for every command that writes:

- nothing is written at the target until the work succeeded: a directory is filled in a
  temporary sibling (``.NAME.<host>-<pid>.XXXX.tmp``), a file written to one, then renamed onto
  the target;
- an existing target is replaced only with ``force``, and ``force`` is checked twice: before the
  work (fail fast) and again at rename time (another run may have written it meanwhile); the
  rename itself is atomic (``renameat2`` NOREPLACE / EXCHANGE where the kernel has it), so two
  concurrent runs can never both claim the same output;
- ``force`` never replaces a target that is, or contains, one of the run's ``inputs``, nor the
  current working directory; with ``marker`` it replaces only a folder holding that file (a
  biotok output) or an empty one;
- the temporary sibling is removed on any failure or interruption (SIGTERM too: the CLI turns it
  into an exception); a run killed outright (SIGKILL, power loss) leaves its sibling, which the
  next run writing the same target removes (its name holds the host and the dead process id);
- a folder that cannot be written (read-only, full disk, no permission) is an
  :class:`~biotok.errors.OutputWriteError` naming the target, before the work where it can be
  seen then, else when the write fails;
- the result gets the permissions of the user's umask (``mkdtemp`` would leave it private).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import socket
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from biotok.errors import ConfigError, OutputExistsError, OutputWriteError

PathLike = str | os.PathLike[str]

# --- OS errors in the user's words -----------------------------------------------------------------
_ADVICE = {
    errno.EROFS: "the file system is read-only; choose an output on a writable disk",
    errno.ENOSPC: "no space left on the device; free some space or choose an output on another disk",
    errno.EDQUOT: "disk quota exceeded; free some space or choose an output elsewhere",
    errno.EACCES: "permission denied; choose an output folder you may write to",
    errno.EPERM: "operation not permitted; choose an output folder you may write to",
    errno.ENOENT: "no such file or folder (was it removed while the run used it?)",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another output",
    errno.EISDIR: "it is a folder, not a file",
    errno.EMFILE: "too many open files; raise the limit (ulimit -n)",
    errno.EIO: "input/output error; check the disk",
}
# an input's (action "read"): the advice is about the file read, never about an output
_READ_ADVICE = {
    errno.EACCES: "permission denied; make it readable (chmod) or give another path",
    errno.EPERM: "operation not permitted; make it readable or give another path",
    errno.ENOTDIR: "a file stands where a folder is needed; give the folder",
}
# either (action "read or write": an error the command did not attribute)
_EITHER_ADVICE = {
    errno.EACCES: "permission denied; check that you may read it (an input) or write there (an output)",
    errno.EPERM: "operation not permitted; check that you may read it (an input) or write there (an output)",
    errno.ENOTDIR: "a file stands where a folder is needed",
}
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)|Os \{ code: (\d+)")


def as_os_error(e: BaseException) -> OSError | None:
    """``e`` as an OSError: itself, or the one a Rust library (tokenizers, safetensors) wrapped in
    a plain exception ('No space left on device (os error 28)'); None for anything else."""
    if isinstance(e, OSError):
        return e
    if not isinstance(e, Exception):
        return None
    m = _RUST_OS_ERROR.search(str(e))
    if m is None:
        return None
    code = int(m.group(1) or m.group(2))
    return OSError(code, os.strerror(code))


def os_error_message(e: OSError, path: PathLike | None = None, action: str = "write") -> str:
    """'cannot write PATH: what happened; what to do' for an OSError (``path``: what the user named)."""
    where = path if path is not None else (e.filename if e.filename is not None else "a file")
    first = _READ_ADVICE if action == "read" else _EITHER_ADVICE if "read" in action else {}
    what = (first.get(e.errno) or _ADVICE.get(e.errno)) if e.errno is not None else None
    return f"cannot {action} {where}: {what or e.strerror or e}"


def _write_error(e: BaseException, dest: Path) -> OutputWriteError | None:
    """The OutputWriteError naming ``dest`` for a failed write of it, else None (not ours)."""
    oe = as_os_error(e)
    if oe is None or isinstance(e, OutputWriteError):
        return None
    name = oe.filename
    if name is not None:
        p = Path(os.fsdecode(name)).absolute()
        d = dest.absolute()
        ours = p in (d, d.parent) or d in p.parents or any(
            q.parent == d.parent and q.name.startswith(f".{d.name}.") for q in (p, *p.parents))
        if not ours:
            return None  # an input, or a scratch file elsewhere: the caller's error
    elif oe.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO):
        return None
    return OutputWriteError(os_error_message(oe, dest))


# --- permissions, stale temporaries --------------------------------------------------------------
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def apply_umask(path: PathLike) -> None:
    """Give ``path`` (and everything under a folder) the permissions of the user's umask: private
    files made by ``mkstemp``-style writers (safetensors, mkdtemp) become readable like any other."""
    mask = _umask()
    root = Path(path)
    items = [root, *root.rglob("*")] if root.is_dir() else [root]
    for p in items:
        if p.is_symlink():
            continue
        if p.is_dir():
            os.chmod(p, 0o777 & ~mask)
        else:
            os.chmod(p, (0o666 | (p.stat().st_mode & 0o111)) & ~mask)


_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def _prefix(dest: Path) -> str:
    return f".{dest.name}.{_HOST}-{os.getpid()}."


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs (whoever owns it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


def sweep_stale(dest: PathLike) -> list[Path]:
    """Remove the temporary siblings of ``dest`` left by runs of this host that are gone (killed
    with SIGKILL, or by a power loss); returns what was removed."""
    d = Path(dest)
    if not d.parent.is_dir():
        return []
    pattern = re.compile(rf"^\.{re.escape(d.name)}\.{_HOST}-(\d+)\.\w+\.(tmp|old)(\.|$)")
    removed = []
    try:
        entries = list(d.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or pid_alive(int(m.group(1))):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
        except OSError:
            pass
    return removed


# --- checks before the work ----------------------------------------------------------------------
def _resolved(p: PathLike) -> Path:
    """``p`` made absolute with its symlinks followed; a symlink loop is left as it is (pathlib's
    ``resolve()`` raises RuntimeError on one before Python 3.13: the read then names it)."""
    return Path(os.path.realpath(Path(p).expanduser()))


def _contains(parent: Path, child: Path) -> bool:
    return child == parent or parent in child.parents


def check_inputs(out: PathLike, inputs: Iterable[PathLike] = ()) -> None:
    """Refuse an output that is, contains, or lies inside one of ``inputs`` (a model or data folder
    the run reads is never written into; '-' for stdin is ignored). Checked with or without force."""
    dest = _resolved(out)
    for raw in inputs:
        if str(raw) == "-":
            continue
        src = _resolved(raw)
        if _contains(dest, src):
            what = "is" if dest == src else "contains"
            raise OutputExistsError(
                f"{out} {what} the input {raw}: writing there would destroy it; choose another output"
            )
        if src.is_dir() and _contains(src, dest):
            raise OutputExistsError(
                f"{out} is inside the input {raw}: writing there would change it; choose an output outside it"
            )


def check_can_create(out: PathLike) -> None:
    """Fail early when ``out`` could not be created: its nearest existing folder is a file, is on a
    read-only file system, or is not writable by this user."""
    p = Path(out).absolute()
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise OutputWriteError(os_error_message(OSError(errno.ENOTDIR, "Not a directory"), out))
    if os.access(anc, os.W_OK | os.X_OK):
        return
    try:
        read_only = bool(os.statvfs(anc).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    code = errno.EROFS if read_only else errno.EACCES
    raise OutputWriteError(os_error_message(OSError(code, os.strerror(code)), out))


def is_biotok_output(directory: PathLike, marker: str) -> bool:
    """True for an empty folder or one holding ``marker`` (the file each biotok output writes)."""
    d = Path(directory)
    return d.is_dir() and ((d / marker).is_file() or not any(d.iterdir()))


def _check_replaceable(dest: Path, force: bool, marker: str | None, *, late: bool = False) -> None:
    if not force:
        if late:
            raise OutputExistsError(
                f"{dest} was created by someone else while this run was writing; pass --force to replace it"
            )
        raise OutputExistsError(f"{dest} already exists; pass --force to replace it")
    if _contains(_resolved(dest), Path.cwd().resolve()):
        raise OutputExistsError(f"{dest} holds the current directory; --force will not replace it")
    if marker is not None and not is_biotok_output(dest, marker):
        raise OutputExistsError(
            f"{dest} is not a biotok output (no {marker} inside); --force replaces only biotok "
            "outputs: remove it yourself or choose another output"
        )


def check_writable(
    out: PathLike, force: bool, inputs: Iterable[PathLike] = (), marker: str | None = None
) -> Path:
    """Fail early (before any work) when directory ``out`` may not be written; return it as a Path."""
    p = Path(out)
    inputs = list(inputs)
    check_inputs(p, inputs)  # an input is never written, even without --force or with it
    if p.exists() or p.is_symlink():
        if not force:
            raise OutputExistsError(f"{p} already exists; pass --force to replace it")
        if not p.is_dir():
            raise OutputExistsError(f"{p} exists and is not a directory")
        _check_replaceable(p, force, marker)
    check_can_create(p)
    return p


def check_writable_file(
    out: PathLike, force: bool, inputs: Iterable[PathLike] = (), parents: bool = True
) -> Path:
    """Fail early when file ``out`` may not be written (exists without ``force``, or is a folder).

    ``parents=False``: a missing folder is an error instead of being created.
    """
    p = Path(out)
    if not parents and not _resolved(p).parent.is_dir():
        parent = _resolved(p).parent
        if parent.exists():
            raise ConfigError(f"cannot write {p}: {p.parent} is a file, not a folder")
        raise ConfigError(f"cannot write {p}: folder {p.parent} does not exist")
    if p.is_dir():
        raise OutputExistsError(f"{p} is a directory; give a file name")
    check_inputs(p, inputs)
    if p.exists() and not force:
        raise OutputExistsError(f"{p} already exists; pass --force to replace it")
    check_can_create(p)
    return p


def check_png(out: PathLike, option: str) -> Path:
    """A figure's file name: biotok draws PNG only, so a name not ending in ``.png`` (``.svg``,
    ``.xyz``, none) is refused at the door rather than failing in matplotlib or holding PNG bytes
    under another extension."""
    p = Path(out)
    if p.suffix.lower() != ".png":
        raise ConfigError(f"{option} {out}: figures are written as PNG; give a file name ending in .png")
    return p


# --- atomic renames ------------------------------------------------------------------------------
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False where the kernel, libc or file system lacks it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(dst))


def _rename_into_place(tmp: Path, dest: Path, force: bool, inputs: list, marker: str | None) -> None:
    if not (dest.exists() or dest.is_symlink()):
        try:
            if _renameat2(tmp, dest, _RENAME_NOREPLACE):
                return
            tmp.rename(dest)  # no renameat2 here: a non-empty dest still makes this fail
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            if not force:  # another run wrote it between our check and our rename
                raise OutputExistsError(
                    f"{dest} was created by someone else while this run was writing; pass --force to replace it"
                ) from None
    _check_replaceable(dest, force, marker, late=True)
    check_inputs(dest, inputs)
    if dest.is_dir() and not dest.is_symlink() and _renameat2(tmp, dest, _RENAME_EXCHANGE):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the previous output
        return
    old = Path(tempfile.mkdtemp(prefix=_prefix(dest), suffix=".old", dir=dest.parent))
    old.rmdir()
    dest.rename(old)
    try:
        tmp.rename(dest)
    except BaseException:
        old.rename(dest)  # put the previous output back
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink(missing_ok=True)


def replace_directory(src: PathLike, out: PathLike, inputs: Iterable[PathLike] = (), marker: str | None = None) -> None:
    """Put the finished folder ``src`` (a sibling of ``out``) at ``out`` in one atomic swap; the
    previous ``out`` (a biotok output holding ``marker``) is removed only then. For outputs built
    aside in a folder of their own, such as a resumable run replaced with ``--force``."""
    dest = Path(out)
    try:
        _rename_into_place(Path(src), dest, True, list(inputs), marker)
    except OSError as e:
        raise OutputWriteError(os_error_message(e, dest)) from e


@contextmanager
def atomic_directory(
    out: PathLike,
    force: bool = False,
    inputs: Iterable[PathLike] = (),
    marker: str | None = None,
) -> Iterator[Path]:
    """Yield a temporary sibling of ``out`` to fill; on success it replaces ``out`` in one rename.

    On any error the temporary directory is removed and an existing ``out`` is left untouched; an
    OS error writing it (read-only, full disk...) becomes an OutputWriteError naming ``out``.
    ``inputs``: paths the run reads (never replaced); ``marker``: see :func:`is_biotok_output`.
    """
    inputs = list(inputs)
    dest = check_writable(out, force, inputs, marker)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(dest)
        tmp = Path(tempfile.mkdtemp(prefix=_prefix(dest), suffix=".tmp", dir=dest.parent))
    except OSError as e:
        raise OutputWriteError(os_error_message(e, dest)) from e
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        apply_umask(tmp)
        _rename_into_place(tmp, dest, force, inputs, marker)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        err = _write_error(e, dest) if isinstance(e, Exception) else None
        if err is not None:
            raise err from e
        raise


@contextmanager
def atomic_file(
    out: PathLike, force: bool = False, inputs: Iterable[PathLike] = (), parents: bool = True
) -> Iterator[Path]:
    """Yield a temporary sibling path of file ``out`` (same suffix) to write; renamed onto ``out``.

    The suffix is kept so that writers choosing a format by extension still work. Without
    ``force`` the final step is a hard link, which fails if ``out`` appeared meanwhile.
    """
    inputs = list(inputs)
    dest = check_writable_file(out, force, inputs, parents)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(dest)
        fd, name = tempfile.mkstemp(prefix=_prefix(dest), suffix=f".tmp{dest.suffix}", dir=dest.parent)
        os.close(fd)
    except OSError as e:
        raise OutputWriteError(os_error_message(e, dest)) from e
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        yield tmp
        if force:
            os.replace(tmp, dest)
        else:
            _link_noreplace(tmp, dest)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        err = _write_error(e, dest) if isinstance(e, Exception) else None
        if err is not None:
            raise err from e
        raise


def _link_noreplace(tmp: Path, dest: Path) -> None:
    """Put ``tmp`` at ``dest`` unless ``dest`` exists, atomically (a hard link, then unlink)."""
    late = OutputExistsError(
        f"{dest} was created by someone else while this run was writing; pass --force to replace it"
    )
    try:
        os.link(tmp, dest)
    except FileExistsError:
        raise late from None
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if dest.exists():  # a file system without hard links: check, then rename
            raise late from None
        os.replace(tmp, dest)
        return
    tmp.unlink()


# --- one run at a time in a resumable folder -------------------------------------------------------
LOCK_NAME = ".biotok.lock"


@contextmanager
def run_lock(directory: PathLike, command: str = "biotok") -> Iterator[Path]:
    """Hold ``DIRECTORY/.biotok.lock`` for the life of a run that writes into a resumable folder
    (probe, ablate): a second run into the same folder is refused at once with one line
    (:class:`OutputExistsError`, exit 2). An advisory ``flock``: the kernel releases it when the
    holder dies, so a killed run never leaves a stale lock behind.

    The lock file is created empty and never written (taking the lock changes no byte of the
    folder: a ``probe --force`` stopped early leaves the previous probe as it was); the holder is
    named from the kernel's lock table. It is never followed through a link: a lock file that is a
    symbolic link, or not a regular file, is refused in one line."""
    import fcntl  # lazy: POSIX only, and only the resumable commands take the lock

    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputWriteError(os_error_message(e, d)) from None
    path = d / LOCK_NAME
    fd = _open_lock(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputExistsError(f"{d} is in use by another {command} run ({_lock_holder(fd)}); wait for it to "
                                    "finish or choose another --out") from None
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file ``path``, created if missing (O_EXCL), else opened without
    following a symbolic link (O_NOFOLLOW); a FIFO, a device or a folder there is refused unopened.
    (A hard link is harmless: the lock file is never written.)"""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    refuse = OutputExistsError(f"{path} is a link or not a plain file: a lock file is never followed; remove "
                               "it and run again")
    for _ in range(3):  # created by O_EXCL, or the one that exists (unless it vanished in between)
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            pass
        except OSError as e:
            raise OutputWriteError(os_error_message(e, path)) from None
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                raise refuse
            fd = os.open(path, flags)
            break
        except FileNotFoundError:
            continue
        except OSError as e:
            if e.errno == errno.ELOOP or os.path.islink(path):
                raise refuse from None
            raise OutputWriteError(os_error_message(e, path)) from None
    else:
        raise OutputWriteError(os_error_message(OSError(errno.ENOENT, "No such file"), path))
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the check and the open
        os.close(fd)
        raise refuse
    return fd


def _lock_holder(fd: int) -> str:
    """'pid N': the process holding the flock on ``fd``'s file, from the kernel's table
    (/proc/locks), else what a lock file of an older biotok says, else 'another process'."""
    st = os.fstat(fd)
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()  # '1: FLOCK  ADVISORY  WRITE 2350 fe:00:5325304 0 EOF'
                if len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == ident and parts[4].isdigit():
                    return f"pid {parts[4]}"
    except OSError:
        pass
    try:
        note = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        note = ""
    return note if note.startswith("pid ") and "\n" not in note else "another process"


def settle_staging(folder: PathLike, finished: str) -> None:
    """A hidden staging folder that a stopped run leaves beside its output (``probe --force``'s
    ``.OUT.probe-next``): removed when it holds nothing finished (no file matching the glob
    ``finished``), else kept, with one warning line naming it: the same command continues from it."""
    import logging  # lazy: one use

    d = Path(folder)
    if not d.is_dir() or d.is_symlink():
        return
    done = sum(1 for _ in d.glob(finished))
    if not done:
        shutil.rmtree(d, ignore_errors=True)
        return
    logging.getLogger(__name__).warning(
        "%s keeps %d finished run%s of the new output: the same command continues from %s (remove it to discard)",
        d, done, "s" * (done != 1), "them" if done != 1 else "it")


__all__ = [
    "LOCK_NAME",
    "apply_umask",
    "as_os_error",
    "atomic_directory",
    "atomic_file",
    "check_can_create",
    "check_inputs",
    "check_writable",
    "check_writable_file",
    "is_biotok_output",
    "os_error_message",
    "settle_staging",
    "pid_alive",
    "replace_directory",
    "run_lock",
    "sweep_stale",
]
