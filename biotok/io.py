"""Small file helpers written once: opening a (compressed) text file, hashing files, library versions.

- :func:`open_text` -- a text handle on a plain, .gz, .xz or .bz2 file; every failure a user can
  cause becomes a one-line :class:`~biotok.errors.CorpusError` naming the file.
- :func:`not_found` -- 'file not found: P', or 'file P is a symbolic link that cannot be followed'.
- :func:`open_compressed` -- the bare opener chosen by suffix, for callers with their own errors.
- :func:`sha256_file`, :func:`sha256_files` -- hex digests of file bytes (streamed, 1 MiB blocks).
- :func:`versions` -- biotok, Python and installed library versions, for provenance and reports.
- :func:`read_json` -- a JSON file a run wrote (cache, recipe, metadata), validated: a damaged one
  is a one-line :class:`~biotok.errors.DamagedFileError` naming it (callers recompute or refuse).

The streaming corpus reader (:mod:`biotok.corpus`) detects compression by magic bytes and reads
binary blocks for speed; everything else that opens a text file goes through here.
No torch, no transformers.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import io
import json
import lzma
import os
import platform
import zlib
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, Iterable, Iterator, Sequence

from biotok._version import __version__
from biotok.errors import CorpusError, DamagedFileError

PathLike = str | os.PathLike[str]
_OPENERS: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def open_compressed(path: PathLike, newline: str | None = None) -> io.TextIOBase:
    """A UTF-8 text handle on ``path``, decompressed by suffix (.gz, .xz, .bz2); no error wrapping."""
    p = str(path)
    opener = next((o for suffix, o in _OPENERS.items() if p.endswith(suffix)), open)
    return opener(p, "rt", encoding="utf-8", newline=newline)  # type: ignore[no-any-return]


# The csv module refuses a field over 128 KiB (a long document in one TSV cell); biotok's TSVs
# (tasks, counts, terminologies) may hold one: fields up to this many characters are read.
CSV_FIELD_LIMIT = 64 << 20


def lift_csv_field_limit() -> None:
    """Raise the csv module's field limit (process-wide) to :data:`CSV_FIELD_LIMIT` once."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)


def not_found(what: str, path: PathLike) -> str:
    """'WHAT not found: PATH', or what stands there instead: a symbolic link that cannot be followed
    (a loop, or a link to nothing) is said as such, not as a missing file."""
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            return f"{what} {path} is a symbolic link that cannot be followed: {e.strerror}"
    return f"{what} not found: {path}"


@contextmanager
def open_text(path: PathLike, newline: str | None = "") -> Iterator[io.TextIOBase]:
    """A text handle on a plain, .gz, .xz or .bz2 file (by default universal newlines off, so csv
    sees raw lines). A missing file, invalid UTF-8 or a broken compressed stream met while the
    ``with`` body reads raises a one-line :class:`CorpusError` naming the file."""
    p = str(path)
    if not os.path.isfile(p):
        raise CorpusError(not_found("file", p))
    try:
        f = open_compressed(p, newline)
    except OSError as e:
        raise CorpusError(f"{p}: cannot open ({e})") from None
    lift_csv_field_limit()
    try:
        yield f
    except UnicodeDecodeError:
        raise CorpusError(f"{p}: invalid UTF-8") from None
    except csv.Error as e:
        raise CorpusError(f"{p}: {e}") from None
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, zlib.error) as e:
        raise CorpusError(f"{p}: broken compressed file ({e})") from None
    finally:
        f.close()


def sha256_files(paths: Iterable[PathLike], extra: str = "") -> str:
    """One hex digest over ``extra`` (e.g. a builder version) then the bytes of ``paths`` in order."""
    h = hashlib.sha256(extra.encode())
    for p in paths:
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def sha256_file(path: PathLike) -> str:
    """Hex sha256 of the bytes of one file."""
    return sha256_files([path])


def versions(names: Sequence[str] = ("biotok", "tokenizers", "sentencepiece", "python")) -> dict[str, str]:
    """``{name: version}`` in the order of ``names``: "biotok" (this source tree), "python", or an
    installed distribution (read from its metadata, so nothing is imported); a library that is not
    installed is left out. The default is what biotok.json records."""
    out: dict[str, str] = {}
    for name in names:
        if name == "biotok":
            out[name] = __version__
        elif name == "python":
            out[name] = platform.python_version()
        else:
            try:
                out[name] = version(name)
            except PackageNotFoundError:
                continue
    return out


def versions_sentence(names: Sequence[str]) -> str:
    """``Versions: Python 3.11.7, biotok 0.1.0, ...``: the line reports end with."""
    got = versions(names)
    return "Versions: " + ", ".join(f"{'Python' if k == 'python' else k} {v}" for k, v in got.items()) + "."


_KIND = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number",
         bool: "true or false", type(None): "null"}


def _kind(t: Any) -> str:
    types = t if isinstance(t, tuple) else (t,)
    return " or ".join(_KIND.get(x, x.__name__) for x in types)


def read_json(path: PathLike, expect: type | tuple = dict, fields: dict[str, type | tuple] | None = None,
              advice: str = "remove it and rerun") -> Any:
    """The JSON value of ``path`` (a file a biotok run wrote), checked: a value of type ``expect``,
    holding ``fields`` (name -> type) when it is an object. Anything else (truncated, not UTF-8,
    not JSON, nested too deep, another shape) is one :class:`DamagedFileError` line naming the file
    and ending with ``advice``; a missing file is a ``FileNotFoundError`` (the caller's case)."""
    p = str(path)

    def damaged(why: str) -> DamagedFileError:
        return DamagedFileError(f"{p} is damaged ({why}); {advice}", path)

    with open(p, "rb") as f:
        raw = f.read()
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise damaged("not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise damaged(f"not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise damaged("JSON nested too deeply") from None
    if not isinstance(value, expect) or (isinstance(value, bool) and bool not in _as_tuple(expect)):
        raise damaged(f"{_kind(expect)} was expected, not {_kind(type(value))}")
    for name, t in (fields or {}).items():
        got = value.get(name, _MISSING)
        if got is _MISSING or not isinstance(got, t) or (isinstance(got, bool) and bool not in _as_tuple(t)):
            raise damaged(f"no valid field {name!r}: {_kind(t)} was expected")
    return value


_MISSING = object()


def finite_json(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, inf) replaced by None: what JSON can
    hold (Python's ``json`` writes a bare ``NaN`` that no other JSON reader accepts)."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def _as_tuple(t: Any) -> tuple:
    return t if isinstance(t, tuple) else (t,)


__all__ = ["finite_json", "open_compressed", "open_text", "read_json", "sha256_file", "sha256_files", "versions", "versions_sentence"]
