"""``load``: one entry point for every tokenizer format a biomedical NLP user meets.

Formats, one module each: a biotok artifact or HF tokenizer directory and a bare
``tokenizer.json[.gz]`` (:mod:`~biotok.formats.hf`), a SentencePiece ``.model``, Unigram or BPE
(:mod:`~biotok.formats.sentencepiece`), a WordPiece ``vocab.txt``
(:mod:`~biotok.formats.wordpiece`), a BPE ``vocab.json`` + ``merges.txt``, FlauBERT ``</w>`` or
GPT-2 ``Ġ`` byte-level (:mod:`~biotok.formats.bpe`), and aliases / Hub ids
(:mod:`~biotok.formats.hub`). Each is rebuilt as a ``tokenizers.Tokenizer`` that segments like
the original library, wrapped in :class:`~biotok.tokenizer.BiotokTokenizer`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from biotok.errors import TokenizerLoadError
from biotok.formats import hub
from biotok.formats.bpe import is_flat_vocab, load_bpe
from biotok.formats.hf import check_ids, load_hf, transformer_folder
from biotok.formats.sentencepiece import SPM_NAMES, load_spm
from biotok.formats.wordpiece import load_wordpiece
from biotok.tokenizer import BiotokTokenizer

_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_FILE_SUFFIXES = (".json", ".gz", ".model", ".txt")
_GENERIC_STEMS = ("tokenizer", "vocab", "merges", "spm", "sentencepiece", "spiece")


def load(
    name_or_path: str | os.PathLike[str],
    *,
    tokenizers_dir: str | os.PathLike[str] | None = None,
    lowercase: bool | None = None,
    name: str | None = None,
) -> BiotokTokenizer:
    """Load a tokenizer from a path (any supported format) or an alias / Hub id.

    ``lowercase`` overrides what a vocab.txt / vocab.json implies (None: decide from the vocab);
    a saved pipeline (tokenizer.json) is used as saved. ``tokenizers_dir``: local copies of
    aliases (default: :func:`biotok.datadir.tokenizers_dir`).
    """
    raw = str(name_or_path)
    p = Path(raw).expanduser()
    if p.exists():
        return _load_path(p, lowercase=lowercase, name=name)
    if raw.lower() in hub.REGISTRY:
        d = hub.resolve(raw, tokenizers_dir=tokenizers_dir)
        return _load_path(d, lowercase=lowercase, name=name or raw.lower(), source=f"{raw} ({d})")
    looks_like_file = raw.lower().endswith(_FILE_SUFFIXES) or raw.startswith((".", "/", "~"))
    if looks_like_file or (os.sep in raw and not _HUB_ID_RE.match(raw)):
        raise TokenizerLoadError(f"tokenizer file or directory not found: {raw}")
    if _HUB_ID_RE.match(raw):
        d = hub.resolve(raw, tokenizers_dir=tokenizers_dir, repo_id=raw)
        return _load_path(d, lowercase=lowercase, name=name or raw, source=f"{raw} ({d})")
    raise TokenizerLoadError(
        f"unknown tokenizer {raw!r}: not a file, a directory nor a known alias "
        f"({', '.join(hub.known_aliases())})"
    )


def load_many(
    names: Sequence[str | os.PathLike[str]],
    *,
    tokenizers_dir: str | os.PathLike[str] | None = None,
    lowercase: bool | None = None,
) -> list[BiotokTokenizer]:
    """:func:`load` each of ``names``; equal names get '#2', '#3'... so tables stay readable."""
    toks = [load(n, tokenizers_dir=tokenizers_dir, lowercase=lowercase) for n in names]
    seen: dict[str, int] = {}
    for t in toks:  # two paths with the same folder name: keep names distinct in tables
        if t.name in seen:
            seen[t.name] += 1
            t.name = f"{t.name}#{seen[t.name]}"
        else:
            seen[t.name] = 1
    return toks


def _load_path(
    p: Path, *, lowercase: bool | None, name: str | None, source: str | None = None
) -> BiotokTokenizer:
    tok = _load_dir(p, lowercase=lowercase, name=name) if p.is_dir() else _load_file(p, lowercase=lowercase, name=name)
    check_ids(tok, p)
    if source:
        tok.source = source
    return tok


def _load_dir(d: Path, *, lowercase: bool | None, name: str | None) -> BiotokTokenizer:
    """A directory: tokenizer.json wins; else exactly one other format must be present; a
    sentence-transformers folder gives the tokenizer of its Transformer module (0_Transformer/)."""
    sub = transformer_folder(d)
    if sub is not None and sub != d:
        return _load_dir(sub, lowercase=lowercase, name=name or d.name)
    if (d / "tokenizer.json").is_file() or (d / "tokenizer.json.gz").is_file():
        # the complete description wins over partial files (e.g. camembertv2's vocab.txt
        # holds "\n" as a token and cannot be read line by line)
        return load_hf(d, name=name)
    found: list[str] = []
    spm = [d / n for n in SPM_NAMES if (d / n).is_file()]
    if spm:
        found.append(spm[0].name)
    if (d / "vocab.json").is_file() and (d / "merges.txt").is_file():
        found.append("vocab.json + merges.txt")
    if (d / "vocab.txt").is_file():
        found.append("vocab.txt")
    if not found:
        raise TokenizerLoadError(
            f"{d} holds no tokenizer: expected tokenizer.json, a SentencePiece .model, "
            "vocab.json + merges.txt, or vocab.txt"
        )
    if len(found) > 1 or len(spm) > 1:
        listed = ", ".join(found + [s.name for s in spm[1:]])
        raise TokenizerLoadError(
            f"{d} mixes tokenizer formats ({listed}): pass the file you mean instead of the directory"
        )
    nm = name or d.name
    if spm:
        return load_spm(spm[0], name=nm)
    if found[0].startswith("vocab.json"):
        return load_bpe(d / "vocab.json", d / "merges.txt", lowercase=lowercase, name=nm)
    return load_wordpiece(d / "vocab.txt", lowercase=lowercase, name=nm)


def _load_file(f: Path, *, lowercase: bool | None, name: str | None) -> BiotokTokenizer:
    """A file: the format follows from its name (and, for a .json, whether it is a flat vocab)."""
    fname = f.name.lower()
    generic = fname.split(".")[0] in _GENERIC_STEMS
    stem_name = name or (f.parent.name if generic else f.name.split(".")[0])
    if fname.endswith(".model"):
        return load_spm(f, name=stem_name)
    if fname.endswith((".json", ".json.gz")):
        if fname in ("vocab.json", "vocab.json.gz") or (not fname.startswith("tokenizer") and is_flat_vocab(f)):
            merges = f.with_name("merges.txt")
            if not merges.is_file():
                raise TokenizerLoadError(f"{f} is a BPE vocabulary but {merges} is missing beside it")
            return load_bpe(f, merges, lowercase=lowercase, name=stem_name)
        return load_hf(f, name=stem_name)
    if fname == "merges.txt":
        vocab = f.with_name("vocab.json")
        if not vocab.is_file():
            raise TokenizerLoadError(f"{f} is a BPE merges file but {vocab} is missing beside it")
        return load_bpe(vocab, f, lowercase=lowercase, name=stem_name)
    if fname.endswith(".txt"):
        return load_wordpiece(f, lowercase=lowercase, name=stem_name)
    raise TokenizerLoadError(
        f"{f}: unknown tokenizer format (expected tokenizer.json[.gz], *.model, vocab.txt, "
        "vocab.json + merges.txt, or a directory)"
    )


__all__ = ["load", "load_many", "load_bpe", "load_hf", "load_spm", "load_wordpiece"]
