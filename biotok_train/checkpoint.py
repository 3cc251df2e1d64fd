"""Checkpoints: the model in HF format (safetensors + tokenizer files, loadable without biotok)
and the training state (optimizer, scheduler, RNG, data position) that ``--resume`` restores.

Layout of a run directory::

    config.json, model.safetensors      the model (the discriminator for ELECTRA)
    tokenizer.json, tokenizer_config.json, special_tokens_map.json
    generator/                          ELECTRA only: the generator, same format
    biotok_pretrain.json                run config, tokenizer fingerprint, step
    checkpoint/state.pt                 training state for --resume
    metrics.jsonl                       one JSON object per logged step
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import torch
from torch import nn

STATE = Path("checkpoint") / "state.pt"
RUN_META = "biotok_pretrain.json"


def save_hf_tokenizer(data_tokenizer_dir: Path, out: Path, *, seq_len: int) -> None:
    """Save the data's tokenizer as a ``PreTrainedTokenizerFast`` that frames [CLS] A [SEP] B [SEP]."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer.from_file(str(data_tokenizer_dir / "tokenizer.json"))
    smap = json.loads((data_tokenizer_dir / "special_tokens_map.json").read_text(encoding="utf-8"))
    cls, sep = smap.get("cls_token"), smap.get("sep_token")
    if cls and sep:
        backend.post_processor = TemplateProcessing(
            single=f"{cls} $A {sep}",
            pair=f"{cls} $A {sep} $B:1 {sep}:1",
            special_tokens=[(cls, backend.token_to_id(cls)), (sep, backend.token_to_id(sep))],
        )
    backend.no_truncation()
    backend.no_padding()
    kwargs = {k: v for k, v in smap.items() if k in
              ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token", "bos_token", "eos_token")}
    fast = PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=seq_len,
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"], **kwargs)
    fast.save_pretrained(str(out))


def save_model(module: nn.Module, out: Path) -> None:
    """The main model (and the ELECTRA generator) with ``save_pretrained`` (safetensors)."""
    from transformers.utils import logging as hf_logging

    from biotok_train.models import main_model

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Writing model shards" bar at every checkpoint
    try:
        main_model(module).save_pretrained(str(out))
        if hasattr(module, "generator"):
            module.generator.save_pretrained(str(out / "generator"))
    finally:
        if was:
            hf_logging.enable_progress_bar()


def rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_state(out: Path, state: dict) -> None:
    """Write the training state atomically (a crash while saving keeps the previous one)."""
    path = out / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_state(out: Path, map_location: str | torch.device = "cpu") -> dict | None:
    path = out / STATE
    if not path.is_file():
        return None
    return torch.load(path, map_location=map_location, weights_only=False)


def write_run_meta(out: Path, meta: dict) -> None:
    (out / RUN_META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
