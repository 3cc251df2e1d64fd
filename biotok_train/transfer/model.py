"""Load the model and both tokenizers, plan, rebuild: :func:`transfer` (in memory)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from biotok.errors import BiotokError, ConfigError
from biotok.io import sha256_file, versions
from biotok.tokenizer import BiotokTokenizer
from biotok_train.config import TransferConfig
from biotok_train.hf_models import is_bare_encoder
from biotok_train.transfer.common import FORMAT, SUPPORTED, TransferError, TransferResult
from biotok_train.transfer.embeddings import random_rows, rebuild, set_config_ids, shift_positions
from biotok_train.transfer.fvt import plan_transfer

log = logging.getLogger("biotok_train.transfer")


def _read_config(model_dir: Path) -> dict:
    """config.json, checked by the one model check (:func:`biotok_train.hf_models.model_config`)."""
    from biotok_train.hf_models import model_config  # lazy: hf_models imports transformers helpers

    if not model_dir.is_dir():
        raise TransferError(f"model directory not found: {model_dir}")
    if not (model_dir / "config.json").is_file():
        raise TransferError(f"{model_dir} is not a Hugging Face model directory (no config.json)")
    return model_config(model_dir)


def _model_class(model_dir: Path, cfg: dict, *, generator: bool = False):
    """The transformers class to load: the saved architecture when it has an MLM head."""
    import transformers

    mtype = cfg.get("model_type")
    archs = cfg.get("architectures") or []
    if mtype not in SUPPORTED:
        raise TransferError(
            f"{model_dir}: unsupported architecture {mtype or 'unknown'!r} "
            f"({', '.join(archs) or 'no architectures listed'}); supported: {', '.join(SUPPORTED)}"
        )
    name = archs[0] if archs else None
    if name is None:
        return transformers.AutoModelForMaskedLM, False
    if is_bare_encoder(cfg):  # BertModel, RobertaModel, ...: a new MLM head (load_masked_lm)
        return None, False
    cls = getattr(transformers, name, None)
    if cls is None:
        raise TransferError(f"{model_dir}: unknown architecture class {name!r} in config.json")
    if name == "ElectraForPreTraining" and not generator:
        if not (model_dir / "generator" / "config.json").is_file():
            raise TransferError(
                f"{model_dir} holds an ELECTRA discriminator without a generator/ folder: it has no "
                "masked-LM head to transfer (give the run directory with generator/, or an ElectraForMaskedLM)"
            )
        return cls, True
    if not (name.endswith("ForMaskedLM") or name.endswith("ForPreTraining")):
        raise TransferError(
            f"{model_dir} has no masked-LM head (architecture {name}): transfer needs a "
            "...ForMaskedLM or ...ForPreTraining checkpoint"
        )
    return cls, False


def _load_model(cls, path: Path):
    from biotok_train.hf_models import load_masked_lm, load_model

    try:
        if cls is None:
            return load_masked_lm(path)
        return load_model(path, cls.__name__, "a masked LM from")
    except BiotokError as e:  # already names the model and what is wrong with it
        raise TransferError(str(e)) from None
    except (OSError, ValueError, RuntimeError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise TransferError(f"cannot load the model in {path}: {first}") from None


def _weight_files(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_file() and (p.suffix in (".safetensors", ".bin")))


def check_specials(tok: BiotokTokenizer, what: str) -> None:
    """Raise ConfigError when ``tok`` lacks a special token a masked LM needs."""
    missing = [r for r in ("pad", "cls", "sep", "mask") if tok.special_id(r) is None]
    if missing:
        raise ConfigError(
            f"{what} tokenizer {tok.name} has no {'/'.join(missing)} token: a masked-LM needs "
            "[CLS]/<s>, [SEP]/</s>, [MASK]/<mask> and [PAD]/<pad>"
        )


def _load_tokenizer(spec, what: str, *, model_dir: bool = False) -> BiotokTokenizer:
    """A tokenizer biotok loads (a model directory: also what ``AutoTokenizer`` loads)."""
    from biotok.formats import load
    from biotok_train.hf_models import load_model_tokenizer

    if isinstance(spec, BiotokTokenizer):
        return spec
    try:
        return load_model_tokenizer(spec) if model_dir else load(spec)
    except BiotokError as e:
        raise type(e)(f"{what} tokenizer: {e}") from None


def transfer(
    model_dir: str | os.PathLike[str],
    new_tokenizer: str | os.PathLike[str] | BiotokTokenizer,
    config: TransferConfig = TransferConfig(),
) -> TransferResult:
    """Load the masked-LM in ``model_dir`` and its tokenizer; return it with ``new_tokenizer``'s vocabulary.

    A bare encoder (``BertModel``, a sentence-transformers folder) gets a new masked-LM head first
    (:func:`biotok_train.hf_models.load_masked_lm`)."""
    from biotok_train.hf_models import check_model, encoder_dir  # lazy: transformers helpers

    model_dir = Path(model_dir)
    if model_dir.is_dir():
        model_dir = encoder_dir(model_dir)
    cfg = _read_config(model_dir)
    cls, electra_pair = _model_class(model_dir, cfg)
    old = _load_tokenizer(model_dir, f"MODEL ({model_dir})", model_dir=True)
    new = _load_tokenizer(new_tokenizer, "NEW")
    check_specials(new, "NEW")
    plan = plan_transfer(old, new, config.method)

    model = _load_model(cls, model_dir)
    check_model(model, old, model_dir)
    generator = None
    if electra_pair:
        gen_cfg = _read_config(model_dir / "generator")
        gen_cls, _ = _model_class(model_dir / "generator", gen_cfg, generator=True)
        generator = _load_model(gen_cls, model_dir / "generator")
    _rebuild_models((model, generator), plan, old, new, config.seed)
    log.info("transfer %s -> %s (%s): %s", old.name, new.name, config.method, plan.counts)
    provenance = _provenance(model_dir, cfg, model, generator, old, new, config, plan.counts)
    return TransferResult(model=model, generator=generator, tokenizer=new, old_tokenizer=old,
                          config=config, plan=plan, provenance=provenance)


def _rebuild_models(models, plan, old: BiotokTokenizer, new: BiotokTokenizer, seed: int) -> None:
    """Rebuild each model (the MLM, the ELECTRA generator); models of one width and initializer
    share the same random rows."""
    n_random = plan.count("random")
    first = None
    for m in models:
        if m is None:
            continue
        dim = m.get_input_embeddings().weight.shape[1]
        std = float(getattr(m.config, "initializer_range", 0.02))
        if first is None or first[0] != dim or first[1] != std:
            first = (dim, std, random_rows(n_random, dim, std, seed))
        rebuild(m, plan, new.vocab_size, first[2], old.vocab_size)
        shift_positions(m, m.config.pad_token_id, new.pad_id)  # config still holds the old ids
        set_config_ids(m, new)


def _provenance(model_dir: Path, cfg: dict, model, generator, old: BiotokTokenizer, new: BiotokTokenizer,
                config: TransferConfig, counts: dict) -> dict:
    """transfer.json: method, seed, counts, the model's weights sha256, both tokenizers, versions."""
    return {
        "format": FORMAT,
        "method": config.method,
        "seed": config.seed,
        "counts": counts,
        "vocab_size": {"old": old.vocab_size, "new": new.vocab_size},
        "model": {
            "path": str(model_dir),
            "model_type": cfg.get("model_type"),
            "architecture": type(model).__name__,
            "generator": type(generator).__name__ if generator is not None else None,
            "weights_sha256": {
                str(p.relative_to(model_dir)): sha256_file(p)
                for d in ([model_dir] + ([model_dir / "generator"] if generator is not None else []))
                for p in _weight_files(d)
            },
        },
        "old_tokenizer": {"name": old.name, "source": old.source, "fingerprint": old.fingerprint, "marker": old.marker},
        "new_tokenizer": {"name": new.name, "source": new.source, "fingerprint": new.fingerprint, "marker": new.marker},
        "versions": _versions(),
    }


def _versions() -> dict[str, str]:
    return versions(("biotok", "torch", "transformers", "tokenizers", "python"))
