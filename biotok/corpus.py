"""The only place biotok opens a corpus: streaming lines from text, gz/xz/bz2, jsonl, dirs, stdin.

Every failure a user can cause (missing file, binary data, broken compression, invalid UTF-8,
bad JSON) becomes a :class:`~biotok.errors.CorpusError` naming the file and line. Memory per
line is bounded: a line longer than :data:`MAX_LINE_BYTES` is read in pieces cut at whitespace.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from biotok.errors import CorpusError
from biotok.io import not_found, sha256_file

STDIN = "-"
_MAGIC = {
    b"\x1f\x8b": "gz",
    b"\xfd7zXZ\x00": "xz",
    b"BZh": "bz2",
}
_OPENERS: dict[str, Callable[[BinaryIO], BinaryIO]] = {
    "gz": lambda f: gzip.GzipFile(fileobj=f),  # type: ignore[dict-item]
    "xz": lambda f: lzma.LZMAFile(f),  # type: ignore[dict-item]
    "bz2": lambda f: bz2.BZ2File(f),  # type: ignore[dict-item]
}
_JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
_COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2")


@dataclass(frozen=True)
class CorpusFile:
    """One input: a path (or '-' for stdin) and whether its lines are JSON objects."""

    path: str
    jsonl: bool

    @property
    def name(self) -> str:
        return "<stdin>" if self.path == STDIN else self.path


@dataclass
class CorpusStats:
    """Counts gathered while streaming: lines kept, characters, whitespace words."""

    lines: int = 0
    characters: int = 0
    words: int = 0
    files: list[dict] = field(default_factory=list)
    split_lines: int = 0  # lines longer than MAX_LINE_BYTES, read in pieces

    def as_dict(self) -> dict:
        return {
            "lines": self.lines,
            "words": self.words,
            "characters": self.characters,
            "split_lines": self.split_lines,
            "files": self.files,
        }


def _is_jsonl(path: str) -> bool:
    stem = path
    for suf in _COMPRESSED_SUFFIXES:
        if stem.endswith(suf):
            stem = stem[: -len(suf)]
    return stem.endswith(_JSON_SUFFIXES)


def corpus_names(paths: Iterable[str | os.PathLike[str] | CorpusFile]) -> str:
    """The inputs an error is about, as the user gave them: the first three, then how many more
    ('-' is '<stdin>')."""
    names = [p.name if isinstance(p, CorpusFile) else CorpusFile(str(p), False).name for p in paths]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def resolve(paths: Iterable[str | os.PathLike[str]]) -> list[CorpusFile]:
    """Expand directories (recursively, sorted, hidden files skipped) into corpus files."""
    out: list[CorpusFile] = []
    for raw in paths:
        p = str(raw)
        if p == STDIN:
            out.append(CorpusFile(STDIN, False))
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(
                f
                for f in path.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
            )
            if not found:
                raise CorpusError(f"corpus directory {p} contains no files")
            out.extend(CorpusFile(str(f), _is_jsonl(str(f))) for f in found)
        elif path.is_file():
            out.append(CorpusFile(p, _is_jsonl(p)))
        elif path.exists():
            raise CorpusError(f"corpus path {p} is not a regular file or directory")
        else:
            raise CorpusError(not_found("corpus file", p))
    if not out:
        raise CorpusError("no corpus given")
    return out


def _open_binary(cf: CorpusFile) -> BinaryIO:
    if cf.path == STDIN:
        raw: BinaryIO = sys.stdin.buffer
    else:
        try:
            raw = open(cf.path, "rb")  # noqa: SIM115 - closed by the caller
        except OSError as e:
            raise CorpusError(f"cannot open corpus file {cf.path}: {e.strerror}") from e
    buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw)  # type: ignore[arg-type]
    kind = compression(buffered.peek(6)[:6])  # type: ignore[attr-defined]
    return _OPENERS[kind](buffered) if kind else buffered  # type: ignore[return-value]


def compression(head: bytes) -> str | None:
    """"gz", "xz" or "bz2" when a file starting with ``head`` (6 bytes) is compressed, else None."""
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


# A line longer than this is cut at whitespace into pieces of at most this many bytes (or at a
# character boundary inside a longer "word"), so that memory per line stays bounded whatever
# the corpus: one 50 MB line is 50 pieces. JSON lines are parsed whole, then their text is cut
# alike (in characters). Cut lines are counted (``CorpusStats.split_lines``, biotok.json).
MAX_LINE_BYTES = 1 << 20
# A JSON line is parsed whole (a cut would split the JSON, not the text): up to this many bytes;
# its text field is then cut like a long raw line. A longer record is refused, naming its line.
MAX_RECORD_BYTES = 64 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")


def piece_limit(jsonl: bool, field_name: str | None = None) -> int:
    """The ``limit`` of :func:`line_pieces` for a file: JSON lines are read whole (up to
    :data:`MAX_RECORD_BYTES`), text lines are cut at :data:`MAX_LINE_BYTES`."""
    return MAX_RECORD_BYTES if jsonl or field_name is not None else MAX_LINE_BYTES
_WHITESPACE = (b" ", b"\t", b"\r", b"\x0b", b"\x0c")


class LineError(CorpusError):
    """A bad line, with its line number; the reader adds the file name to the message."""

    def __init__(self, lineno: int, detail: str) -> None:
        super().__init__(lineno, detail)
        self.lineno = lineno
        self.detail = detail

    def __str__(self) -> str:
        return f"line {self.lineno}: {self.detail}"


def _cut(chunk: bytes) -> int:
    """Where to cut a too-long chunk: after its last whitespace, else before an incomplete character."""
    ws = max(chunk.rfind(w) for w in _WHITESPACE)
    if ws >= 0:
        return ws + 1
    i = len(chunk) - 1
    while i > 0 and 0x80 <= chunk[i] < 0xC0:  # back to the first byte of the last character
        i -= 1
    lead = chunk[i]
    size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return len(chunk) if len(chunk) - i >= size or i == 0 else i


def line_pieces(f: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes, int]]:
    """``(line number, bytes, offset in the line)`` for every line of ``f``, long lines cut.

    A line of at most ``limit`` bytes comes whole (offset 0); a longer one comes as several
    pieces of at most ``limit`` bytes, cut after whitespace, with the same line number.
    """
    lineno = 0
    while True:
        chunk = f.readline(limit)
        if not chunk:
            return
        lineno += 1
        offset = 0
        while len(chunk) >= limit and not chunk.endswith(b"\n"):
            cut = _cut(chunk)
            yield lineno, chunk[:cut], offset
            offset += cut
            rest = chunk[cut:]
            more = f.readline(limit - len(rest))
            chunk = rest + more
            if not more:
                break
        if chunk:
            yield lineno, chunk, offset


def texts_of(raw: bytes, lineno: int, offset: int, jsonl: bool, field_name: str | None) -> tuple[list[str], int]:
    """The non-blank texts of one raw line (or piece of a line), and how many JSON texts were cut.

    Raises :class:`LineError` for a bad line (the caller names the file).
    """
    if b"\x00" in raw:
        raise LineError(lineno, "NUL byte found, this looks like a binary file, not text")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LineError(lineno, f"invalid UTF-8 at byte {offset + e.start} of the line") from None
    if jsonl or field_name is not None:  # --field makes every input JSON lines
        if not line.strip():
            return [], 0
        key = field_name or "text"
        if offset > 0 or (len(raw) >= MAX_RECORD_BYTES and not raw.endswith(b"\n")):
            raise LineError(lineno, f"JSON line longer than {MAX_RECORD_BYTES >> 20} MiB; biotok parses each "
                            "record whole: split its text over several records")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise LineError(lineno, f"invalid JSON ({e.msg})") from None
        if not isinstance(obj, dict) or key not in obj:
            raise LineError(lineno, f"no field {key!r} in this JSON line")
        value = obj[key]
        if not isinstance(value, str):
            raise LineError(lineno, f"field {key!r} is not a string")
        bad = None if value.isascii() else _SURROGATE.search(value)
        if bad:  # '\\ud800' escapes a half of a UTF-16 pair: no character, no UTF-8 (like invalid UTF-8 in text)
            raise LineError(lineno, f"field {key!r} holds a lone surrogate \\u{ord(bad.group()):04x} at character "
                            f"{bad.start()}: not a Unicode character (a broken UTF-16 escape); fix the JSON")
        # a record is one document: its lines are joined by a space (readers that score or
        # resample documents, such as the probe's bootstrap, must not split a case into paragraphs)
        parts = _cut_text(" ".join(t.strip() for t in value.splitlines() if t.strip()))
        return [p for p in parts if p], int(len(parts) > 1)
    text = line.strip()
    return ([text] if text else []), 0


def _cut_text(text: str, limit: int = MAX_LINE_BYTES) -> list[str]:
    """A JSON text longer than ``limit`` characters, cut after whitespace like raw lines."""
    out = []
    while len(text) > limit:
        head = text[:limit]
        ws = max(head.rfind(c) for c in " \t\r\x0b\x0c")
        cut = ws + 1 if ws >= 0 else limit
        out.append(head[:cut].strip())
        text = text[cut:].lstrip()
    out.append(text)
    return out


def _raw_lines(cf: CorpusFile, whole: bool = False) -> Iterator[tuple[int, bytes, int]]:
    """The pieces of ``cf``'s lines; ``whole``: JSON records, read whole up to :data:`MAX_RECORD_BYTES`."""
    f = _open_binary(cf)
    lineno = 0
    try:
        for lineno, piece, offset in (line_pieces(f, MAX_RECORD_BYTES) if whole else line_pieces(f)):
            yield lineno, piece, offset
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as e:
        raise CorpusError(
            f"{cf.name}: broken compressed stream after line {lineno} ({e})"
        ) from e
    finally:
        if cf.path != STDIN:
            f.close()


def iter_records(
    files: list[CorpusFile], field_name: str | None = None, stats: CorpusStats | None = None
) -> Iterator[str]:
    """Yield the non-blank text lines (or JSON ``field_name`` values) of every file, in order.

    Lines longer than :data:`MAX_LINE_BYTES` come in pieces (cut at whitespace).
    """
    for cf in files:
        kept = 0
        last_cut = 0
        for lineno, raw, offset in _raw_lines(cf, whole=cf.jsonl or field_name is not None):
            try:
                texts, cut = texts_of(raw, lineno, offset, cf.jsonl, field_name)
            except LineError as e:
                raise CorpusError(f"{cf.name}:{e.lineno}: {e.detail}") from None
            if stats is not None:
                stats.split_lines += cut
                if offset > 0 and last_cut != lineno:
                    stats.split_lines += 1
                    last_cut = lineno
            for text in texts:
                kept += 1
                if stats is not None:
                    stats.lines += 1
                    stats.characters += len(text)
                    stats.words += len(text.split())
                yield text
        if stats is not None:
            stats.files.append(_describe(cf, kept))


# Characters per encode_batch call (compare, prepare): the encodings of a batch take hundreds of
# bytes per token, so a batch is bounded in characters as well as in lines.
BATCH_CHARS = 1 << 20


def batches(lines: Iterable[str], max_lines: int, max_chars: int = BATCH_CHARS) -> Iterator[list[str]]:
    """Consecutive lists of at most ``max_lines`` lines and about ``max_chars`` characters."""
    batch: list[str] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line)
        if len(batch) >= max_lines or size >= max_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def iter_lines(
    paths: Iterable[str | os.PathLike[str]],
    field_name: str | None = None,
    stats: CorpusStats | None = None,
) -> Iterator[str]:
    """Stream the text lines of a corpus given as paths, dirs or '-' (see :func:`resolve`)."""
    return iter_records(resolve(paths), field_name, stats)


def _describe(cf: CorpusFile, kept: int) -> dict:
    if cf.path == STDIN:
        return {"path": STDIN, "bytes": None, "sha256": None, "lines": kept}
    return {
        "path": cf.path,
        "bytes": os.path.getsize(cf.path),
        "sha256": sha256_file(cf.path),
        "lines": kept,
    }


def total_bytes(files: list[CorpusFile]) -> int | None:
    """Size on disk of all files, for progress bars; None when stdin is among them."""
    if any(cf.path == STDIN for cf in files):
        return None
    return sum(os.path.getsize(cf.path) for cf in files)
