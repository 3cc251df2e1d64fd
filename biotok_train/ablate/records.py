"""An ablation's job records as one archive, to carry pieces of a grid between machines (and a
file of its inputs, compressed and checked, to carry there).

A short GPU slot runs one piece (``run_ablation`` with ``EngineConfig.only``) on a bare machine
and can send back only small files: :func:`export_records` packs OUT/jobs (each record and its
cost, a few kilobytes a job; no model, no prepared data) with a manifest of where and in what
arithmetic they were made; :func:`import_records` merges such archives into another OUT, where a
report is then written from the records alone (``EngineConfig.precision``).
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path, PurePosixPath

from biotok.errors import ConfigError
from biotok.output import atomic_file

MANIFEST = "piece.json"  # inside an archive: where its records were made
PIECES = "pieces.json"  # in OUT: the manifests of every archive merged there
_MEMBER = re.compile(r"jobs/[\w.+=/-]+\.json")  # a record or its cost; never a path out of jobs/


def export_records(out: str | os.PathLike[str], archive: str | os.PathLike[str], manifest: dict) -> dict:
    """OUT/jobs/**.json (records and costs) and ``manifest`` (plus this machine's arithmetic and the
    number of records) as a ``.tar.xz`` at ``archive``, written atomically. Returns the manifest."""
    from biotok_train.ablate.keys import precision_key  # lazy: torch

    out, jobs = Path(out), Path(out) / "jobs"
    files = sorted(p for p in jobs.rglob("*.json")) if jobs.is_dir() else []
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


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner, no time: the same records make the same archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def import_records(archive: str | os.PathLike[str], out: str | os.PathLike[str]) -> dict:
    """Merge the records of ``archive`` into OUT/jobs (a record there is replaced by the archive's)
    and its manifest into OUT/pieces.json. Returns the manifest. A file that is not such an archive,
    or a member outside jobs/: :class:`ConfigError`, nothing written."""
    path, out = Path(archive), Path(out)
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            manifest = json.loads(tar.extractfile(tar.getmember(MANIFEST)).read().decode("utf-8"))
            bad = [m.name for m in members if m.name != MANIFEST and not (m.isfile() and _safe(m.name))]
            if bad or not isinstance(manifest, dict) or "precision" not in manifest:
                raise ConfigError(f"{path} is not an archive of ablation records: "
                                  f"{'it holds ' + bad[0] if bad else 'its piece.json names no precision'}")
            files = {m.name: tar.extractfile(m).read() for m in members if m.name != MANIFEST}
    except (OSError, tarfile.TarError, KeyError, EOFError, ValueError, AttributeError) as e:
        reason = "not found" if isinstance(e, FileNotFoundError) else " ".join(str(e).split()) or type(e).__name__
        raise ConfigError(f"{path} is not an archive of ablation records ({reason})") from None
    for name, data in sorted(files.items()):
        dest = out / PurePosixPath(name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(dest, force=True) as tmp:
            tmp.write_bytes(data)
    merged = read_pieces(out)
    merged = [m for m in merged if m != manifest] + [manifest]
    with atomic_file(out / PIECES, force=True) as tmp:
        tmp.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _safe(name: str) -> bool:
    return _MEMBER.fullmatch(name) is not None and ".." not in PurePosixPath(name).parts


def read_pieces(out: str | os.PathLike[str]) -> list[dict]:
    """The manifests merged into OUT (an empty list before any)."""
    try:
        merged = json.loads((Path(out) / PIECES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return merged if isinstance(merged, list) else []


def pack_file(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> str:
    """``src`` xz-compressed into ``dest`` (atomically); returns its sha256, for :func:`unpack_file`."""
    import hashlib
    import lzma

    sha = hashlib.sha256()
    with open(src, "rb") as f, atomic_file(Path(dest), force=True) as tmp, lzma.open(tmp, "wb", preset=6) as z:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
            z.write(block)
    return sha.hexdigest()


def unpack_file(src: str | os.PathLike[str], dest: str | os.PathLike[str], sha256: str) -> None:
    """:func:`pack_file`'s ``src`` back into ``dest``, refused (nothing written) unless it gives ``sha256``."""
    import hashlib
    import lzma

    sha = hashlib.sha256()
    with lzma.open(src, "rb") as z, atomic_file(Path(dest), force=True) as tmp:
        with open(tmp, "wb") as f:
            for block in iter(lambda: z.read(1 << 20), b""):
                sha.update(block)
                f.write(block)
        if sha.hexdigest() != sha256:
            raise ConfigError(f"{src} does not give the file that was packed (sha256 {sha.hexdigest()[:12]}, not "
                              f"{sha256[:12]}): pack it again")


def recorded_precision(out: str | os.PathLike[str]) -> str | None:
    """The one arithmetic the pieces merged into OUT were made in (None: no piece merged); pieces
    made in several: :class:`ConfigError` (their records cannot make one report)."""
    found = sorted({m.get("precision") for m in read_pieces(out)} - {None})
    if len(found) > 1:
        raise ConfigError(f"the pieces merged into {out} were made in {' and '.join(found)}: one report needs one "
                          f"arithmetic (see {Path(out) / PIECES})")
    return found[0] if found else None


__all__ = ["MANIFEST", "PIECES", "export_records", "import_records", "pack_file", "read_pieces", "recorded_precision",
           "unpack_file"]
