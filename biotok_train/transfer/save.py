"""Write a transfer: the model (safetensors), its tokenizer (``AutoTokenizer`` loads it without
biotok) and ``transfer.json``, atomically; :func:`transfer_to` = transfer + write."""

from __future__ import annotations

import json
import os
from pathlib import Path

from biotok.output import atomic_directory, check_writable
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import TransferConfig
from biotok_train.cards import write_transfer_card
from biotok_train.transfer.common import MARKER, TransferResult
from biotok_train.transfer.model import transfer


def _max_length(model) -> int:
    cfg = model.config
    n = int(getattr(cfg, "max_position_embeddings", 512))
    base = getattr(model, model.base_model_prefix, model)
    emb = getattr(base, "embeddings", None)
    if emb is not None and hasattr(emb, "create_position_ids_from_input_ids") and cfg.pad_token_id is not None:
        n -= int(cfg.pad_token_id) + 1
    return n


def _inputs(result: TransferResult) -> list[str]:
    return [p for p in (result.provenance.get("model", {}).get("path"), result.tokenizer.source,
                        result.old_tokenizer.source) if p and Path(p).exists()]


def write_transfer(result: TransferResult, out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Save the transferred model (safetensors), its tokenizer and ``transfer.json`` atomically.

    ``force`` replaces an earlier transfer output (a folder holding transfer.json), never an input.
    """
    from biotok_train.hf_models import fast_tokenizer, quiet_transformers

    out = Path(out)
    with quiet_transformers(), atomic_directory(out, force=force, inputs=_inputs(result), marker=MARKER) as tmp:
        result.model.save_pretrained(str(tmp))
        if result.generator is not None:
            result.generator.save_pretrained(str(tmp / "generator"))
        fast = fast_tokenizer(result.tokenizer,
                              type_vocab_size=int(getattr(result.model.config, "type_vocab_size", 2)),
                              model_max_length=_max_length(result.model))
        fast.save_pretrained(str(tmp))
        (tmp / MARKER).write_text(
            json.dumps(result.provenance, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        write_transfer_card(tmp, result.provenance, str(out))  # README.md (biotok_train.cards)
    return out


def transfer_to(
    model_dir: str | os.PathLike[str],
    new_tokenizer: str | os.PathLike[str] | BiotokTokenizer,
    out: str | os.PathLike[str],
    config: TransferConfig = TransferConfig(),
    *,
    force: bool = False,
) -> TransferResult:
    """``transfer`` then ``write_transfer``; refuses an existing ``out`` before any work."""
    inputs = [str(model_dir)] + ([str(new_tokenizer)] if not isinstance(new_tokenizer, BiotokTokenizer) else [])
    check_writable(out, force, [p for p in inputs if Path(p).exists()], MARKER)
    result = transfer(model_dir, new_tokenizer, config)
    write_transfer(result, out, force=force)
    return result
