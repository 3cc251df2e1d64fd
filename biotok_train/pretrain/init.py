"""Continual pretraining: the training module built from a Hugging Face checkpoint (``--init-from``).

``mlm --init-from DIR`` continues a masked-LM (BERT, RoBERTa/CamemBERT/XLM-R, ALBERT, DeBERTa-v2/v3
with its ``cls`` head) instead of a fresh config; a bare encoder (``BertModel``, ``RobertaModel``,
a sentence-transformers folder) gets a new masked-LM head
(:func:`biotok_train.hf_models.load_masked_lm`); ``electra --init-from DIR`` continues an ELECTRA
discriminator and its ``generator/`` (as biotok's ELECTRA runs and ``biotok-train transfer`` save
them). The data must
be prepared with the model's own tokenizer: their *segmentation fingerprints* must be equal --
the sha256 of what decides the token ids (normalizer, pre-tokenizer, model, added tokens). The
post-processor, padding and truncation are left out: prepare never uses them, and a run or
transfer directory frames sequences with its own post-processor.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from biotok.errors import ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok_train.errors import TokenizerMismatchError

#: model_type -> the training module's family (see MLMModule)
MLM_TYPES = {"bert": "bert", "deberta-v2": "bert", "roberta": "roberta", "camembert": "roberta",
             "xlm-roberta": "roberta", "albert": "albert"}
_SEGMENTATION_KEYS = ("normalizer", "pre_tokenizer", "model", "added_tokens")


def segmentation_fingerprint(tok: BiotokTokenizer) -> str:
    """sha256 of the parts of a tokenizer that decide the ids of a text (not its framing)."""
    spec = json.loads(tok.backend.to_str())
    part = {k: spec.get(k) for k in _SEGMENTATION_KEYS}
    return hashlib.sha256(json.dumps(part, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _read_config(model_dir: Path) -> dict:
    f = model_dir / "config.json"
    if not f.is_file():
        raise ConfigError(f"--init-from {model_dir}: not a Hugging Face model directory (no config.json)")
    try:
        return json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"--init-from {f}: not valid JSON ({e})") from None


def check_init_from(model_dir: str | os.PathLike[str], data_tokenizer: BiotokTokenizer, objective: str) -> dict:
    """Check that ``model_dir`` can continue on data of ``data_tokenizer``; return its config.json.

    Raises ConfigError (no model, wrong objective) or TokenizerMismatchError (another tokenizer).
    """
    from biotok_train.hf_models import check_weights, encoder_dir, load_model_tokenizer

    d = Path(model_dir)
    if not d.is_dir():
        raise ConfigError(f"--init-from {d}: model directory not found")
    d = encoder_dir(d)  # a sentence-transformers layout: its transformer folder
    cfg = _read_config(d)
    mtype = cfg.get("model_type")
    if objective == "electra":
        if mtype != "electra":
            raise ConfigError(f"--init-from {d} is a {mtype or 'unknown'} model: `electra` continues an ELECTRA "
                              "discriminator + generator/ (use `mlm` for BERT, RoBERTa, ALBERT)")
        if not (d / "generator" / "config.json").is_file():
            raise ConfigError(f"--init-from {d}: an ELECTRA checkpoint needs its generator in {d}/generator "
                              "(as biotok's electra runs and transfer save it)")
    elif mtype not in MLM_TYPES:
        raise ConfigError(f"--init-from {d}: `mlm` continues {', '.join(sorted(MLM_TYPES))} models, "
                          f"not {mtype or 'an unknown model_type'!r}")
    model_tok = load_model_tokenizer(d)
    want, got = segmentation_fingerprint(data_tokenizer), segmentation_fingerprint(model_tok)
    if want != got:
        raise TokenizerMismatchError(
            f"the data was prepared with tokenizer {data_tokenizer.name!r} (sha256 {want[:12]}), not with the "
            f"tokenizer of --init-from {d} (sha256 {got[:12]}): prepare the data with --tokenizer {d}"
        )
    n = int(cfg.get("vocab_size", 0))
    if n < data_tokenizer.vocab_size:
        raise ConfigError(f"--init-from {d} has {n} vocabulary rows, the data's tokenizer {data_tokenizer.vocab_size}")
    if objective != "electra":  # weights that config.json does not describe: said now, not after the setup
        check_weights(d, "AlbertForPreTraining" if MLM_TYPES[mtype] == "albert" else "AutoModelForMaskedLM")
    return cfg


def _usable_positions(cfg: dict) -> int:
    n = int(cfg.get("max_position_embeddings", 512))
    if MLM_TYPES.get(cfg.get("model_type")) == "roberta":  # positions start after the padding id
        n -= int(cfg.get("pad_token_id") or 0) + 1
    return n


def build_from(model_dir: str | os.PathLike[str], objective: str, seq_len: int, *, rtd_weight: float = 50.0):
    """The training module (MLMModule or ElectraModule) with the weights of ``model_dir``."""
    from biotok_train.hf_models import encoder_dir, load_masked_lm, load_model, quiet_transformers
    from biotok_train.pretrain.models import MLMModule

    d = encoder_dir(model_dir)
    cfg = _read_config(d)
    if seq_len > _usable_positions(cfg):
        raise ConfigError(f"--init-from {d} knows {_usable_positions(cfg)} positions; the data has sequences of {seq_len}")
    with quiet_transformers():
        if objective == "electra":
            from biotok_train.pretrain.electra import ElectraModule

            disc = load_model(d, "ElectraForPreTraining", "an ELECTRA discriminator from")
            gen = load_model(d / "generator", "ElectraForMaskedLM", "an ELECTRA generator from")
            module = ElectraModule(disc.config, gen.config, rtd_weight=rtd_weight)
            # the generator first: the shared embeddings end up as the discriminator's
            module.generator.load_state_dict(gen.state_dict())
            module.discriminator.load_state_dict(disc.state_dict())
            return module
    family = MLM_TYPES[cfg["model_type"]]
    model = load_masked_lm(d, "AlbertForPreTraining" if family == "albert" else "AutoModelForMaskedLM")
    return MLMModule(model, family)


__all__ = ["MLM_TYPES", "build_from", "check_init_from", "segmentation_fingerprint"]
