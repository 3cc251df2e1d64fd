"""The saved tokenizer directory: what ``AutoTokenizer.from_pretrained`` loads, plus provenance.

Layout::

    tokenizer.json            the whole tokenizer, biotok's normalizer inside
    tokenizer_config.json     special tokens by role, tokenizer class, max length
    special_tokens_map.json
    spm.model                 (spm-* only) the SentencePiece model, for normalized input
    biotok.json               provenance: versions, config, corpus files + sha256, counts, time

Directories are written to a temporary sibling and renamed into place, so an interrupted run
never leaves a half-written artifact, and an existing one is replaced only with ``force``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from tokenizers import Tokenizer

from biotok.config import SpecialTokens, TrainConfig
from biotok.errors import OutputExistsError

MODEL_MAX_LENGTH = 512


def check_writable(out: str | os.PathLike[str], force: bool) -> Path:
    """Fail early (before any training) when ``out`` exists and ``force`` is not set."""
    p = Path(out)
    if p.exists() and not force:
        raise OutputExistsError(f"{p} already exists; pass --force to replace it")
    if p.exists() and not p.is_dir():
        raise OutputExistsError(f"{p} exists and is not a directory")
    return p


@contextmanager
def atomic_directory(out: str | os.PathLike[str], force: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``out`` to fill; on success it replaces ``out`` in one rename.

    On any error the temporary directory is removed and an existing ``out`` is left untouched.
    """
    dest = check_writable(out, force)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        yield tmp
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def tokenizer_config(specials: SpecialTokens, lowercase: bool) -> dict[str, Any]:
    """tokenizer_config.json: PreTrainedTokenizerFast keeps biotok's normalizer untouched."""
    cfg: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": MODEL_MAX_LENGTH,
        "padding_side": "right",
        "truncation_side": "right",
        "clean_up_tokenization_spaces": False,
        "do_lower_case": lowercase,
        "unk_token": specials.unk,
        "pad_token": specials.pad,
        "cls_token": specials.cls,
        "sep_token": specials.sep,
        "mask_token": specials.mask,
    }
    if specials.bos:
        cfg["bos_token"] = specials.bos
    if specials.eos:
        cfg["eos_token"] = specials.eos
    cfg["model_input_names"] = (
        ["input_ids", "token_type_ids", "attention_mask"]
        if specials.family == "bert"
        else ["input_ids", "attention_mask"]
    )
    return cfg


def special_tokens_map(specials: SpecialTokens) -> dict[str, str]:
    keys = ("unk", "pad", "cls", "sep", "mask", "bos", "eos")
    return {f"{k}_token": v for k in keys if (v := getattr(specials, k)) is not None}


def library_versions() -> dict[str, str]:
    import sentencepiece
    import tokenizers

    from biotok import __version__

    return {
        "biotok": __version__,
        "tokenizers": tokenizers.__version__,
        "sentencepiece": sentencepiece.__version__,
        "python": platform.python_version(),
    }


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def write_artifact(
    out: str | os.PathLike[str],
    tokenizer: Tokenizer,
    config: TrainConfig,
    provenance: dict[str, Any],
    extra_files: dict[str, bytes] | None = None,
    force: bool = False,
) -> Path:
    """Write the artifact directory atomically (temp dir + rename) and return its path."""
    with atomic_directory(out, force) as tmp:
        tokenizer.save(str(tmp / "tokenizer.json"), pretty=True)
        specials = config.specials
        (tmp / "tokenizer_config.json").write_text(
            _dump(tokenizer_config(specials, config.normalize.lowercase)), encoding="utf-8"
        )
        (tmp / "special_tokens_map.json").write_text(
            _dump(special_tokens_map(specials)), encoding="utf-8"
        )
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        meta = {
            "format": "biotok-tokenizer/1",
            "versions": library_versions(),
            "config": config.to_dict(),
            **provenance,
        }
        (tmp / "biotok.json").write_text(_dump(meta), encoding="utf-8")
    return Path(out)

