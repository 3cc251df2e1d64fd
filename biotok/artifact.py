"""The saved tokenizer directory: what ``AutoTokenizer.from_pretrained`` loads, plus provenance.

Layout::

    tokenizer.json            the whole tokenizer, biotok's normalizer inside
    tokenizer_config.json     special tokens by role, tokenizer class, max length
    special_tokens_map.json
    spm.model                 (spm-* only) the SentencePiece model, for normalized input
    biotok.json               provenance: versions, config, corpus files + sha256, counts, time

The directory is written by :func:`biotok.output.atomic_directory` (temporary sibling, one
rename), so an interrupted run never leaves a half-written artifact.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from tokenizers import Tokenizer

from biotok.card import current_command, tokenizer_card, write_card
from biotok.config import SpecialTokens, TrainConfig
from biotok.io import versions
from biotok.output import atomic_directory

MODEL_MAX_LENGTH = 512
MARKER = "biotok.json"  # the file that makes a folder a biotok tokenizer artifact


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
    """special_tokens_map.json: the special token of each role the family has."""
    keys = ("unk", "pad", "cls", "sep", "mask", "bos", "eos")
    return {f"{k}_token": v for k in keys if (v := getattr(specials, k)) is not None}


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def write_artifact(
    out: str | os.PathLike[str],
    tokenizer: Tokenizer,
    config: TrainConfig,
    provenance: dict[str, Any],
    extra_files: dict[str, bytes] | None = None,
    force: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
    shown_as: str | None = None,
) -> Path:
    """Write the artifact directory atomically (temp dir + rename) and return its path.

    ``inputs`` (the corpus files) are never replaced, whatever ``force`` says; ``shown_as``: the
    folder's final path when ``out`` is temporary (the card names it).
    """
    with atomic_directory(out, force, inputs=inputs, marker=MARKER) as tmp:
        # the same bytes as tokenizer.save(pretty=True), but a failed write is a Python OSError
        (tmp / "tokenizer.json").write_bytes(tokenizer.to_str(pretty=True).encode("utf-8"))
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
            "versions": versions(),
            "config": config.to_dict(),
            **provenance,
        }
        (tmp / MARKER).write_text(_dump(meta), encoding="utf-8")
        write_card(tmp, tokenizer_card(shown_as or str(out), meta, current_command()))
    return Path(out)

