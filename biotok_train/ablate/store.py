"""Where everything lives in an ablation's OUT (:class:`Layout`, the one place its paths are spelled)
and its results: each job's done record (``OUT/jobs/KEY.json``), its cost
(``KEY.cost.json``) and start marker (``KEY.started``), and the archives that carry records between
machines (:func:`export_records`, :func:`import_records`: a GPU slot sends back only small files).

An archive comes from another machine: it is read as data, never unpacked, by one bounded reader
(:func:`read_archive`: plain ``jobs/**.json`` members and the manifest only, each at most
:data:`MAX_MEMBER`, the expanded stream at most :data:`MAX_EXPANDED`, so a compression bomb is
refused while it is read). Everything is checked before anything is written, and a record is never
replaced by a different one (OUT/pieces.json keeps the archive that brought each record).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, Callable, Iterable, Sequence

from biotok.errors import ConfigError
from biotok.output import atomic_file

log = logging.getLogger(__name__)


MANIFEST = "piece.json"  # inside an archive: where its records were made
PIECES = "pieces.json"  # in OUT: the manifests of every archive merged there (and what each brought)
MAX_MEMBER = 16 << 20  # bytes of one record or cost file (a record is a few kilobytes)
MAX_EXPANDED = 64 << 20  # bytes of the whole archive once decompressed, tar headers included
MAX_MEMBERS = 100_000  # files in one archive (a slot's archive holds a few hundred)
_XZ_MEMLIMIT = 256 << 20  # memory liblzma may take to decode (xz -9 needs 65 MiB)
_BLOCK = 1 << 16
_PART = re.compile(r"[\w.+=-]+")  # one folder or file name of a member under jobs/
_MERGED = "merged"  # in a pieces.json entry: the archive's file name and the sha256 of each record it brought


# --- the layout of OUT --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Every path under an ablation's OUT (see :mod:`biotok_train.ablate`), the one place they are
    spelled: under ``out``, or relative to it (the default: what jobs own and take as arguments)."""

    out: PurePath = PurePosixPath()

    def corpus(self, name: str = "") -> PurePath:
        """corpus/: the split (pretrain.txt, heldout.txt, done)."""
        return self.out / "corpus" / name if name else self.out / "corpus"

    def data(self, vocab: str, heldout: bool = False) -> PurePath:
        """data/VOCAB: the pretraining text prepared with VOCAB (data/VOCAB.heldout: the held-out lines)."""
        return self.out / "data" / (f"{vocab}.heldout" if heldout else vocab)

    def transfer(self, method: str, vocab: str) -> PurePath:
        return self.out / "transfer" / method / vocab

    def extend(self, vocab: str) -> PurePath:
        """extend/VOCAB: the base's tokenizer extended (``biotok extend``), the extend arm's vocabulary."""
        return self.out / "extend" / vocab

    def init(self, vocab: str, p: int) -> PurePath:
        """init/random.VOCAB/pP: the base's architecture with random weights and VOCAB's tokenizer."""
        return self.out / "init" / f"random.{vocab}" / f"p{p}"

    def run(self, size: str, arm: str, p: int, step: int | None = None) -> PurePath:
        """arms/SIZE/ARM/pP: one pretraining seed of an arm (model/, curve/, TASK/fF); with ``step``,
        arms/SIZE/ARM/kK/pP: the curve's fine-tunes of its model after K steps."""
        return self.out / "arms" / size / arm / (f"k{step}" if step is not None else "") / f"p{p}"

    def floor_model(self, size: str, arm: str, p: int) -> PurePath:
        return self.out / "arms" / size / arm / "floor" / f"p{p}" / "model"

    def probe(self) -> PurePath:
        return self.out / "probe"


def data_dir(out: Path, vocab: str, heldout: bool = False) -> Path:
    """OUT/data/VOCAB (:meth:`Layout.data`)."""
    return Path(Layout(Path(out)).data(vocab, heldout))


def snapshot_dir(run_dir: Path, step: int) -> Path:
    """RUN/curve/step-K: a pretraining run's model after K steps (a point of the curve)."""
    return run_dir / "curve" / f"step-{step}"


# --- the records of OUT -------------------------------------------------------------------------------
def record_path(out: str | os.PathLike[str], key: str) -> Path:
    """OUT/jobs/KEY.json: the done record of job ``key`` (a :class:`~biotok_train.ablate.keys.Key`'s string)."""
    return Path(out) / "jobs" / f"{key}.json"


def cost_path(out: str | os.PathLike[str], key: str) -> Path:
    return Path(out) / "jobs" / f"{key}.cost.json"


def write_json(path: Path, obj: Any, indent: int | None = 1) -> None:
    """``obj`` as JSON at ``path``, atomically (temp then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def encode(x):
    """Predictions as JSON: sets become {"__set__": [...]} so that they come back as sets."""
    if isinstance(x, (set, frozenset)):
        return {"__set__": sorted(encode(v) for v in x)}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    return x


def decode(x):
    if isinstance(x, dict) and set(x) == {"__set__"}:
        return set(x["__set__"])
    if isinstance(x, list):
        return [decode(v) for v in x]
    return x


def read_record(out: str | os.PathLike[str], key: str, content: str | None) -> tuple[bool, Any]:
    """(True, result) when ``key``'s record exists, is whole and has ``content`` as its content
    key (None: any); (False, None) otherwise (a damaged record is said once and recomputed)."""
    path = record_path(out, key)
    if not path.is_file():
        return False, None
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        ok = isinstance(rec, dict) and rec.get("key") == key and "result" in rec
    except (OSError, ValueError) as e:
        log.warning("%s is damaged (%s): its job is run again", path, str(e).splitlines()[0])
        return False, None
    if not ok:
        log.warning("%s is not a job record: its job is run again", path)
        return False, None
    return content is None or rec.get("inputs") == content, rec["result"]


def write_record(out: str | os.PathLike[str], key: str, content: str, result: Any, cost: dict) -> None:
    """Job ``key``'s done record (its content key and result), then its cost."""
    write_json(record_path(out, key), {"key": key, "inputs": content, "result": result}, indent=None)
    write_json(cost_path(out, key), cost)


def read_costs(out: str | os.PathLike[str], keys: Iterable[str]) -> dict[str, dict]:
    """The cost record of each job (CPU and wall seconds, device), as written when it ran."""
    rows = {}
    for key in keys:
        try:
            rows[key] = json.loads(cost_path(out, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return rows


def home_records(out: str | os.PathLike[str]) -> dict[str, str]:
    """{job key: content key} of every whole record in OUT/jobs (what a slot machine is told is
    done); a record over :data:`MAX_MEMBER` could not travel, so it is not counted."""
    jobs, found = Path(out) / "jobs", {}
    for p in sorted(jobs.rglob("*.json")) if jobs.is_dir() else []:
        if p.name.endswith(".cost.json"):
            continue
        key = p.relative_to(jobs).as_posix()[: -len(".json")]
        data = _existing(p, key)
        if data is not None:
            found[key] = json.loads(data.decode("utf-8"))["inputs"]
    return found


def start_over_if_stale(out: Path, key: str, owns: Sequence[str], content: str) -> None:
    """Remove what job ``key`` left under OUT (``owns``) when it was started with other inputs (or by
    an unknown run); keep it (a killed job resumes) when its marker holds the same content key."""
    marker = out / "jobs" / f"{key}.started"
    try:
        same = marker.read_text(encoding="utf-8").strip() == content
    except OSError:
        same = False
    if not same:
        for rel in owns:
            p = out / rel
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        marker.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(marker, force=True) as tmp:
            tmp.write_text(content + "\n", encoding="utf-8")


# --- writing an archive ------------------------------------------------------------------------------
def export_records(out: str | os.PathLike[str], archive: str | os.PathLike[str], manifest: dict) -> dict:
    """OUT/jobs/**.json (records and costs) and ``manifest`` (plus this machine's arithmetic and the
    number of records) as a ``.tar.xz`` at ``archive``, written atomically. Returns the manifest.
    Only what :func:`import_records` takes travels: plain files, whole records and their costs (a
    damaged record is a job not done, rerun where it is needed)."""
    from biotok_train.ablate.keys import precision_key  # lazy: torch

    out, jobs = Path(out), Path(out) / "jobs"
    files = _exportable(out, sorted(jobs.rglob("*.json")) if jobs.is_dir() else [])
    manifest = {**manifest, "precision": precision_key(),
                "records": sum(1 for p in files if not p.name.endswith(".cost.json"))}
    data = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")
    with atomic_file(Path(archive), force=True) as tmp, tarfile.open(tmp, "w:xz") as tar:
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for p in files:
            tar.add(p, arcname=p.relative_to(out).as_posix(), recursive=False, filter=_plain)
    return manifest


def _exportable(out: Path, found: list[Path]) -> list[Path]:
    """The records of ``found`` that import_records accepts, each with its cost when that is JSON."""
    records, costs = set(), {}
    for p in found:
        name = p.relative_to(out).as_posix()
        try:
            if p.is_symlink() or not p.is_file() or not _safe_name(name) or p.stat().st_size > MAX_MEMBER:
                continue
            key, is_cost = _key(name)
            obj = json.loads(p.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if is_cost and isinstance(obj, dict):
            costs[key] = p
        elif not is_cost and _is_record(obj, key):
            records.add(key)
    return sorted([out / "jobs" / f"{k}.json" for k in records] + [c for k, c in costs.items() if k in records])


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner, no time: the same records make the same archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


# --- reading an archive as data ----------------------------------------------------------------------
class _Refused(Exception):
    """Why an archive is not one of ablation records (a few words, for the one error line)."""


class _Xz:
    """An xz file decoded a bounded block at a time, with liblzma's memory bounded too."""

    def __init__(self, f) -> None:
        import lzma

        self._lzma, self._f = lzma, f
        self._dec = lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=_XZ_MEMLIMIT)

    def read(self, n: int) -> bytes:
        if n <= 0:
            return b""
        while True:
            if self._dec.eof:  # a second stream may follow (xz allows concatenation)
                rest = self._dec.unused_data or self._f.read(_BLOCK)
                if not rest:
                    return b""
                self._dec = self._lzma.LZMADecompressor(self._lzma.FORMAT_XZ, memlimit=_XZ_MEMLIMIT)
                data = self._dec.decompress(rest, n)
            elif self._dec.needs_input:
                chunk = self._f.read(_BLOCK)
                if not chunk:
                    raise EOFError("the xz stream ends before its end marker: the file is truncated")
                data = self._dec.decompress(chunk, n)
            else:
                data = self._dec.decompress(b"", n)
            if data:
                return data


class _Bounded:
    """A stream that refuses to give more than ``limit`` bytes (the expanded archive's bound)."""

    def __init__(self, raw, limit: int) -> None:
        self._raw, self._left = raw, limit

    def read(self, n: int = -1) -> bytes:
        want = self._left + 1 if n is None or n < 0 else min(n, self._left + 1)
        data = self._raw.read(want)
        self._left -= len(data)
        if self._left < 0:
            raise _Refused(f"it expands past {MAX_EXPANDED >> 20} MiB (a piece's records are kilobytes): "
                           "a compression bomb, or not a piece's archive")
        return data


def _expanded(f):
    """The tar stream inside ``f`` (xz, gzip, bzip2 or none), decoded on demand and bounded."""
    head = f.read(6)
    f.seek(0)
    if head.startswith(b"\xfd7zXZ\x00"):
        raw = _Xz(f)
    elif head.startswith(b"\x1f\x8b"):
        import gzip

        raw = gzip.GzipFile(fileobj=f, mode="rb")
    elif head.startswith(b"BZh"):
        import bz2

        raw = bz2.BZ2File(f)
    else:
        raw = f
    return _Bounded(raw, MAX_EXPANDED)


def _safe_name(name: str) -> bool:
    """``jobs/.../NAME.json``: relative, normalized, made of plain names (no '..', no '.', no '//')."""
    p = PurePosixPath(name)
    plain = all(_PART.fullmatch(x) and x not in (".", "..") and len(x.encode("utf-8", "surrogateescape")) <= 255
                for x in p.parts)
    return (plain and len(name) <= 1024 and p.as_posix() == name and p.parts[0] == "jobs" and len(p.parts) > 1
            and name.endswith(".json"))


def _shown(name: str) -> str:
    """A member's name for the one error line: as it is when printable, else escaped."""
    return name if name.isprintable() else ascii(name)


def _unsafe(m: tarfile.TarInfo) -> str | None:
    """Why member ``m`` may not be read (None: a regular file we read)."""
    data_filter = getattr(tarfile, "data_filter", None)  # Python >= 3.11.4 / 3.12: the 'data' extraction filter
    if data_filter is not None:
        try:
            data_filter(m, "/biotok-records")
        except tarfile.FilterError as e:
            return " ".join(str(e).split())
    if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
        what = ("a symbolic link" if m.issym() else "a hard link" if m.islnk() else "a folder" if m.isdir()
                else "a device" if m.ischr() or m.isblk() else "a FIFO" if m.isfifo() else "not a plain file")
        return f"{what}: an archive of records holds plain files only"
    if m.name != MANIFEST and not _safe_name(m.name):
        return "only jobs/**.json records and piece.json belong in it"
    if m.size > MAX_MEMBER:
        return f"{m.size:,} bytes, over the {MAX_MEMBER >> 20} MiB a record may take"
    return None


def _read_member(tar: tarfile.TarFile, m: tarfile.TarInfo) -> bytes:
    f = tar.extractfile(m)
    parts, seen = [], 0
    while block := f.read(_BLOCK):
        seen += len(block)
        if seen > MAX_MEMBER:
            raise _Refused(f"it holds {m.name}, over the {MAX_MEMBER >> 20} MiB a record may take")
        parts.append(block)
    return b"".join(parts)


def _read_archive(path: Path) -> dict[str, bytes]:
    """Every member of ``path`` by name, read as data within the bounds; :class:`_Refused` or
    the reader's own errors otherwise."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _Refused("it is not a file")
    files: dict[str, bytes] = {}
    with open(path, "rb") as f, tarfile.open(fileobj=_expanded(f), mode="r|") as tar:
        for m in tar:
            if len(files) >= MAX_MEMBERS:
                raise _Refused(f"it holds more than {MAX_MEMBERS:,} files")
            why = _unsafe(m)
            if why is not None:
                raise _Refused(f"it holds {_shown(m.name)} ({why})")
            if m.name in files:
                raise _Refused(f"it holds {m.name} twice")
            files[m.name] = _read_member(tar, m)
    return files


def _key(name: str) -> tuple[str, bool]:
    """The job key of member ``jobs/KEY.json`` or ``jobs/KEY.cost.json``, and whether it is the cost."""
    rel = PurePosixPath(name).relative_to("jobs").as_posix()  # the key string as record_path names it
    return (rel[: -len(".cost.json")], True) if rel.endswith(".cost.json") else (rel[: -len(".json")], False)


def _json(data: bytes, what: str):
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _Refused(f"{what} is not valid JSON ({' '.join(str(e).split())})") from None


def _is_record(obj, key: str) -> bool:
    return isinstance(obj, dict) and obj.get("key") == key and "inputs" in obj and "result" in obj


def _checked(files: dict[str, bytes]) -> tuple[dict, dict[str, bytes], dict[str, bytes]]:
    """The manifest, the records and the costs (by job key) of an archive's members, each checked."""
    if MANIFEST not in files:
        raise _Refused(f"it holds no {MANIFEST}")
    manifest = _json(files[MANIFEST], MANIFEST)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("precision"), str):
        raise _Refused(f"its {MANIFEST} names no precision")
    if _MERGED in manifest:
        raise _Refused(f"its {MANIFEST} holds '{_MERGED}', which only {PIECES} may")
    records, costs = {}, {}
    for name, data in files.items():
        if name == MANIFEST:
            continue
        key, is_cost = _key(name)
        obj = _json(data, name)
        if is_cost:
            if not isinstance(obj, dict):
                raise _Refused(f"{name} is not a cost (a JSON object)")
            costs[key] = data
        elif not isinstance(obj, dict) or obj.get("key") != key:
            raise _Refused(f"{name} is not the record of job {key} (its key is "
                           f"{obj.get('key') if isinstance(obj, dict) else 'missing'})")
        elif not _is_record(obj, key):
            raise _Refused(f"{name} is not a job record (no inputs or result)")
        else:
            records[key] = data
    n = manifest.get("records")
    if type(n) is not int or n != len(records):
        raise _Refused(f"its {MANIFEST} says {n!r} records, it holds {len(records)}")
    return manifest, records, costs


@dataclass(frozen=True)
class Archive:
    """An archive of records, read and checked: its manifest, and each record's and cost's bytes by job key."""

    manifest: dict
    records: dict[str, bytes]
    costs: dict[str, bytes]

    def contents(self) -> dict[str, str]:
        """{job key: content key} of its records."""
        return {k: json.loads(v.decode("utf-8"))["inputs"] for k, v in self.records.items()}

    def results(self) -> dict[str, Any]:
        return {k: json.loads(v.decode("utf-8"))["result"] for k, v in self.records.items()}

    def walls(self) -> dict[str, float]:
        """{job key: wall seconds} of its costs that say them."""
        walls = {k: json.loads(v.decode("utf-8")).get("wall_s") for k, v in self.costs.items()}
        return {k: w for k, w in walls.items() if isinstance(w, (int, float))}


def read_archive(archive: str | os.PathLike[str]) -> Archive:
    """The one reader of an archive from another machine (every path reads it so: a merge, the
    slot estimate): read as data within the bounds, every member checked; anything wrong, an
    oversized member included: :class:`ConfigError` in one line, before anything is written."""
    import lzma
    import zlib

    path = Path(archive)
    head = f"{path} is not an archive of ablation records"
    try:
        return Archive(*_checked(_read_archive(path)))
    except _Refused as e:
        raise ConfigError(f"{head}: {e}") from None
    except (OSError, tarfile.TarError, lzma.LZMAError, zlib.error, EOFError, ValueError) as e:
        reason = "not found" if isinstance(e, FileNotFoundError) else " ".join(str(e).split()) or type(e).__name__
        raise ConfigError(f"{head} ({reason})") from None


# --- merging -----------------------------------------------------------------------------------------
def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entries(out: Path) -> list[dict]:
    try:
        merged = json.loads((out / PIECES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in merged if isinstance(e, dict)] if isinstance(merged, list) else []


def _existing(dest: Path, key: str) -> bytes | None:
    """The record at ``dest`` when it is a whole record of ``key`` (a damaged one is None: replaced)."""
    try:
        if not stat.S_ISREG(os.lstat(dest).st_mode) or os.path.getsize(dest) > MAX_MEMBER:
            return None
        data = dest.read_bytes()
        return data if _is_record(json.loads(data.decode("utf-8")), key) else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _source(entries: list[dict], key: str, sha: str, dest: Path) -> str:
    """Which merged archive brought the record ``sha`` of ``key`` (else: made in OUT itself)."""
    for e in entries:
        m = e.get(_MERGED)
        if isinstance(m, dict) and isinstance(m.get("sha256"), dict) and m["sha256"].get(key) == sha:
            return str(m.get("archive"))
    return f"{dest} (made there, from no merged archive)"


def import_records(archive: str | os.PathLike[str], out: str | os.PathLike[str],
                   select: Callable[[str], bool] | None = None) -> dict:
    """Merge the records of ``archive`` into OUT/jobs and its manifest into OUT/pieces.json (with
    the archive's file name and the sha256 of each record it brought). Returns the manifest.

    ``select``: only the records (and costs) of the job keys it accepts are merged; the whole
    archive is checked all the same. A record already in OUT is kept when equal and refused when
    different (naming the archive it came from); a damaged one is replaced. Merging the same archive
    again changes nothing. Anything wrong: :class:`ConfigError` in one line, and nothing written.
    """
    path, out = Path(archive), Path(out)
    got = read_archive(path)
    manifest, records, costs = got.manifest, got.records, got.costs
    keys = sorted(k for k in records if select is None or select(k))
    entries = _entries(out)
    writes: dict[Path, bytes] = {}
    for key in keys:
        dest = record_path(out, key)
        have = _existing(dest, key)
        if have is not None and have != records[key]:
            raise ConfigError(f"{path.name} and {_source(entries, key, _sha(have), dest)} hold different records of "
                              f"job {key}: nothing merged; keep one (remove {dest} to take {path.name}'s)")
        if have is None:
            writes[dest] = records[key]
        cost = cost_path(out, key)
        if key in costs and (have is None or not os.path.lexists(cost)):
            writes[cost] = costs[key]
    blocked = next((d for d in writes if d.is_dir() or any(
        q.exists() and not q.is_dir() for q in d.parents if q == out or out in q.parents)), None)
    if blocked is not None:
        raise ConfigError(f"cannot merge {path.name} into {out}: a folder or file stands where {blocked} goes; "
                          "nothing merged")
    brought = {k: _sha(records[k]) for k in keys}
    entries, changed = _with_entry(entries, manifest, path.name, brought)
    for dest, data in writes.items():  # all checked: now each file atomically, pieces.json last
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(dest, force=True) as tmp:
            tmp.write_bytes(data)
    if changed:
        write_json(out / PIECES, entries)
    return manifest


def _with_entry(entries: list[dict], manifest: dict, name: str, brought: dict[str, str]) -> tuple[list[dict], bool]:
    """pieces.json's entries with this merge in: the entry of the same manifest and archive name
    gains the records it did not list yet (a manifest merged before this bookkeeping is replaced
    in place); otherwise a new entry at the end. Also whether anything changed."""
    new = {**manifest, _MERGED: {"archive": name, "sha256": dict(sorted(brought.items()))}}
    for i, e in enumerate(entries):
        m = e.get(_MERGED)
        if m is None and e == manifest:
            return entries[:i] + [new] + entries[i + 1:], True
        same = {k: v for k, v in e.items() if k != _MERGED} == manifest
        if isinstance(m, dict) and m.get("archive") == name and same:
            shas = m.get("sha256") if isinstance(m.get("sha256"), dict) else {}
            union = dict(sorted({**shas, **brought}.items()))
            if union == shas:
                return entries, False
            return entries[:i] + [{**manifest, _MERGED: {"archive": name, "sha256": union}}] + entries[i + 1:], True
    return entries + [new], True


def read_pieces(out: str | os.PathLike[str]) -> list[dict]:
    """The manifests merged into OUT, in merge order, each once (an empty list before any)."""
    seen: list[dict] = []
    for e in _entries(Path(out)):
        m = {k: v for k, v in e.items() if k != _MERGED}
        if m not in seen:
            seen.append(m)
    return seen


# --- one big input file, carried compressed ----------------------------------------------------------
def pack_file(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> str:
    """``src`` xz-compressed into ``dest`` (atomically); returns its sha256, for :func:`unpack_file`."""
    import lzma

    sha = hashlib.sha256()
    try:
        f = open(src, "rb")
    except OSError as e:
        raise ConfigError(f"cannot read {src}: {e.strerror or e}") from None
    with f, atomic_file(Path(dest), force=True) as tmp, lzma.open(tmp, "wb", preset=6) as z:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
            z.write(block)
    return sha.hexdigest()


def unpack_file(src: str | os.PathLike[str], dest: str | os.PathLike[str], sha256: str) -> None:
    """:func:`pack_file`'s ``src`` back into ``dest``, refused (nothing written) unless it gives
    ``sha256``; a damaged or truncated ``src`` is one :class:`ConfigError`."""
    import lzma

    sha = hashlib.sha256()
    try:
        with lzma.open(src, "rb") as z, atomic_file(Path(dest), force=True) as tmp:
            with open(tmp, "wb") as f:
                for block in iter(lambda: z.read(1 << 20), b""):
                    sha.update(block)
                    f.write(block)
            if sha.hexdigest() != sha256:
                raise ConfigError(f"{src} does not give the file that was packed (sha256 {sha.hexdigest()[:12]}, "
                                  f"not {sha256[:12]}): pack it again")
    except (lzma.LZMAError, EOFError) as e:
        raise ConfigError(f"{src} is damaged ({' '.join(str(e).split())}): pack it again") from None
    except FileNotFoundError as e:
        if Path(e.filename or "") != Path(src):
            raise
        raise ConfigError(f"cannot read {src}: not found; pack it again") from None


def recorded_precision(out: str | os.PathLike[str]) -> str | None:
    """The one arithmetic the pieces merged into OUT were made in (None: no piece merged); pieces
    made in several: :class:`ConfigError` (their records cannot make one report)."""
    found = sorted({m.get("precision") for m in read_pieces(out)} - {None})
    if len(found) > 1:
        raise ConfigError(f"the pieces merged into {out} were made in {' and '.join(found)}: one report needs one "
                          f"arithmetic (see {Path(out) / PIECES})")
    return found[0] if found else None


__all__ = ["MANIFEST", "MAX_EXPANDED", "MAX_MEMBER", "MAX_MEMBERS", "PIECES", "Archive", "Layout", "cost_path", "data_dir",
           "decode", "encode", "export_records", "home_records", "import_records", "pack_file", "read_archive", "read_costs", "read_json", "read_pieces", "read_record",
           "record_path", "recorded_precision", "snapshot_dir", "start_over_if_stale", "unpack_file", "write_json", "write_record"]
